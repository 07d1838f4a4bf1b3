package functions

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/test/testtool"
)

// renderText runs the stream front end on a YAML text.
func renderText(t *testing.T, text string) (string, Diagnostics) {
	t.Helper()
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(text))
	require.NoError(t, err)
	objects, diags := Expand(docs)
	var out bytes.Buffer
	if objects != nil {
		require.NoError(t, WriteDocuments(&out, objects))
	}
	return out.String(), diags
}

func readCase(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(testtool.GoldenInput(t, name))
	require.NoError(t, err)
	return string(b)
}

func TestOutputIsTheSameOnEveryRun(t *testing.T) {
	input := readCase(t, "mixed-stream")
	first, diags := renderText(t, input)
	require.False(t, diags.HasErrors())
	for range 5 {
		again, _ := renderText(t, input)
		require.Equal(t, first, again)
	}
}

func TestOutputIgnoresTheOrderOfDocuments(t *testing.T) {
	var docs []string
	for _, name := range []string{"mixed-stream", "mpi-operator-pi-intel", "run-launcher-as-worker", "metadata-propagation"} {
		for _, d := range strings.Split(readCase(t, name), "\n---\n") {
			if strings.Contains(d, "kind:") {
				docs = append(docs, d)
			}
		}
	}
	want, diags := renderText(t, strings.Join(docs, "\n---\n"))
	require.False(t, diags.HasErrors(), diags.Error())
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		got, _ := renderText(t, strings.Join(docs, "\n---\n"))
		require.Equal(t, want, got)
	}
}

func TestNoKeyMaterialInOutput(t *testing.T) {
	for _, dir := range testtool.GoldenDirs(t) {
		out, _ := renderText(t, readCase(t, testtool.GoldenName(dir)))
		assert.NotContains(t, out, "PRIVATE KEY", dir)
		assert.NotContains(t, out, "kind: Secret", dir)
	}
}

func TestReadDocumentsKeepsFileLines(t *testing.T) {
	text := "# header\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n\n---\n# B\napiVersion: v1\nkind: B\nmetadata:\n  name: b\n"
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(text))
	require.NoError(t, err)
	require.Len(t, docs, 2)
	assert.Equal(t, Source{Path: "<stdin>", Index: 0, Line: 1}, docs[0].Source)
	assert.Equal(t, Source{Path: "<stdin>", Index: 1, Line: 8}, docs[1].Source)
	name, err := docs[1].Node.Pipe(yaml.Lookup("metadata", "name"))
	require.NoError(t, err)
	line, _ := absolute(docs[1].Source, name.YNode().Line, 1)
	assert.Equal(t, 12, line, "lines count from the top of the file")
}

func TestReadDocumentsReportsFileLinesOfBadYAML(t *testing.T) {
	_, err := ReadDocuments([]string{Stdin}, strings.NewReader("a: 1\n---\nb: 2\nc: [\n"))
	require.Error(t, err)
	assert.EqualError(t, err, "<stdin>:4: error: not YAML: did not find expected node content")
}

func TestReadDocumentsFromADirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	write("a/c.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	write("notes.txt", "not yaml: [")
	write(".hidden/d.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n")
	docs, err := ReadDocuments([]string{dir}, nil)
	require.NoError(t, err)
	var names []string
	for _, d := range docs {
		names = append(names, d.Node.GetName())
	}
	assert.Equal(t, []string{"c", "b"}, names, "lexical order of paths, hidden and non-YAML files skipped")
}

// A file that is no YAML hides no other file's problems, nor the other
// documents of its own file: every problem is reported at once, and
// nothing is output.
func TestExpandFilesReportsEveryFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("a.yaml", readCase(t, "error-unknown-fields")+"\n---\nkind: [\n")
	write("b.yaml", readCase(t, "mpi-operator-pi"))
	write("c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 1, a: 2}\n")
	objects, diags, err := ExpandFiles([]string{dir}, nil, Flags{})
	require.NoError(t, err)
	assert.Nil(t, objects)
	report := diags.Error()
	lines := strings.Count(readCase(t, "error-unknown-fields"), "\n") + 3
	assert.Contains(t, report, filepath.Join(dir, "a.yaml")+`:9:3: error: MPIJob typos: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
	assert.Contains(t, report, fmt.Sprintf("%s:%d: error: not YAML: ", filepath.Join(dir, "a.yaml"), lines))
	assert.Contains(t, report, filepath.Join(dir, "c.yaml")+":4:")
	for _, d := range diags {
		if d.Source.Path == filepath.Join(dir, "b.yaml") {
			assert.Equal(t, Warning, d.Severity, "a file without errors has none reported: %s", d)
		}
	}
	assert.Contains(t, report, "checked with trainfn's default options", "no TrainFn was read, and one may have been among what could not be")
}

func TestErrorsPrintNothing(t *testing.T) {
	out, diags := renderText(t, readCase(t, "mpi-operator-pi")+"\n---\n"+readCase(t, "error-unknown-fields"))
	assert.True(t, diags.HasErrors())
	assert.Empty(t, out, "one bad job spec stops the whole output")
}

// functionRun runs the KRM function on a ResourceList text.
func functionRun(t *testing.T, rl string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := RunFunction(&kio.ByteReadWriter{Reader: strings.NewReader(rl), Writer: &out, KeepReaderAnnotations: true})
	return out.String(), err
}

const resourceList = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: other # kept
    annotations:
      config.kubernetes.io/path: other.yaml
- apiVersion: kubeflow.org/v2beta1
  kind: MPIJob
  metadata:
    name: pi
    annotations:
      config.kubernetes.io/path: jobs/pi.yaml
      config.kubernetes.io/index: '0'
  spec:
    runLauncherAsWorker: true
    SLOTS
    mpiReplicaSpecs:
      Launcher:
        template:
          spec:
            containers:
            - name: launcher
              image: app:1
`

func TestFunctionExpandsItems(t *testing.T) {
	out, err := functionRun(t, strings.Replace(resourceList, "SLOTS", "slotsPerWorker: 2", 1))
	require.NoError(t, err)
	rl, err := yaml.Parse(out)
	require.NoError(t, err)
	items, err := rl.Pipe(yaml.Lookup("items"))
	require.NoError(t, err)
	var names []string
	for _, item := range items.Content() {
		names = append(names, yaml.NewRNode(item).GetKind()+"/"+yaml.NewRNode(item).GetName())
	}
	assert.Equal(t, []string{"ConfigMap/other", "ConfigMap/pi-config", "Service/pi", "Job/pi-launcher"}, names)
	assert.Contains(t, out, "name: other # kept", "comments of passed-through items are kept")
	assert.NotContains(t, out, "results:")
}

func TestFunctionReportsResults(t *testing.T) {
	in := strings.Replace(resourceList, "SLOTS", "slotPerWorker: 2", 1)
	out, err := functionRun(t, in)
	var diags Diagnostics
	require.ErrorAs(t, err, &diags)

	rl, perr := yaml.Parse(out)
	require.NoError(t, perr)
	items, _ := rl.Pipe(yaml.Lookup("items"))
	assert.Len(t, items.Content(), 2, "on error the items are left as they came")
	results, _ := rl.Pipe(yaml.Lookup("results"))
	require.NotNil(t, results)
	var got framework.Results
	require.NoError(t, yaml.Unmarshal([]byte(results.MustString()), &got))
	require.Len(t, got, 1)
	r := got[0]
	assert.Equal(t, framework.Error, r.Severity)
	assert.Equal(t, `Forbidden: unknown field (did you mean "slotsPerWorker"?)`, r.Message)
	assert.Equal(t, "spec.slotPerWorker", r.Field.Path)
	assert.Equal(t, "jobs/pi.yaml", r.File.Path)
	assert.Equal(t, "MPIJob", r.ResourceRef.Kind)
	assert.Equal(t, "pi", r.ResourceRef.Name)
}

func TestFunctionAsGenerator(t *testing.T) {
	job := `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: gen
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./trainfn
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: app:1
`
	config := yaml.MustParse(job)
	alone := &framework.ResourceList{FunctionConfig: config}
	require.NoError(t, Function{}.Process(alone))
	assert.Len(t, alone.Items, 3)

	// kustomize's generators: also pass the config among the items.
	withItem := &framework.ResourceList{FunctionConfig: config, Items: []*yaml.RNode{yaml.MustParse(job)}}
	require.NoError(t, Function{}.Process(withItem))
	assert.Len(t, withItem.Items, 3, "the config is rendered once")
	for _, item := range withItem.Items {
		assert.NotContains(t, item.GetAnnotations(), "config.kubernetes.io/function", "the function annotation stays with the config")
	}
}

// The options a run without configuration uses are the schema's defaults,
// so the two cannot drift apart.
func TestDefaultOptionsAreTheSchemas(t *testing.T) {
	config := yaml.MustParse(`{apiVersion: fn.trainfn.dev/v1alpha1, kind: TrainFn, metadata: {name: c}, spec: {mpi: {}}}`)
	set, rest, diags := configure([]Document{{Node: config}})
	require.Empty(t, diags)
	assert.Empty(t, rest, "the configuration is not output")
	assert.Equal(t, options.Default, set.render)
	assert.False(t, set.strict)
}
