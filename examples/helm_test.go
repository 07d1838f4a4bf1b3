package examples

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// The chart the Helm examples install, as the repository lays it out.
const jobChart = "charts/trainfn-job"

// helm4Annotation is what Helm 4 writes on every document it hands a
// post-renderer, the template file it came from, and removes after.
const helm4Annotation = "postrenderer.helm.sh/postrender-filename"

// The commands of the examples' READMEs, run from the repository's root.
var (
	helm3PostRenderer = []string{"--post-renderer", "bin/trainfn", "--post-renderer-args", "render", "--post-renderer-args", "-"}
	helm4PostRenderer = []string{"--post-renderer", "trainfn"}
)

// TestHelmPostRenderer follows examples/helm/post-renderer: Helm 3 runs
// bin/trainfn on the chart's output.
func TestHelmPostRenderer(t *testing.T) {
	helm := newHelm(t, "helm", helmWorkspace(t))
	out, stderr, err := helm.run(slices.Concat([]string{"template", "pi", jobChart, "-f", "examples/helm/post-renderer/values.yaml"}, helm3PostRenderer)...)
	require.NoError(t, err, stderr)
	assert.Empty(t, stderr)
	compareExpected(t, "helm/post-renderer", out)
}

// TestHelmPlugin follows examples/helm/plugin: Helm 4 runs trainfn through
// its post-renderer plugin. The objects are Helm 3's, each under the
// template file its job came from.
func TestHelmPlugin(t *testing.T) {
	dir := helmWorkspace(t)
	helm4 := newHelm4(t, dir)
	args := []string{"template", "pytorch-simple", jobChart, "-f", "examples/helm/plugin/values.yaml"}
	out, stderr, err := helm4.run(slices.Concat(args, helm4PostRenderer)...)
	require.NoError(t, err, stderr)
	assert.Empty(t, stderr)
	compareExpected(t, "helm/plugin", out)

	helm3Out, stderr, err := newHelm(t, "helm", dir).run(slices.Concat(args, helm3PostRenderer)...)
	require.NoError(t, err, stderr)
	assert.NotContains(t, out, helm4Annotation, "Helm 4 removes the annotation it adds, also from objects trainfn rendered")
	// The digest trainfn stamps on pod templates leaves Helm 4's annotation
	// out: a release moved from Helm 3 to Helm 4 keeps its Jobs.
	assert.Equal(t, streamDocuments(helm3Out), withoutSourceComments(t, out, "trainfn-job/templates/job.yaml"),
		"Helm 4's objects are Helm 3's, in the same order, each under the job's template")
}

