// Package rendertest holds what every renderer promises, whatever document
// its schema accepts, as a fuzz target each renderer package runs: the
// renderers differ, their contract does not. The golden cases, which run
// through the front end, are functionstest's.
package rendertest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/testtool"
)

// Fuzz renders documents of kind through the pipeline, seeded with the
// golden documents of that kind (of every apiVersion, so one version's
// fields meet another's schema). Each document is forced to kind first;
// what its schema rejects is schemas' own target's business.
//
// Every accepted document renders the same on every run. A render that
// succeeds gives objects that are written and read back as they are and
// that Kubernetes' own types decode strictly; a render that fails says why
// for each error, none of them an internal error, which would mean the
// schema let through what the kind cannot read.
func Fuzz(f *testing.F, kind schemas.Kind) {
	k, ok := render.Lookup(kind)
	require.True(f, ok, "trainfn does not expand %s", kind)
	for _, doc := range testtool.GoldenDocuments(f, kind.Kind) {
		f.Add(doc)
	}
	// A fuzz worker runs one input at a time.
	validator := schemas.NewValidator()
	f.Fuzz(func(t *testing.T, text string) {
		first, accepted := renderText(t, k, validator, text)
		if !accepted {
			return
		}
		// Go randomizes map order on every range: a second run from a
		// fresh parse catches output that depends on it.
		again, _ := renderText(t, k, validator, text)
		require.Equal(t, first, again, "the same document renders to the same bytes")
	})
}

// rendered is what one render says, comparable across runs.
type rendered struct {
	Objects  string
	Errors   []string
	Warnings []string
}

// renderText renders text as a document of kind; false when it is no
// document of the kind its schema accepts.
func renderText(t *testing.T, kind render.Kind, validator *schemas.Validator, text string) (rendered, bool) {
	t.Helper()
	doc, err := yaml.Parse(text)
	if err != nil || doc.YNode().Kind != yaml.MappingNode {
		return rendered{}, false
	}
	if err := doc.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(kind.APIVersion))); err != nil {
		return rendered{}, false
	}
	if err := doc.PipeE(yaml.SetField("kind", yaml.NewStringRNode(kind.Kind.Kind))); err != nil {
		return rendered{}, false
	}
	valid, problems := validator.Validate(doc, kind.Schema)
	require.True(t, (valid == nil) != (len(problems) == 0), "a document is either accepted or rejected with problems: %v", problems)
	if valid == nil {
		return rendered{}, false
	}

	objects, found := render.Registry{kind}.Render(doc, options.Default, validator)
	var r rendered
	for _, w := range found.Warnings {
		require.NotEmpty(t, w.Message, "a warning at %s says nothing", w.Field)
		r.Warnings = append(r.Warnings, w.Field+": "+w.Message)
	}
	if len(found.Errors) > 0 {
		require.Empty(t, objects, "a job that fails to render gives no object")
		for _, e := range found.Errors {
			require.NotContains(t, e.Message, "Internal error", "an accepted document fails inside the renderer: %s: %s", e.Field, e.Message)
			require.NotEmpty(t, e.Message, "an error at %s says nothing", e.Field)
			r.Errors = append(r.Errors, e.Field+": "+e.Message)
		}
		return r, true
	}

	require.NotEmpty(t, objects, "a job that renders gives objects")
	r.Objects = requireRoundTrip(t, objects)
	for _, o := range objects {
		requireKubernetesObject(t, o)
	}
	return r, true
}

// requireRoundTrip writes objects as one stream and reads them back: each
// is read as it was written. It returns the stream.
func requireRoundTrip(t *testing.T, objects []*yaml.RNode) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, kio.ByteWriter{Writer: &out, KeepReaderAnnotations: true}.Write(objects))
	read, err := (&kio.ByteReader{Reader: bytes.NewReader(out.Bytes()), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err, "the rendered stream reads back:\n%s", out.String())
	require.Len(t, read, len(objects), "every rendered object reads back as one:\n%s", out.String())
	for i, o := range objects {
		require.Equal(t, o.MustString(), read[i].MustString(), "a rendered object reads back as it was written")
	}
	return out.String()
}

// kubernetesTypes are the built-in kinds renderers give, as Go types.
var kubernetesTypes = map[string]func() any{
	"v1 Service":                               func() any { return &corev1.Service{} },
	"v1 ConfigMap":                             func() any { return &corev1.ConfigMap{} },
	"v1 ServiceAccount":                        func() any { return &corev1.ServiceAccount{} },
	"batch/v1 Job":                             func() any { return &batchv1.Job{} },
	"apps/v1 StatefulSet":                      func() any { return &appsv1.StatefulSet{} },
	"rbac.authorization.k8s.io/v1 Role":        func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1 RoleBinding": func() any { return &rbacv1.RoleBinding{} },
	"networking.k8s.io/v1 NetworkPolicy":       func() any { return &networkingv1.NetworkPolicy{} },
}

// requireKubernetesObject checks that an object names its kind and itself
// and, for a built-in kind, has only fields of the right type that
// Kubernetes knows: what the API server's strict field validation asks.
func requireKubernetesObject(t *testing.T, o *yaml.RNode) {
	t.Helper()
	text := o.MustString()
	require.NotEmpty(t, o.GetApiVersion(), "an object without apiVersion:\n%s", text)
	require.NotEmpty(t, o.GetKind(), "an object without kind:\n%s", text)
	require.NotEmpty(t, o.GetName(), "an object without a name:\n%s", text)
	newObject, ok := kubernetesTypes[o.GetApiVersion()+" "+o.GetKind()]
	if !ok {
		return
	}
	require.NoError(t, sigsyaml.UnmarshalStrict([]byte(text), newObject()), "a rendered %s Kubernetes would refuse:\n%s", o.GetKind(), text)
}
