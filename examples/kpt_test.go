package examples

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/filters"

	"github.com/trainfn/trainfn/test/testtool"
)

// kptPackage is the kpt example, a package whose pipeline runs trainfn.
const kptPackage = "kpt/training"

// TestKptRender renders a copy of the package in place, as `kpt fn render`
// does, and compares the files it leaves with the reviewed output. A second
// render must change nothing: kpt expects a pipeline to be idempotent.
func TestKptRender(t *testing.T) {
	kpt := testtool.Find(t, "kpt")
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	kptfile := readFile(t, filepath.Join(pkg, "Kptfile"))

	_, stderr, err := run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg))
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, `[PASS] "trainfn"`)
	rendered := renderedPackage(t, pkg)
	compareExpected(t, kptPackage, rendered)
	assert.Equal(t, kptfile, readFile(t, filepath.Join(pkg, "Kptfile")), "render leaves the Kptfile as it was")

	before := testtool.Files(t, pkg)
	_, stderr, err = run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg))
	require.NoError(t, err, stderr)
	assert.Equal(t, before, testtool.Files(t, pkg), "a second render changes nothing")
}

// TestKptRenderToDirectory renders as the README advises, into a directory
// of its own: the package, the job specs' source, stays as it was.
func TestKptRenderToDirectory(t *testing.T) {
	kpt := testtool.Find(t, "kpt")
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	before := testtool.Files(t, pkg)
	out := filepath.Join(dir, "rendered")

	_, stderr, err := run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg, "-o", out))
	require.NoError(t, err, stderr)
	assert.Equal(t, before, testtool.Files(t, pkg), "the package is left as it was")
	assert.Equal(t, kptRenderedCopy(t, kpt), renderedPackage(t, out), "the directory holds what an in-place render leaves")
}

// TestKptConfigPath configures the run with a TrainFn file of the package,
// as the README says: the options reach the render and the file stays; and
// a configMap, which trainfn would not read, fails the render instead.
func TestKptConfigPath(t *testing.T) {
	kpt := testtool.Find(t, "kpt")
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	const config = `apiVersion: fn.trainfn.dev/v1alpha1
kind: TrainFn
metadata:
  name: trainfn
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  mpi:
    launchMode: KubectlExec
`
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "trainfn.yaml"), []byte(config), 0o644))
	replaceInFile(t, filepath.Join(pkg, "Kptfile"), "  - exec: trainfn\n", "  - exec: trainfn\n    configPath: trainfn.yaml\n")

	_, stderr, err := run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg))
	require.NoError(t, err, stderr)
	assert.Equal(t, config, readFile(t, filepath.Join(pkg, "trainfn.yaml")), "the configuration stays in the package")
	assert.Contains(t, readFile(t, filepath.Join(pkg, "pi.yaml")), "kind: Role\n", "the launch mode reached the render")

	replaceInFile(t, filepath.Join(pkg, "Kptfile"), "    configPath: trainfn.yaml\n", "    configMap:\n      launchMode: SSH\n")
	before := testtool.Files(t, pkg)
	_, stderr, err = run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg))
	require.Error(t, err)
	assert.Contains(t, stderr, "the function config is a v1 ConfigMap")
	assert.Equal(t, before, testtool.Files(t, pkg))
}

// TestKptEvalExec runs trainfn once, imperatively, on a copy of the package:
// the result must be the pipeline's.
func TestKptEvalExec(t *testing.T) {
	kpt := testtool.Find(t, "kpt")
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	_, stderr, err := run(kptCommand(dir, kpt, "fn", "eval", pkg, "--exec", filepath.Join(dir, "bin", "trainfn")))
	require.NoError(t, err, stderr)
	assert.Equal(t, kptRenderedCopy(t, kpt), renderedPackage(t, pkg), "eval leaves what render leaves")
}

// TestKptImage renders with the image form the Kptfile documents, through
// the docker stand-in (see dockerShim): kpt must ask for the image as its
// container runtime does, and get the exec form's result.
func TestKptImage(t *testing.T) {
	kpt := testtool.Find(t, "kpt")
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	replaceInFile(t, filepath.Join(pkg, "Kptfile"), "  - exec: trainfn\n", "  - image: "+functionImage+"\n")
	docker := standInDocker(t)

	cmd := docker.command(kpt, "fn", "render", pkg)
	cmd.Dir = dir
	_, stderr, err := run(cmd)
	require.NoError(t, err, stderr)
	assert.Equal(t, [][]string{
		{"version", "--format", "{{.Client.Version}}"},
		{"run", "--rm", "-i", "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges",
			"--pull", "missing", functionImage},
	}, docker.calls(t))
	assert.Equal(t, kptRenderedCopy(t, kpt), renderedPackage(t, pkg), "the image renders what the exec form does")
}

// TestKptReportsBadSpecs breaks a job spec: render must fail with trainfn's
// message, naming the file, and leave every file of the package as it was.
func TestKptReportsBadSpecs(t *testing.T) {
	kpt := testtool.Find(t, "kpt")
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	replaceInFile(t, filepath.Join(pkg, "pi.yaml"), "slotsPerWorker:", "slotPerWorker:")
	before := testtool.Files(t, pkg)

	_, stderr, err := run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg))
	require.Error(t, err)
	assert.Contains(t, stderr, `[FAIL] "trainfn"`)
	assert.Contains(t, stderr, `[error] kubeflow.org/v2beta1/MPIJob/pi spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
	assert.Contains(t, stderr, `pi.yaml: error: MPIJob pi: spec.slotPerWorker`, "kpt tells trainfn each resource's file")
	assert.Equal(t, before, testtool.Files(t, pkg), "a failed render changes no file")
}

// kptRenderedCopy renders a copy of the package with the exec form, as
// TestKptRender does, and returns what it holds.
func kptRenderedCopy(t *testing.T, kpt string) string {
	t.Helper()
	dir := copyWorkspace(t)
	pkg := filepath.Join(dir, "examples", kptPackage)
	_, stderr, err := run(kptCommand(dir, kpt, "fn", "render", "--allow-exec", pkg))
	require.NoError(t, err, stderr)
	return renderedPackage(t, pkg)
}

// kptCommand runs kpt from the workspace with its bin/ first on PATH, where
// the Kptfile's `exec: trainfn` is looked up.
func kptCommand(workspace, kpt string, args ...string) *exec.Cmd {
	cmd := exec.Command(kpt, args...)
	cmd.Dir = workspace
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(workspace, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}

// renderedPackage is what a package holds for an API server: its YAML files
// in path order, each preceded by a comment naming it, so the reviewed
// output shows where kpt wrote every object too. The Kptfile, the hidden
// .expected directory (.krmignore keeps it out of the package) and
// local-config resources, such as function configs, are not applicable and
// are left out.
func renderedPackage(t *testing.T, pkg string) string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(pkg, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != pkg && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, path)
		}
		return nil
	}))
	sort.Strings(files)
	var docs []string
	for _, path := range files {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(readFile(t, path)), OmitReaderAnnotations: true}).Read()
		require.NoError(t, err, path)
		nodes, err = (&filters.IsLocalConfig{}).Filter(nodes)
		require.NoError(t, err, path)
		rel, err := filepath.Rel(pkg, path)
		require.NoError(t, err)
		for _, n := range nodes {
			docs = append(docs, "# "+filepath.ToSlash(rel)+"\n"+n.MustString())
		}
	}
	return strings.Join(docs, "---\n")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