// TestHelmPluginKeepsTemplateFiles: Helm 4 sorts what its post-renderer
// returns back into template files by the annotation it added. trainfn
// copies the job's annotations onto every object it renders, and sorts its
// output by kind and name, which interleaves the files; Helm 4 still files
// each object under its template, in its output and on disk.
func TestHelmPluginKeepsTemplateFiles(t *testing.T) {
	dir := helmWorkspace(t)
	// A second template, whose ConfigMap trainfn sorts before the job's.
	writeTestFile(t, filepath.Join(dir, jobChart, "templates", "settings.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a-settings\ndata:\n  epochs: \"1\"\n")
	// And a TrainFn document, from templates/trainfn.yaml, which trainfn
	// reads and does not print.
	args := []string{"template", "pi", jobChart, "--set", "trainfn.mpi.launchMode=SSH"}

	// Helm 3 prints what trainfn returns, as it returns it.
	out, stderr, err := newHelm(t, "helm", dir).run(slices.Concat(args, helm3PostRenderer)...)
	require.NoError(t, err, stderr)
	assert.Equal(t, []string{"ConfigMap/a-settings", "ConfigMap/pi-config", "Service/pi", "Job/pi-launcher", "Job/pi-worker"}, kindNames(t, out))

	helm4 := newHelm4(t, dir)
	out, stderr, err = helm4.run(slices.Concat(args, helm4PostRenderer)...)
	require.NoError(t, err, stderr)
	var sources []string
	for _, d := range streamDocuments(out) {
		source, _, _ := strings.Cut(d, "\n")
		sources = append(sources, strings.TrimPrefix(source, "# Source: trainfn-job/templates/")+" "+strings.Join(kindNames(t, d), ""))
	}
	assert.Equal(t, []string{
		"job.yaml ConfigMap/pi-config",
		"settings.yaml ConfigMap/a-settings",
		"job.yaml Service/pi",
		"job.yaml Job/pi-launcher",
		"job.yaml Job/pi-worker",
	}, sources, "in Helm's install order: by kind, then by template file")
	assert.NotContains(t, out, helm4Annotation)

	_, stderr, err = helm4.run(slices.Concat(args, helm4PostRenderer, []string{"--output-dir", "out"})...)
	require.NoError(t, err, stderr)
	templates := filepath.Join(dir, "out", "trainfn-job", "templates")
	files, err := os.ReadDir(templates)
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	assert.Equal(t, []string{"job.yaml", "settings.yaml"}, names,
		"every object under its template, none under generated-by-postrender-*.yaml, and no TrainFn")
	assert.Equal(t, []string{"ConfigMap/pi-config", "Service/pi", "Job/pi-launcher", "Job/pi-worker"}, kindNamesIn(t, filepath.Join(templates, "job.yaml")))
	assert.Equal(t, []string{"ConfigMap/a-settings"}, kindNamesIn(t, filepath.Join(templates, "settings.yaml")))
}

// TestHelm3OutputDirSkipsThePostRenderer pins the pitfall the Helm 3
// README warns of: helm template --output-dir writes the templates before
// the post-renderer runs, so the files hold the MPIJob, not what trainfn
// makes of it.
func TestHelm3OutputDirSkipsThePostRenderer(t *testing.T) {
	dir := helmWorkspace(t)
	_, stderr, err := newHelm(t, "helm", dir).run(slices.Concat([]string{"template", "pi", jobChart, "--output-dir", "out"}, helm3PostRenderer)...)
	require.NoError(t, err, stderr)
	assert.Equal(t, []string{"MPIJob/pi"}, kindNamesIn(t, filepath.Join(dir, "out", "trainfn-job", "templates", "job.yaml")))
}

// TestHelmReportsBadSpecs: a misspelt field in the job's values fails the
// render in both Helm versions, with trainfn's message on standard error
// and no manifest on standard output.
func TestHelmReportsBadSpecs(t *testing.T) {
	dir := helmWorkspace(t)
	values := filepath.Join(dir, "bad.yaml")
	example, err := os.ReadFile(filepath.Join(dir, "examples", "helm", "post-renderer", "values.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(example), "slotsPerWorker:")
	writeTestFile(t, values, strings.Replace(string(example), "slotsPerWorker:", "slotPerWorker:", 1))
	const message = `error: MPIJob pi: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`
	for _, c := range bothHelms(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			// The values schema, generated from trainfn's schemas, refuses
			// the field before Helm runs the post-renderer; skipped, it is
			// trainfn that refuses it.
			out, stderr, err := c.helm.run(slices.Concat([]string{"template", "pi", jobChart, "-f", values, "--skip-schema-validation"}, c.postRenderer)...)
			require.Error(t, err)
			assert.Empty(t, out)
			assert.Contains(t, stderr, message)

			// As a user runs it, whichever refuses it names the field.
			out, stderr, err = c.helm.run(slices.Concat([]string{"template", "pi", jobChart, "-f", values}, c.postRenderer)...)
			require.Error(t, err)
			assert.Empty(t, out)
			assert.Contains(t, stderr, "slotPerWorker")
		})
	}
}

// TestHelmPluginNeedsTrainfnOnPath: without trainfn on PATH the plugin says
// what to do, through Helm's error.
func TestHelmPluginNeedsTrainfnOnPath(t *testing.T) {
	dir := helmWorkspace(t)
	helm4 := newHelm4(t, dir)
	// A PATH with what the plugin's script runs but trainfn.
	path := t.TempDir()
	for _, tool := range []string{"sh", "sed"} {
		found, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(found, filepath.Join(path, tool)))
	}
	helm4.setEnv("PATH", path)
	out, stderr, err := helm4.run(slices.Concat([]string{"template", "pi", jobChart}, helm4PostRenderer)...)
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "runs trainfn from PATH")
}

