package export_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/schemas/export"
)

// schemaOf is a kind's JSON Schema, decoded.
func schemaOf(t *testing.T, name string) map[string]any {
	t.Helper()
	kinds, err := catalog.LookupKind(name)
	require.NoError(t, err)
	require.Len(t, kinds, 1)
	set, err := catalog.Build(kinds...)
	require.NoError(t, err)
	b, err := set.JSONSchema(kinds[0])
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	return doc
}

// at follows a path of keys through decoded JSON; "#def" steps into $defs.
func at(t *testing.T, v any, path ...string) any {
	t.Helper()
	for i, key := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok, "%s is not an object", strings.Join(path[:i], "/"))
		if name, ok := strings.CutPrefix(key, "#"); ok {
			m, ok = m["$defs"].(map[string]any)
			require.True(t, ok, "no $defs")
			key = name
		}
		v, ok = m[key]
		require.True(t, ok, "no %s in %s", key, strings.Join(path[:i], "/"))
	}
	return v
}

// nonNull is the arm of a nullable field's anyOf that is not null.
func nonNull(t *testing.T, field any) map[string]any {
	t.Helper()
	arms := at(t, field, "anyOf").([]any)
	require.Len(t, arms, 2)
	assert.Equal(t, map[string]any{"type": "null"}, arms[0])
	return arms[1].(map[string]any)
}

func TestClosedWhereCUEIsClosed(t *testing.T) {
	doc := schemaOf(t, "kubeflow.org/v2beta1/MPIJob")
	assert.Equal(t, false, at(t, doc, "additionalProperties"), "a typo at the top is an error")
	assert.Equal(t, false, at(t, doc, "#org.kubeflow.v2beta1.MPIJobSpec", "additionalProperties"))
	podSpec := at(t, doc, "#org.kubeflow.v2beta1.MPIJobSpec", "properties", "mpiReplicaSpecs", "properties",
		"Launcher", "properties", "template", "properties", "spec")
	assert.Equal(t, false, at(t, podSpec, "additionalProperties"), "the pod template refined by the job kind stays closed")
	assert.Contains(t, at(t, podSpec, "properties"), "nodeSelector", "and keeps every field of Kubernetes' pod spec")
	assert.Equal(t, false, at(t, doc, "#io.k8s.api.core.v1.Volume", "additionalProperties"))

	status := at(t, doc, "properties", "status")
	assert.Equal(t, map[string]any{"type": []any{"object", "null"}}, status, "status is open ({...})")
	labels := at(t, doc, "properties", "metadata", "properties", "labels")
	assert.Equal(t, map[string]any{"type": "string"}, at(t, labels, "additionalProperties"), "[string]: string")
}

