// Package examples runs every example with the tool it is for and compares
// the result with the reviewed output in the example's .expected folder.
package examples

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/trainfn/trainfn/test/testtool"
)

var update = flag.Bool("update", false, "rewrite the examples' expected output; review the diff before committing it")

// workspace is a copy of examples/ beside a freshly built bin/trainfn, laid
// out as in the repository so the examples' relative exec paths resolve.
var workspace string

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := withWorkspace(m.Run)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func withWorkspace(run func() int) (_ int, err error) {
	dir, err := os.MkdirTemp("", "trainfn-examples-")
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "trainfn"), "../cmd/trainfn")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("building trainfn: %w", err)
	}
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(".")); err != nil {
		return 0, err
	}
	workspace = dir
	return run(), nil
}

// kustomizations are the examples that build as they are.
var kustomizations = []string{"kustomize/transformer", "kustomize/generator", "kustomize/trainjob"}

func TestKustomizeInProcess(t *testing.T) {
	for _, example := range kustomizations {
		t.Run(example, func(t *testing.T) {
			opts := krusty.MakeDefaultOptions()
			opts.PluginConfig = types.EnabledPluginConfig(types.BploLoadFromFileSys)
			opts.PluginConfig.FnpLoadingOptions.EnableExec = true
			resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(workspace, "examples", example))
			require.NoError(t, err)
			out, err := resources.AsYaml()
			require.NoError(t, err)
			compareExpected(t, example, string(out))
		})
	}
}

func TestKustomizeBinary(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	for _, example := range kustomizations {
		t.Run(example, func(t *testing.T) {
			out, stderr, err := kustomizeBuild(kustomize, filepath.Join(workspace, "examples", example))
			require.NoError(t, err, stderr)
			compareExpected(t, example, out)
		})
	}
}