// TestHelmLint: the chart lints clean with both Helm versions, with its
// defaults and with every values file of the examples and the chart's ci/.
func TestHelmLint(t *testing.T) {
	dir := helmWorkspace(t)
	for _, name := range []string{"helm", "helm4"} {
		helm := newHelm(t, name, dir)
		for _, values := range []string{"", "examples/helm/post-renderer/values.yaml", "examples/helm/plugin/values.yaml", jobChart + "/ci/dijob-values.yaml"} {
			t.Run(name+"/"+cmp.Or(values, "defaults"), func(t *testing.T) {
				args := []string{"lint", "--strict", jobChart}
				if values != "" {
					args = append(args, "-f", values)
				}
				out, stderr, err := helm.run(args...)
				require.NoError(t, err, "%s%s", out, stderr)
				assert.Contains(t, out, "1 chart(s) linted, 0 chart(s) failed")
				for _, line := range strings.Split(out+stderr, "\n") {
					if strings.HasPrefix(line, "[") {
						// Helm suggests an icon to every chart without one.
						assert.Equal(t, "[INFO] Chart.yaml: icon is recommended", line)
					}
				}
			})
		}
	}
}

// TestHelmChartTemplates: what the chart hands the post-renderer, as
// helm template prints it without one: the job named after the release,
// Helm's labels merged with the job's own (the job's win), a TrainFn
// document only when the trainfn value says something, and the example job
// only when no job is given.
func TestHelmChartTemplates(t *testing.T) {
	dir := helmWorkspace(t)
	for _, name := range []string{"helm", "helm4"} {
		helm := newHelm(t, name, dir)
		t.Run(name, func(t *testing.T) {
			example, stderr, err := helm.run("template", "pi", jobChart)
			require.NoError(t, err, stderr)
			nodes := parseObjects(t, example)
			require.Len(t, nodes, 1)
			assert.Equal(t, "kubeflow.org/v2beta1", nodes[0].GetApiVersion())
			assert.Equal(t, "MPIJob", nodes[0].GetKind())
			assert.Equal(t, "pi", nodes[0].GetName())
			assert.Equal(t, map[string]string{
				"app.kubernetes.io/instance":   "pi",
				"app.kubernetes.io/managed-by": "Helm",
				"app.kubernetes.io/name":       "trainfn-job",
			}, nodes[0].GetLabels())
			assert.Empty(t, nodes[0].GetAnnotations())
			// The example job is examples/jobs/pi.yaml's spec.
			pi, err := kyaml.ReadFile(filepath.Join(dir, "examples", "jobs", "pi.yaml"))
			require.NoError(t, err)
			want, err := pi.Pipe(kyaml.Lookup("spec"))
			require.NoError(t, err)
			got, err := nodes[0].Pipe(kyaml.Lookup("spec"))
			require.NoError(t, err)
			wantMap, err := want.Map()
			require.NoError(t, err)
			gotMap, err := got.Map()
			require.NoError(t, err)
			assert.Equal(t, wantMap, gotMap, "the chart's example job is examples/jobs/pi.yaml")

			out, stderr, err := helm.run("template", "pi", jobChart, "-f", "examples/helm/post-renderer/values.yaml",
				"--set", "job.metadata.name=estimate,job.metadata.labels.team=research,job.metadata.labels.app\\.kubernetes\\.io/name=pi",
				"--set", "job.metadata.annotations.trainfn\\.dev/mpi-launch-mode=KubectlExec",
				"--set", "trainfn.gangScheduling.scheduler=Volcano")
			require.NoError(t, err, stderr)
			nodes = parseObjects(t, out)
			require.Len(t, nodes, 2)
			assert.Equal(t, "estimate", nodes[0].GetName())
			assert.Equal(t, map[string]string{
				"app.kubernetes.io/instance":   "pi",
				"app.kubernetes.io/managed-by": "Helm",
				"app.kubernetes.io/name":       "pi",
				"team":                         "research",
			}, nodes[0].GetLabels())
			assert.Equal(t, map[string]string{"trainfn.dev/mpi-launch-mode": "KubectlExec"}, nodes[0].GetAnnotations())
			assert.Equal(t, "fn.trainfn.dev/v1alpha1", nodes[1].GetApiVersion())
			assert.Equal(t, "TrainFn", nodes[1].GetKind())
			scheduler, err := nodes[1].Pipe(kyaml.Lookup("spec", "gangScheduling", "scheduler"))
			require.NoError(t, err)
			assert.Equal(t, "Volcano", kyaml.GetValue(scheduler))

			// No job is the example job, and a given job is only itself:
			// nothing of the example leaks into it.
			out, stderr, err = helm.run("template", "pi", jobChart, "--set", "job=null")
			require.NoError(t, err, stderr)
			assert.Equal(t, example, out)
			out, stderr, err = helm.run("template", "mnist", jobChart, "-f", "examples/helm/plugin/values.yaml")
			require.NoError(t, err, stderr)
			assert.NotContains(t, out, "sshAuthMountPath")
			assert.NotContains(t, out, "mpiReplicaSpecs")
		})
	}
}