func TestTypesDefaultsEnumsAndDocs(t *testing.T) {
	doc := schemaOf(t, "kubeflow.org/v2beta1/MPIJob")
	spec := at(t, doc, "#org.kubeflow.v2beta1.MPIJobSpec", "properties")

	slots := at(t, spec, "slotsPerWorker").(map[string]any)
	assert.Equal(t, []any{"integer", "null"}, slots["type"])
	assert.Equal(t, "int32", slots["format"])
	assert.Equal(t, 0.0, slots["minimum"], "int32 & >=0")
	assert.Equal(t, 1.0, slots["default"], "*1")
	assert.Equal(t, "Slots (processes) each worker offers in the hostfile.", slots["description"], "from the CUE comment")

	path := at(t, spec, "sshAuthMountPath").(map[string]any)
	assert.Equal(t, "/root/.ssh", path["default"])
	assert.Equal(t, map[string]any{
		"type":    "string",
		"pattern": "^/",
		"not":     map[string]any{"pattern": "^/*(etc/*(mpi(/.*)?)?)?$"}, // !~
	}, nonNull(t, path), "null or a path: not would refuse null")

	policy := at(t, spec, "launcherCreationPolicy").(map[string]any)
	assert.Equal(t, []any{"AtStartup", "WaitForWorkersReady", nil}, policy["enum"])
	assert.Equal(t, "AtStartup", policy["default"])

	worker := at(t, spec, "mpiReplicaSpecs", "properties", "Worker", "properties", "replicas").(map[string]any)
	assert.Equal(t, 1.0, worker["minimum"])
	assert.Equal(t, 100000.0, worker["maximum"], "the bounds survive beside the error() that words them")
	launcher := at(t, spec, "mpiReplicaSpecs", "properties", "Launcher", "properties", "replicas")
	assert.Equal(t, []any{1.0, nil}, at(t, launcher, "enum"))

	restart := at(t, spec, "mpiReplicaSpecs", "properties", "Worker", "properties", "restartPolicy")
	assert.Equal(t, []any{"Never", "OnFailure", nil}, at(t, restart, "enum"))
	assert.Equal(t, "Never", at(t, restart, "default"))

	assert.Equal(t, map[string]any{"oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}},
		at(t, doc, "#io.k8s.apimachinery.pkg.util.intstr.IntOrString"))
	assert.Equal(t, map[string]any{"type": "string", "format": "date-time"}, at(t, doc, "#io.k8s.apimachinery.pkg.apis.meta.v1.Time"))
	assert.Contains(t, at(t, doc, "description"), "mpi-operator's kubeflow.org/v2beta1 API")
}

func TestDisjunctionsDropTheirErrorArms(t *testing.T) {
	doc := schemaOf(t, "kubeflow.org/v1/PyTorchJob")
	restart := at(t, doc, "#org.kubeflow.v1.PyTorchJobSpec", "properties", "pytorchReplicaSpecs", "properties",
		"Worker", "properties", "restartPolicy")
	assert.Equal(t, []any{"OnFailure", "Never", "ExitCode", nil}, at(t, restart, "enum"), `"Always" & error(...) is no choice`)

	nproc := at(t, doc, "#org.kubeflow.v1.PyTorchJobSpec", "properties", "nprocPerNode").(map[string]any)
	assert.Equal(t, "auto", nproc["default"])
	assert.Equal(t, map[string]any{
		"type": "string",
		"anyOf": []any{
			map[string]any{"enum": []any{"auto", "cpu", "gpu"}},
			map[string]any{"type": "string", "pattern": "^[1-9][0-9]{0,3}$"},
		},
	}, nonNull(t, nproc), "the constants of a disjunction make one enum")
}

func TestRequiredFields(t *testing.T) {
	doc := schemaOf(t, "kubeflow.org/v2beta1/MPIJob")
	assert.Equal(t, []any{"apiVersion", "kind", "metadata", "spec"}, at(t, doc, "required"))
	assert.Equal(t, []any{"name"}, at(t, doc, "properties", "metadata", "required"))
	assert.Equal(t, []any{"mpiReplicaSpecs"}, at(t, doc, "#org.kubeflow.v2beta1.MPIJobSpec", "required"),
		"fields with defaults are not required")
	worker := at(t, doc, "#org.kubeflow.v2beta1.MPIJobSpec", "properties", "mpiReplicaSpecs", "properties", "Worker")
	assert.Equal(t, []any{"object", "null"}, at(t, worker, "type"), "Worker is optional")
	assert.Equal(t, []any{"replicas", "template"}, at(t, worker, "required"), "but when given, it says how many")

	pytorch := schemaOf(t, "PyTorchJob")
	master := at(t, pytorch, "#org.kubeflow.v1.PyTorchJobSpec", "properties", "pytorchReplicaSpecs", "properties", "Master")
	assert.Equal(t, []any{"template"}, at(t, master, "required"), "replicas defaults to 1")

	dijob := schemaOf(t, "DIJob")
	assert.Equal(t, []any{"template", "type"}, at(t, dijob, "#org.opendilab.diengine.v2alpha1.Task", "required"),
		"a task's name defaults to its type")
}

func TestNullCountsAsUnset(t *testing.T) {
	doc := schemaOf(t, "kubeflow.org/v2beta1/MPIJob")
	meta := at(t, doc, "properties", "metadata", "properties")
	assert.Equal(t, map[string]any{"type": "null"}, at(t, meta, "creationTimestamp", "anyOf").([]any)[0],
		"creationTimestamp: null, as kubectl writes it")
	assert.NotContains(t, at(t, meta, "name", "type"), "null", "a required field is not null")
	assert.Equal(t, map[string]any{"$ref": "#/$defs/org.kubeflow.v2beta1.MPIJobSpec"}, at(t, doc, "properties", "spec"))
}

// Rules that relate fields to each other cannot be said in JSON Schema:
// the export leaves them to trainfn validate and never refuses more.
func TestRulesAcrossFieldsAreLeftOut(t *testing.T) {
	v2 := schemaOf(t, "kubeflow.org/v2beta1/MPIJob")
	name := at(t, v2, "properties", "metadata", "properties", "name").(map[string]any)
	assert.Equal(t, 54.0, name["maxLength"], "the longest a name can be, with a launcher and no more than one worker")

	v1alpha1 := schemaOf(t, "kubeflow.org/v1alpha1/MPIJob")
	name = at(t, v1alpha1, "properties", "metadata", "properties", "name").(map[string]any)
	assert.NotContains(t, name, "maxLength", "the limit depends on the GPU split")
	assert.Equal(t, "^[a-z]([-a-z0-9]*[a-z0-9])?$", name["pattern"])
	assert.Equal(t, []any{"template"}, at(t, v1alpha1, "#org.kubeflow.v1alpha1.MPIJobSpec", "required"))

	dijob := schemaOf(t, "DIJob")
	spec := at(t, dijob, "#org.opendilab.diengine.v2alpha1.DIJobSpec").(map[string]any)
	assert.NotContains(t, spec, "required", "one of template and tasks: trainfn says which")
	assert.Equal(t, 1.0, at(t, spec, "properties", "tasks", "minItems"), "list.MinItems(1)")
}

func TestNoSchemaIsEmptyOrImpossible(t *testing.T) {
	set, err := catalog.Build()
	require.NoError(t, err)
	for _, k := range set.Kinds() {
		b, err := set.JSONSchema(k)
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(b, &doc))
		for name, def := range doc["$defs"].(map[string]any) {
			assert.NotEqual(t, false, def, "%s: %s accepts nothing", k, name)
			assert.NotEmpty(t, def, "%s: %s accepts anything", k, name)
		}
		assertRefsResolve(t, doc, "#/$defs/", doc["$defs"].(map[string]any))
	}
}