// TestKustomizeReportsBadSpecs breaks the job spec and expects the build to
// fail with trainfn's message, naming the file when kustomize passes it on.
func TestKustomizeReportsBadSpecs(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	dir := copyWorkspace(t)
	spec := filepath.Join(dir, "examples", "jobs", "pi.yaml")
	replaceInFile(t, spec, "slotsPerWorker:", "slotPerWorker:")
	kustomization := filepath.Join(dir, "examples", "kustomize", "transformer", "kustomization.yaml")
	replaceInFile(t, kustomization, "transformers:", "buildMetadata: [originAnnotations]\ntransformers:")

	out, stderr, err := kustomizeBuild(kustomize, filepath.Dir(kustomization))
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, `error: MPIJob pi: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
	assert.Contains(t, stderr, "pi.yaml: error:", "with origin annotations kustomize tells trainfn the file")
}

// TestKustomizeBuildMetadataKeepsTheJob: kustomize's build metadata, which
// records where a document came from and what transformed it, is about the
// kustomization, not the job: asking for it must not change the job's
// render digest, or a reorganised kustomization would restart every job.
// (The transformers' record reaches trainfn on the job's document, and is
// not carried onto what it renders.)
func TestKustomizeBuildMetadataKeepsTheJob(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	dir := copyWorkspace(t)
	kustomization := filepath.Join(dir, "examples", "kustomize", "transformer", "kustomization.yaml")
	plain, stderr, err := kustomizeBuild(kustomize, filepath.Dir(kustomization))
	require.NoError(t, err, stderr)
	replaceInFile(t, kustomization, "transformers:", "buildMetadata: [transformerAnnotations, originAnnotations]\ntransformers:")
	annotated, stderr, err := kustomizeBuild(kustomize, filepath.Dir(kustomization))
	require.NoError(t, err, stderr)
	require.Contains(t, annotated, "config.kubernetes.io/origin:", "kustomize recorded the build metadata")

	digests := func(stream string) []string { return renderDigest.FindAllString(stream, -1) }
	require.NotEmpty(t, digests(plain))
	assert.Equal(t, digests(plain), digests(annotated))
}

var renderDigest = regexp.MustCompile(`trainfn\.dev/render-digest: [0-9a-f]+`)

// TestSSHKeyRecipe follows docs/ssh-keys.md: make a key with ssh-keygen, let
// kustomize's secretGenerator turn it into the Secret the pods mount.
func TestSSHKeyRecipe(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	keygen := testtool.Find(t, "ssh-keygen")
	dir := filepath.Join(copyWorkspace(t), "examples", "kustomize", "ssh-key")
	gen := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "pi", "-f", "id")
	gen.Dir = dir
	require.NoError(t, gen.Run())

	out, stderr, err := kustomizeBuild(kustomize, dir)
	require.NoError(t, err, stderr)
	secret := document(t, out, "kind: Secret")
	assert.Contains(t, secret, "name: pi-ssh\n")
	assert.Contains(t, secret, "namespace: training\n")
	assert.Contains(t, secret, "type: kubernetes.io/ssh-auth")
	assert.Contains(t, secret, "ssh-privatekey: ")
	assert.Contains(t, secret, "ssh-publickey: ")
	assert.Contains(t, document(t, out, "name: pi-worker\n  namespace"), "secretName: pi-ssh")
	// The launcher's, beside its ssh configuration.
	assert.Contains(t, document(t, out, "name: pi-launcher\n  namespace"), "path: authorized_keys\n              name: pi-ssh\n")
}

// containerForms are the container examples, each with the exec example
// whose reviewed output it must give: the image does what the binary does.
var containerForms = map[string]string{
	"kustomize/container":           "kustomize/transformer",
	"kustomize/container-generator": "kustomize/generator",
}

// TestKustomizeContainer builds the container examples: kustomize must run
// trainfn's image with the command line kyaml's source gives container
// functions, and the image's output must be the exec form's.
func TestKustomizeContainer(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	for example, execExample := range containerForms {
		t.Run(example, func(t *testing.T) {
			docker := standInDocker(t)
			out, stderr, err := run(docker.command(kustomize, "build", "--enable-alpha-plugins",
				filepath.Join(workspace, "examples", example)))
			require.NoError(t, err, stderr)
			assert.Equal(t, [][]string{kustomizeDockerRun}, docker.calls(t))
			compareExpected(t, execExample, out)
		})
	}
}

// TestKustomizeContainerReportsBadSpecs expects trainfn's message to come
// back through the container runtime, and the build to fail.
func TestKustomizeContainerReportsBadSpecs(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	dir := copyWorkspace(t)
	replaceInFile(t, filepath.Join(dir, "examples", "jobs", "pi.yaml"), "slotsPerWorker:", "slotPerWorker:")
	docker := standInDocker(t)
	out, stderr, err := run(docker.command(kustomize, "build", "--enable-alpha-plugins",
		filepath.Join(dir, "examples", "kustomize", "container")))
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, `error: MPIJob pi: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
	assert.Len(t, docker.calls(t), 1)
}

func kustomizeBuild(kustomize, dir string) (string, string, error) {
	return run(exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir))
}

