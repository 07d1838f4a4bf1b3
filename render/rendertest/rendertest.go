// Package rendertest holds what every renderer promises, whatever document
// its schema accepts, as a fuzz target each renderer package runs: the
// renderers differ, their contract does not.
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
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/gitops"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/testtool"
)

// Renderer renders a validated document of one kind, as the front ends
// call it.
type Renderer func(*schemas.Validated, options.Options) (render.Output, field.ErrorList)

// Fuzz runs renderer on documents of kind, seeded with the golden
// documents of that kind (of every apiVersion, so one version's fields
// meet another's schema). Each document is forced to kind and validated
// first, as the front ends do: a renderer only ever sees what its schema
// accepted, and what it rejects is schemas' own target's business.
//
// Every accepted document renders the same on every run. A render that
// succeeds gives objects that are written and read back as they are, that
// the render digest can stamp, and that Kubernetes' own types decode
// strictly; a render that fails says why for each error, none of them an
// internal error, which would mean the schema let through what the
// renderer cannot read.
func Fuzz(f *testing.F, kind schemas.Kind, renderer Renderer) {
	for _, doc := range testtool.GoldenDocuments(f, kind.Kind) {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, text string) {
		first, accepted := renderText(t, kind, renderer, text)
		if !accepted {
			return
		}
		// Go randomizes map order on every range: a second run from a
		// fresh parse catches output that depends on it.
		again, _ := renderText(t, kind, renderer, text)
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
// document the renderer would see.
func renderText(t *testing.T, kind schemas.Kind, renderer Renderer, text string) (rendered, bool) {
	t.Helper()
	doc, err := yaml.Parse(text)
	if err != nil || doc.YNode().Kind != yaml.MappingNode {
		return rendered{}, false
	}
	if err := doc.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(kind.APIVersion))); err != nil {
		return rendered{}, false
	}
	if err := doc.PipeE(yaml.SetField("kind", yaml.NewStringRNode(kind.Kind))); err != nil {
		return rendered{}, false
	}
	valid, problems := schemas.Validate(doc)
	require.True(t, (valid == nil) != (len(problems) == 0), "a document is either accepted or rejected with problems: %v", problems)
	if valid == nil {
		return rendered{}, false
	}
	opts, errs := options.Default.ForJob(doc.GetAnnotations())
	if len(errs) > 0 {
		requireReasons(t, doc, errs)
		return rendered{}, false
	}

	out, errs := renderer(valid, opts)
	var r rendered
	for _, w := range out.Warnings {
		require.NotEmpty(t, w.Message, "a warning at %s says nothing", w.Field)
		r.Warnings = append(r.Warnings, w.Field.String()+": "+w.Message)
	}
	if len(errs) > 0 {
		requireReasons(t, doc, errs)
		for _, e := range errs {
			r.Errors = append(r.Errors, e.Error())
		}
		return r, true
	}

	require.NotEmpty(t, out.Objects, "a job that renders gives objects")
	require.NoError(t, gitops.Stamp(out.Objects), "the render digest stamps every rendered object")
	r.Objects = requireRoundTrip(t, out.Objects)
	for _, o := range out.Objects {
		requireKubernetesObject(t, o)
	}
	return r, true
}

// requireReasons checks that every error says what is wrong, at a field
// the front ends can place in the document.
func requireReasons(t *testing.T, doc *yaml.RNode, errs field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		require.NotEqual(t, field.ErrorTypeInternal, e.Type, "an accepted document fails inside the renderer: %v", e)
		require.NotEmpty(t, e.ErrorBody(), "an error at %s says nothing", e.Field)
		schemas.Position(doc, e.Field)
	}
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