func TestOpenAPIIsOpenAPI30(t *testing.T) {
	set, err := catalog.Build()
	require.NoError(t, err)
	b, err := set.OpenAPI("v9.9.9")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "3.0.3", doc["openapi"])
	assert.Equal(t, "v9.9.9", at(t, doc, "info", "version"))
	components := at(t, doc, "components", "schemas").(map[string]any)
	for _, k := range set.Kinds() {
		root, ok := components[export.SchemaName(k)].(map[string]any)
		require.True(t, ok, "%s is in components.schemas", k)
		group, version, _ := strings.Cut(k.APIVersion, "/")
		assert.Equal(t, []any{map[string]any{"group": group, "version": version, "kind": k.Kind}},
			root["x-kubernetes-group-version-kind"])
	}
	assertRefsResolve(t, doc, "#/components/schemas/", components)
	walk(doc, func(path string, node map[string]any) {
		if _, ok := node["$ref"]; ok && !strings.HasSuffix(path, "/properties") {
			assert.Len(t, node, 1, "%s: OpenAPI 3.0 ignores what stands beside a $ref", path)
		}
		if strings.HasSuffix(path, "/properties") {
			return // property names, not keywords
		}
		if typ, ok := node["type"]; ok {
			assert.IsType(t, "", typ, "%s: OpenAPI 3.0 has one type per schema", path)
		}
		for _, key := range []string{"const", "$defs", "if", "prefixItems", "$schema"} {
			assert.NotContains(t, node, key, "%s: not OpenAPI 3.0", path)
		}
	})
	nproc := at(t, components, "org.kubeflow.v1.PyTorchJobSpec", "properties", "nprocPerNode").(map[string]any)
	assert.Equal(t, true, nproc["nullable"])
	assert.Equal(t, true, at(t, components, "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "x-kubernetes-int-or-string"))
}

func TestOutputIsDeterministic(t *testing.T) {
	render := func() (string, string) {
		set, err := catalog.Build()
		require.NoError(t, err)
		js, err := set.JSONSchema(schemas.Kind{APIVersion: "diengine.opendilab.org/v2alpha1", Kind: "DIJob"})
		require.NoError(t, err)
		api, err := set.OpenAPI("v1")
		require.NoError(t, err)
		return string(js), string(api)
	}
	js1, api1 := render()
	js2, api2 := render()
	assert.Equal(t, js1, js2)
	assert.Equal(t, api1, api2)
}

func TestInlineLeavesNoRef(t *testing.T) {
	set, err := catalog.Build(schemas.FunctionConfig)
	require.NoError(t, err)
	root, err := set.Root(schemas.FunctionConfig)
	require.NoError(t, err)
	inlined, err := set.Inline(root)
	require.NoError(t, err)
	b, err := set.Document(inlined)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "$ref")
	assert.NotContains(t, string(b), "$defs")
	assert.Contains(t, string(b), `"KubectlExec"`)
}

func TestFunctionImage(t *testing.T) {
	assert.Equal(t, "ghcr.io/trainfn/trainfn:v1.2.3", export.FunctionImage("v1.2.3"))
	assert.Equal(t, "ghcr.io/trainfn/trainfn:v1.3.0-rc.1", export.FunctionImage("v1.3.0-rc.1"))
	for _, devel := range []string{"(devel)", "dev", "d88297a-dirty", "v1.2.3-dirty", "v1.2.3-4-gabcdef", "v1.2.3-4-gabcdef-dirty",
		"v0.0.0-20260101000000-abcdef123456", "v0.0.0-20260101000000-abcdef123456+dirty"} {
		assert.Equal(t, "ghcr.io/trainfn/trainfn:latest", export.FunctionImage(devel), devel)
	}
}

// assertRefsResolve checks that every $ref names a definition there is.
func assertRefsResolve(t *testing.T, doc map[string]any, prefix string, defs map[string]any) {
	t.Helper()
	walk(doc, func(path string, node map[string]any) {
		ref, ok := node["$ref"].(string)
		if !ok {
			return
		}
		name, ok := strings.CutPrefix(ref, prefix)
		assert.True(t, ok, "%s: %s", path, ref)
		assert.Contains(t, defs, name, "%s: %s", path, ref)
	})
}

func walk(v any, visit func(path string, node map[string]any)) {
	var rec func(path string, v any)
	rec = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			visit(path, x)
			for k, c := range x {
				rec(path+"/"+k, c)
			}
		case []any:
			for _, c := range x {
				rec(path+"/[]", c)
			}
		}
	}
	rec("", v)
}