// TestHelmChartRendersADIJob: the chart's ci/ DIJob, with its TrainFn
// configuration, through both Helm versions' post-renderers: expanded, the
// configuration applied and not printed, every object labelled with the
// release.
func TestHelmChartRendersADIJob(t *testing.T) {
	dir := helmWorkspace(t)
	for _, c := range bothHelms(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, err := c.helm.run(slices.Concat([]string{"template", "serial", jobChart, "-f", jobChart + "/ci/dijob-values.yaml"}, c.postRenderer)...)
			require.NoError(t, err, stderr)
			var kinds []string
			for _, node := range parseObjects(t, out) {
				kinds = append(kinds, node.GetKind()+"/"+node.GetName())
				assert.Equal(t, "serial", node.GetLabels()["app.kubernetes.io/instance"], node.GetKind())
				assert.Equal(t, "serial", node.GetLabels()["training.kubeflow.org/job-name"], node.GetKind())
			}
			assert.Equal(t, []string{"Service/serial", "Job/serial-serial"}, kinds)
			assert.Contains(t, out, "- name: DI_SERVER_URL\n          value: http://trainfn-di-server.trainfn:8082\n",
				"the TrainFn document's spec.di.serverURL")
		})
	}
}

// TestHelmChartVersionKeepsTheJob: a new version of the chart, with the
// same values, renders the same job, so `helm upgrade` to it leaves a
// running job's Jobs, whose templates cannot change, as they are.
func TestHelmChartVersionKeepsTheJob(t *testing.T) {
	dir := helmWorkspace(t)
	for _, h := range bothHelms(t, dir) {
		t.Run(h.name, func(t *testing.T) {
			render := func() string {
				out, stderr, err := h.helm.run(slices.Concat([]string{"template", "pi", jobChart, "-f", "examples/helm/post-renderer/values.yaml"}, h.postRenderer)...)
				require.NoError(t, err, stderr)
				return out
			}
			chart := filepath.Join(dir, jobChart, "Chart.yaml")
			original, err := os.ReadFile(chart)
			require.NoError(t, err)
			before := render()
			require.Contains(t, string(original), "\nversion: 0.1.0\n")
			writeTestFile(t, chart, strings.Replace(string(original), "\nversion: 0.1.0\n", "\nversion: 0.2.0\n", 1))
			t.Cleanup(func() { writeTestFile(t, chart, string(original)) })
			assert.Equal(t, before, render())
		})
	}
}

// TestHelmNotes: the notes tell how the chart is meant to be installed and
// how to see whether trainfn ran. Helm 3 renders notes only when it
// installs, which needs a cluster; Helm 4's client-side dry run needs none.
func TestHelmNotes(t *testing.T) {
	dir := helmWorkspace(t)
	out, stderr, err := newHelm4(t, dir).run(slices.Concat([]string{"install", "pi", jobChart, "--namespace", "training", "--dry-run=client"}, helm4PostRenderer)...)
	require.NoError(t, err, stderr)
	_, notes, found := strings.Cut(out, "\nNOTES:\n")
	require.True(t, found, out)
	assert.Contains(t, notes, "helm install pi <chart> --post-renderer trainfn\n")
	assert.Contains(t, notes, "-l app.kubernetes.io/instance=pi\n")
	assert.Contains(t, notes, "trainfn status pi --namespace training\n")
	assert.Contains(t, notes, "kubectl get mpijobs.kubeflow.org pi --namespace training")
}

// helmTool runs one helm binary in a workspace laid out as the repository,
// with a home of its own: no repository, plugin or setting of the
// machine's user takes part, and nothing is written there.
type helmTool struct {
	path string
	dir  string
	env  []string
}

func newHelm(t *testing.T, name, dir string) *helmTool {
	t.Helper()
	home := t.TempDir()
	return &helmTool{
		path: testtool.Find(t, name),
		dir:  dir,
		env: append(os.Environ(),
			"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_DATA_HOME="+filepath.Join(home, "data"),
			"KUBECONFIG="+filepath.Join(home, "kubeconfig"),
		),
	}
}