// run runs cmd and returns what it printed on stdout and stderr.
func run(cmd *exec.Cmd) (string, string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// functionImage is the image the examples' container forms name.
const functionImage = "ghcr.io/trainfn/trainfn:v0.1.0"

// kustomizeDockerRun is how kustomize (kyaml's fn/runtime/container) runs a
// container function: no network, as user nobody, without new privileges,
// with the two variables kyaml always sets, and no arguments after the
// image, so the image's entrypoint must be the function.
var kustomizeDockerRun = []string{"run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
	"--network", "none", "--user", "nobody", "--security-opt=no-new-privileges",
	"-e", "LOG_TO_STDERR=true", "-e", "STRUCTURED_RESULTS=true", functionImage}

// dockerShim stands in for the docker CLI, because no container engine can
// run on this machine (no daemon, no privileges to start one). It records
// every command line it is given, so a test can check what the orchestrator
// asks of the image, and runs `docker run` of trainfn's image as the image
// would run: its entrypoint /trainfn (the workspace's bin/trainfn, copied
// into a directory of its own that stands for the image) reads the
// ResourceList on stdin, from /, with only the environment docker passes.
// As root it also does what --network none and --user nobody ask: a network
// namespace of its own (unshare) and uid and gid 65534 without new
// privileges (setpriv), so the binary is shown to work as user nobody. The
// image's file system itself is not stood in for: the image's own build
// tests that.
type dockerShim struct {
	dir string
}

const dockerShimScript = `#!/bin/sh
# Stands in for the docker CLI in trainfn's example tests (see dockerShim).
set -eu
{ for arg in "$@"; do printf '%s\n' "$arg"; done; echo; } >>'{{log}}'
case ${1-} in
version) echo 28.2.2; exit 0 ;;  # kpt checks the client's version first
run) shift ;;
*) echo "docker stand-in: only version and run are stood in for, not $1" >&2; exit 125 ;;
esac
env=
while [ $# -gt 1 ]; do
	if [ "$1" = -e ]; then env="$env $2"; shift; fi  # values have no spaces here
	shift
done
if [ "$1" != '{{image}}' ]; then
	echo "docker stand-in: Unable to find image '$1' locally" >&2
	exit 125
fi
cd /
exec {{isolate}} env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ $env '{{entrypoint}}'
`

// standInDocker puts a dockerShim first on the PATH of the commands made
// with its command method.
func standInDocker(t *testing.T) *dockerShim {
	t.Helper()
	d := &dockerShim{dir: t.TempDir()}
	// The image's directory must be readable by user nobody, which a test's
	// temporary directories (0700) are not.
	image, err := os.MkdirTemp("", "trainfn-image-") //nolint:usetesting // t.TempDir's parent would shut user nobody out
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, os.RemoveAll(image)) })
	require.NoError(t, os.Chmod(image, 0o755))
	entrypoint := filepath.Join(image, "trainfn")
	binary, err := os.ReadFile(filepath.Join(workspace, "bin", "trainfn"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(entrypoint, binary, 0o755))

	isolate := ""
	if os.Geteuid() == 0 {
		isolate = testtool.Find(t, "unshare") + " --net " + testtool.Find(t, "setpriv") +
			" --reuid=65534 --regid=65534 --clear-groups --no-new-privs"
	} else {
		t.Log("not root: the stand-in image runs as this user, not as nobody, and with the network")
	}
	script := strings.NewReplacer("{{log}}", d.log(), "{{image}}", functionImage,
		"{{isolate}}", isolate, "{{entrypoint}}", entrypoint).Replace(dockerShimScript)
	require.NoError(t, os.WriteFile(filepath.Join(d.dir, "docker"), []byte(script), 0o755))
	return d
}

func (d *dockerShim) log() string { return filepath.Join(d.dir, "calls") }

// command makes a command whose PATH finds the shim first.
func (d *dockerShim) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "PATH="+d.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}

// calls returns the command lines the shim was given, in order.
func (d *dockerShim) calls(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(d.log())
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var calls [][]string
	for _, call := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		calls = append(calls, strings.Split(call, "\n"))
	}
	return calls
}

// copyWorkspace gives a test a workspace of its own to change.
func copyWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(workspace)))
	// CopyFS drops the executable bit it cannot know about.
	require.NoError(t, os.Chmod(filepath.Join(dir, "bin", "trainfn"), 0o755))
	return dir
}

func replaceInFile(t *testing.T, path, old, replacement string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), old, replacement, 1)), 0o644))
}

// document returns the one document of a stream that contains marker.
func document(t *testing.T, stream, marker string) string {
	t.Helper()
	var found []string
	for _, d := range strings.Split(stream, "\n---\n") {
		if strings.Contains(d, marker) {
			found = append(found, d)
		}
	}
	require.Len(t, found, 1, "documents containing %q", marker)
	return found[0]
}

func compareExpected(t *testing.T, example, got string) {
	t.Helper()
	path := filepath.Join(example, ".expected", "output.yaml")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no reviewed output yet: run make golden and review it")
	assert.Equal(t, string(want), got, "output differs from %s (if intended, run make golden and review the diff)", path)
}
