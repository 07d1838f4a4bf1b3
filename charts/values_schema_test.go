package charts

// trainfn-job's values.schema.json is generated from trainfn's CUE schemas;
// regenerate it with `go generate ./charts`.
//go:generate go run ../hack/gen-chart-schema -o trainfn-job/values.schema.json

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/test/testtool"
)

const jobValuesSchema = "trainfn-job/values.schema.json"

func TestJobValuesSchemaIsGenerated(t *testing.T) {
	gen := exec.Command("go", "run", "../hack/gen-chart-schema")
	var stderr bytes.Buffer
	gen.Stderr = &stderr
	want, err := gen.Output()
	require.NoError(t, err, stderr.String())
	got, err := os.ReadFile(jobValuesSchema)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got),
		"%s is not what the CUE schemas give: run go generate ./charts and review the diff", jobValuesSchema)
}

// TestJobValuesSchemaWithHelm has Helm 3 and Helm 4 check values against the
// generated schema, in a chart of its own that only writes the job out:
// each job kind and a TrainFn config pass, and what trainfn refuses for its
// form is refused by helm lint and helm template, naming the value.
func TestJobValuesSchemaWithHelm(t *testing.T) {
	chart := schemaOnlyChart(t)
	good := map[string]string{
		"chart defaults":           "",
		"MPIJob v2beta1":           jobValues(t, "../examples/jobs/pi.yaml"),
		"MPIJob v1":                jobValues(t, testtool.GoldenInput(t, "training-operator-mpi-tensorflow-mnist")),
		"MPIJob v1alpha1":          jobValues(t, testtool.GoldenInput(t, "mpi-operator-v1alpha1-tensorflow-benchmarks-gpus")),
		"PyTorchJob":               jobValues(t, testtool.GoldenInput(t, "training-operator-pytorch-simple")),
		"DIJob":                    jobValues(t, testtool.GoldenInput(t, "di-orchestrator-head-dijob-serial")),
		"name left to the release": strings.Replace(jobValues(t, "../examples/jobs/pi.yaml"), "name: pi\n", "name: \"\"\n", 1),
		"trainfn config":           "trainfn:\n  mpi:\n    launchMode: KubectlExec\n  gangScheduling:\n    scheduler: Volcano\n",
	}
	pi := jobValues(t, "../examples/jobs/pi.yaml")
	bad := []struct{ name, values, says string }{
		{"misspelt field", strings.Replace(pi, "slotsPerWorker:", "slotPerWorker:", 1),
			"at '/job/spec': additional properties 'slotPerWorker' not allowed"},
		{"wrong type", strings.Replace(pi, "slotsPerWorker: 1", "slotsPerWorker: two", 1),
			"at '/job/spec/slotsPerWorker': got string, want null or integer"},
		{"unknown enum value", strings.Replace(pi, "cleanPodPolicy: Running", "cleanPodPolicy: Sometimes", 1),
			"at '/job/spec/runPolicy/cleanPodPolicy': value must be one of 'None', 'Running', 'All'"},
		{"misspelt pod field", strings.Replace(pi, "containers:", "container:", 1),
			"additional properties 'container' not allowed"},
		{"kind of another apiVersion", strings.Replace(pi, "kind: MPIJob", "kind: PyTorchJob", 1),
			"at '/job/kind': value must be 'MPIJob'"},
		{"bad job name", strings.Replace(pi, "name: pi\n", "name: Pi_1\n", 1),
			"'/job/metadata/name'"},
		{"unknown trainfn option", "trainfn:\n  mpi:\n    launchMode: Telepathy\n",
			"at '/trainfn/mpi/launchMode': value must be one of 'SSH', 'KubectlExec'"},
	}
	for _, name := range []string{"helm", "helm4"} {
		bin := testtool.Find(t, name)
		t.Run(name, func(t *testing.T) {
			for what, values := range good {
				args := valuesArgs(t, values)
				out, err := helmCommandOf(t, bin, append([]string{"lint", "--strict", chart}, args...)...).CombinedOutput()
				assert.NoError(t, err, "%s: helm lint:\n%s", what, out)
				out, err = helmCommandOf(t, bin, append([]string{"template", "job", chart}, args...)...).CombinedOutput()
				assert.NoError(t, err, "%s: helm template:\n%s", what, out)
			}
			for _, c := range bad {
				for _, cmd := range [][]string{{"lint", "--strict", chart}, {"template", "job", chart}} {
					out, err := helmCommandOf(t, bin, append(cmd, valuesArgs(t, c.values)...)...).CombinedOutput()
					if assert.Error(t, err, "%s: helm %s passed:\n%s", c.name, cmd[0], out) {
						assert.Contains(t, string(out), c.says, "%s: helm %s", c.name, cmd[0])
					}
				}
			}
		})
	}
}

// schemaOnlyChart is a chart with trainfn-job's values layout and schema
// whose one template writes the job out: unlike the real chart, it has
// nothing but the schema to refuse values with.
func schemaOnlyChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "schema-only")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	schema, err := os.ReadFile(jobValuesSchema)
	require.NoError(t, err)
	for name, content := range map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: schema-only\nversion: 0.1.0\nicon: https://example.com/icon.png\n",
		"values.yaml":        "job: {}\ntrainfn: {}\n",
		"values.schema.json": string(schema),
		// The job as given, named after the release when its name is empty.
		"templates/job.yaml": `{{- with .Values.job }}
{{- $job := deepCopy . }}
{{- $_ := set $job.metadata "name" (default $.Release.Name $job.metadata.name) }}
{{ toYaml $job }}
{{- end }}
`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// jobValues is a values file whose job is the first document of a file.
func jobValues(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc, _, _ := strings.Cut(strings.TrimPrefix(string(b), "---\n"), "\n---")
	var values strings.Builder
	values.WriteString("job:\n")
	for _, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		values.WriteString("  " + line + "\n")
	}
	return values.String()
}

// valuesArgs writes values to a file and passes it with -f.
func valuesArgs(t *testing.T, values string) []string {
	t.Helper()
	if values == "" {
		return nil
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(path, []byte(values), 0o644))
	return []string{"-f", path}
}