// newHelm4 is Helm 4 as its README sets it up: the workspace's bin on
// PATH, and trainfn's post-renderer plugin installed.
func newHelm4(t *testing.T, dir string) *helmTool {
	t.Helper()
	h := newHelm(t, "helm4", dir)
	h.setEnv("PATH", filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, stderr, err := h.run("plugin", "install", "examples/helm/plugin/trainfn")
	require.NoError(t, err, "%s%s", out, stderr)
	return h
}

func (h *helmTool) setEnv(key, value string) {
	h.env = append(h.env, key+"="+value)
}

func (h *helmTool) run(args ...string) (string, string, error) {
	cmd := exec.Command(h.path, args...)
	cmd.Dir = h.dir
	cmd.Env = h.env
	return run(cmd)
}

// helmVersion is a Helm binary and how it runs trainfn as post-renderer.
type helmVersion struct {
	name         string
	helm         *helmTool
	postRenderer []string
}

// bothHelms are Helm 3 and Helm 4, each with its post-renderer road.
func bothHelms(t *testing.T, dir string) []helmVersion {
	return []helmVersion{
		{"helm 3", newHelm(t, "helm", dir), helm3PostRenderer},
		{"helm 4", newHelm4(t, dir), helm4PostRenderer},
	}
}

// helmWorkspace is a workspace of the test's own with the chart in it.
func helmWorkspace(t *testing.T) string {
	t.Helper()
	dir := copyWorkspace(t)
	require.NoError(t, os.CopyFS(filepath.Join(dir, jobChart), os.DirFS(filepath.Join("..", jobChart))))
	return dir
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func parseObjects(t *testing.T, stream string) []*kyaml.RNode {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(stream))
	require.NoError(t, err)
	return nodes
}

// kindNames are the kind/name of a stream's objects, in its order.
func kindNames(t *testing.T, stream string) []string {
	t.Helper()
	var found []string
	for _, node := range parseObjects(t, stream) {
		found = append(found, node.GetKind()+"/"+node.GetName())
	}
	return found
}

// kindNamesIn are the objects of a file.
func kindNamesIn(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return kindNames(t, string(b))
}

// streamDocuments are a stream's documents, trimmed.
func streamDocuments(stream string) []string {
	var docs []string
	for _, d := range strings.Split("\n"+strings.TrimSpace(stream), "\n---\n") {
		if d = strings.TrimSpace(d); d != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

// withoutSourceComments are the documents of Helm's output, each required to
// start with the comment that names source, without it.
func withoutSourceComments(t *testing.T, stream, source string) []string {
	t.Helper()
	var docs []string
	for _, d := range streamDocuments(stream) {
		rest, found := strings.CutPrefix(d, "# Source: "+source+"\n")
		require.True(t, found, "a document not from %s:\n%s", source, d)
		docs = append(docs, rest)
	}
	return docs
}

// TestHelmChartRendersTrainJobWithItsRuntime: a chart of the user's own
// whose templates hold a TrainJob and Trainer's shipped torch-distributed
// runtime, unchanged, renders in both Helm versions into the runtime's
// Job and its Service: the TrainJob resolves its runtime among the
// chart's templates, and the runtime is consumed, never installed.
func TestHelmChartRendersTrainJobWithItsRuntime(t *testing.T) {
	dir := helmWorkspace(t)
	chart := filepath.Join(dir, "mnist-chart")
	require.NoError(t, os.MkdirAll(filepath.Join(chart, "templates"), 0o755))
	writeTestFile(t, filepath.Join(chart, "Chart.yaml"), "apiVersion: v2\nname: mnist\nversion: 0.1.0\n")
	writeTestFile(t, filepath.Join(chart, "values.yaml"), "numNodes: 2\n")
	writeTestFile(t, filepath.Join(chart, "templates", "trainjob.yaml"), `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {{ .Release.Name }}
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    command: [torchrun, /workspace/mnist.py]
    numNodes: {{ .Values.numNodes }}
`)
	runtime, err := os.ReadFile(filepath.Join("trainer", "runtimes", "torch_distributed.yaml"))
	require.NoError(t, err)
	writeTestFile(t, filepath.Join(chart, "templates", "runtime.yaml"), string(runtime))
	for _, c := range bothHelms(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, err := c.helm.run(slices.Concat([]string{"template", "mnist", "mnist-chart"}, c.postRenderer)...)
			require.NoError(t, err, stderr)
			assert.Empty(t, stderr)
			assert.Equal(t, []string{"Service/mnist", "Job/mnist-node-0"}, kindNames(t, out))
			job := document(t, out, "kind: Job")
			assert.Contains(t, job, "parallelism: 2")
			assert.Contains(t, job, "value: mnist-node-0-0.mnist", "PET_MASTER_ADDR")
		})
	}
}
