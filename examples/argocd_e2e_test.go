//go:build e2e

package examples

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// The Argo CD examples are run by Argo CD's own code, not by a stand-in:
// argocd-harness (hack/tools/argocd, built by hack/argocd-tools.sh) is Argo
// CD's argocd-cmp-server as the plugin sidecar runs it, and the repo-server's
// GenerateManifests given the request the application controller builds
// from an Application and argocd-cm. Each test builds the example's install/
// kustomization over Argo CD's own install.yaml, from the module the harness
// is built from, so the two are one version; it takes the plugin
// configuration and argocd-cm from that build, as they would reach the
// cluster, and renders the example's Application from a checkout of
// examples/. What no test here can do is pull an image: the workspace's
// trainfn stands in for the image's, named by its path in the plugin's
// command (rewritten in one place, checked) and found first on the PATH by
// kustomize's bare exec path.

const (
	argocdModule = "github.com/argoproj/argo-cd/v3"
	// argocdImageBinary is the binary in trainfn's image: the plugin's command.
	argocdImageBinary = "/trainfn"
	// repoServerPath is a folder on the PATH of Argo CD's image (Ubuntu's
	// default PATH; Argo CD installs its kustomize there), where the
	// kustomize road's repo-server patch puts trainfn.
	repoServerPath = "/usr/local/bin"
)

func TestArgoCDPlugin(t *testing.T) {
	road := setUpPlugin(t)

	sidecar := containerNamed(t, road.repoServer.Spec.Template.Spec.Containers, "trainfn")
	assert.Equal(t, functionImage, sidecar.Image)
	assert.Equal(t, []string{"/var/run/argocd/argocd-cmp-server"}, sidecar.Command, "the sidecar runs Argo CD's CMP server, not trainfn's entrypoint")
	require.NotNil(t, sidecar.SecurityContext)
	assert.Equal(t, int64(999), *sidecar.SecurityContext.RunAsUser, "Argo CD requires uid 999 in plugin sidecars")
	assert.True(t, *sidecar.SecurityContext.RunAsNonRoot)
	// The contract with Argo CD's own pod: an init container puts the CMP
	// server into var-files, and the repo-server looks for sockets in the
	// plugins volume.
	assert.Equal(t, "var-files", mountAt(t, sidecar, "/var/run/argocd").Name)
	copyutil := containerNamed(t, road.repoServer.Spec.Template.Spec.InitContainers, "copyutil")
	assert.Equal(t, "var-files", mountAt(t, copyutil, "/var/run/argocd").Name)
	assert.Contains(t, strings.Join(copyutil.Args, " "), "/var/run/argocd/argocd-cmp-server")
	repoServer := containerNamed(t, road.repoServer.Spec.Template.Spec.Containers, "argocd-repo-server")
	assert.Equal(t, mountAt(t, repoServer, "/home/argocd/cmp-server/plugins").Name, mountAt(t, sidecar, "/home/argocd/cmp-server/plugins").Name)
	assert.NotEqual(t, mountAt(t, repoServer, "/tmp").Name, mountAt(t, sidecar, "/tmp").Name, "Argo CD advises against sharing the repo-server's /tmp")
	install, err := os.ReadFile(filepath.Join(road.workspace, "examples", "argocd", "cmp", "install", "plugin.yaml"))
	require.NoError(t, err)
	assert.Equal(t, string(install), road.plugin, "the sidecar mounts install/plugin.yaml as it is")

	got := road.generate(t, road.application)
	require.Empty(t, got.err, got.log)
	assert.Equal(t, "Plugin", got.sourceType)
	compareExpected(t, "argocd/cmp", got.manifests)

	t.Run("discovered without a name", func(t *testing.T) {
		app := strings.Replace(road.application, "    plugin:\n      name: trainfn\n", "", 1)
		require.NotEqual(t, road.application, app)
		discovered := road.generate(t, app)
		require.Empty(t, discovered.err, discovered.log)
		assert.Equal(t, "Plugin", discovered.sourceType, "trainfn.yaml makes the directory the plugin's")
		assert.Equal(t, got.manifests, discovered.manifests)
	})

	t.Run("other applications left to Argo CD", func(t *testing.T) {
		app := strings.Replace(road.application, "    plugin:\n      name: trainfn\n", "", 1)
		app = strings.Replace(app, "path: examples/argocd/cmp/app", "path: examples/jobs", 1)
		require.Contains(t, app, "path: examples/jobs")
		other := road.generate(t, app)
		require.Empty(t, other.err, other.log)
		assert.Equal(t, "Kustomize", other.sourceType, "a directory without trainfn.yaml is not the plugin's")
		assert.Contains(t, other.manifests, "kind: MPIJob", "kustomize passes the job spec through unexpanded")
	})
}

// TestArgoCDPluginReportsBadSpecs breaks a job spec: the render fails with
// trainfn's messages inside the error Argo CD shows on the Application, and
// no manifest comes back (an empty render would let a sync prune the job).
func TestArgoCDPluginReportsBadSpecs(t *testing.T) {
	road := setUpPlugin(t)
	replaceInFile(t, filepath.Join(road.repo, "examples", "argocd", "cmp", "app", "pytorch-simple.yaml"), "pytorchReplicaSpecs:", "pytorchReplicaSpec:")

	got := road.generate(t, road.application)
	assert.Empty(t, got.manifests)
	assert.True(t, strings.HasPrefix(got.err, `CMP processing failed for application "pytorch-simple": `), got.log)
	assert.Contains(t, got.err, "`"+road.trainfn+" render .` failed exit status 1: ")
	assert.Contains(t, got.err, "\npytorch-simple.yaml:9:3: error: PyTorchJob pytorch-simple: spec.pytorchReplicaSpec: Forbidden: unknown field (did you mean \"pytorchReplicaSpecs\"?)")
}

func TestArgoCDKustomizeBuildOptions(t *testing.T) {
	road := setUpKustomize(t)

	var cm corev1.ConfigMap
	require.NoError(t, yaml.UnmarshalStrict([]byte(road.argocdCM), &cm))
	assert.Equal(t, "--enable-alpha-plugins --enable-exec", cm.Data["kustomize.buildOptions"])
	execPath := functionExecPath(t, filepath.Join(road.workspace, "examples", "argocd", "kustomize", "app", "trainfn-transformer.yaml"))
	assert.Equal(t, "trainfn", execPath, "a bare name, found on kustomize's PATH")
	checkToolCopy(t, road.repoServer, filepath.Join(repoServerPath, execPath))

	got := road.generate(t, road.application)
	require.Empty(t, got.err, got.log)
	assert.Equal(t, "Kustomize", got.sourceType)
	assert.Equal(t, []string{"kustomize build ./examples/argocd/kustomize/app --enable-alpha-plugins --enable-exec"}, got.commands, "Argo CD passes argocd-cm's build options to kustomize")
	compareExpected(t, "argocd/kustomize", got.manifests)

	t.Run("without the build options", func(t *testing.T) {
		delete(cm.Data, "kustomize.buildOptions")
		plain, err := yaml.Marshal(&cm)
		require.NoError(t, err)
		road.argocdCM = string(plain)
		refused := road.generate(t, road.application)
		assert.Empty(t, refused.manifests)
		assert.Contains(t, refused.err, "Error: external plugins disabled; unable to load external plugin 'TrainFn'", "kustomize refuses the function without the flags")
	})
}

// TestArgoCDKustomizeReportsBadSpecs breaks the job spec the kustomization
// builds on: the error Argo CD shows carries trainfn's message.
func TestArgoCDKustomizeReportsBadSpecs(t *testing.T) {
	road := setUpKustomize(t)
	replaceInFile(t, filepath.Join(road.repo, "examples", "jobs", "pi.yaml"), "slotsPerWorker:", "slotPerWorker:")

	got := road.generate(t, road.application)
	assert.Empty(t, got.manifests)
	assert.True(t, strings.HasPrefix(got.err, "`kustomize build <path to cached source>/examples/argocd/kustomize/app --enable-alpha-plugins --enable-exec` failed exit status 1: "), got.log)
	assert.Contains(t, got.err, `MPIJob pi: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
}

// argocdRoad is one example installed and ready to render: Argo CD's
// objects as the example's install/ builds them, and a checkout of
// examples/ for the repo-server.
type argocdRoad struct {
	harness     string
	workspace   string // copyWorkspace's: examples/ and bin/trainfn
	trainfn     string
	repo        string // the checkout: examples/ alone, as Git holds it
	application string
	argocdCM    string
	objects     []string // the installation, as kustomize builds it
	repoServer  appsv1.Deployment
	plugin      string // the plugin road: plugin.yaml as the sidecar mounts it
	sockets     string // the plugin road: the CMP server's socket folder
	path        string // the repo-server's PATH
	tmp         string // the repo-server's TMPDIR
}

func setUpPlugin(t *testing.T) *argocdRoad {
	t.Helper()
	road := setUpRoad(t, "cmp")
	sidecar := containerNamed(t, road.repoServer.Spec.Template.Spec.Containers, "trainfn")
	config := volumeNamed(t, road.repoServer, mountAt(t, sidecar, "/home/argocd/cmp-server/config/plugin.yaml").Name)
	require.NotNil(t, config.ConfigMap, "plugin.yaml comes from a ConfigMap")
	var cm corev1.ConfigMap
	road.object(t, "ConfigMap", config.ConfigMap.Name, &cm)
	road.plugin = cm.Data["plugin.yaml"]

	// The image's /trainfn is the workspace's build here.
	command := "command: [" + argocdImageBinary + ", render, .]"
	require.Contains(t, road.plugin, command)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plugin.yaml"),
		[]byte(strings.Replace(road.plugin, command, "command: ["+road.trainfn+", render, .]", 1)), 0o644))
	road.sockets = startPluginSidecar(t, road.harness, dir)
	return road
}

func setUpKustomize(t *testing.T) *argocdRoad {
	t.Helper()
	road := setUpRoad(t, "kustomize")
	// The repo-server's /usr/local/bin/trainfn is the workspace's build here,
	// found the same way: first on the PATH.
	road.path = filepath.Dir(road.trainfn) + string(os.PathListSeparator) + road.path
	return road
}

func setUpRoad(t *testing.T, example string) *argocdRoad {
	t.Helper()
	road := &argocdRoad{
		harness:   testtool.Find(t, "argocd-harness"),
		workspace: copyWorkspace(t),
		// A folder of its own, as the repo-server's checkouts are
		// (/tmp/_argocd-repo/<uuid>): error messages show the checkout's
		// path as a placeholder, and only the checkout's.
		repo: filepath.Join(t.TempDir(), "checkout"),
		// The repo-server's image has kustomize on its PATH; here it is
		// the one hack/tools.sh builds.
		path: filepath.Dir(testtool.Find(t, "kustomize")) + string(os.PathListSeparator) + os.Getenv("PATH"),
		// Argo CD's kustomize, git and helm wrappers write here.
		tmp: t.TempDir(),
	}
	road.trainfn = filepath.Join(road.workspace, "bin", "trainfn")
	examples := filepath.Join(road.workspace, "examples")
	require.NoError(t, os.CopyFS(filepath.Join(road.repo, "examples"), os.DirFS(examples)))
	app, err := os.ReadFile(filepath.Join(examples, "argocd", example, "application.yaml"))
	require.NoError(t, err)
	road.application = string(app)

	installed := buildArgoCD(t, filepath.Join(examples, "argocd", example, "install"))
	road.objects = installed
	road.object(t, "Deployment", "argocd-repo-server", &road.repoServer)
	road.argocdCM = road.object(t, "ConfigMap", "argocd-cm", &corev1.ConfigMap{})
	return road
}

// argocdResult is what argocd-harness generate answered.
type argocdResult struct {
	manifests  string
	sourceType string
	commands   []string
	err        string // the error the Application would show; "" on success
	log        string // all of standard error, for failure messages
}

// generate renders application (the manifest's text) as Argo CD would.
func (r *argocdRoad) generate(t *testing.T, application string) argocdResult {
	t.Helper()
	dir := t.TempDir()
	app, cm := filepath.Join(dir, "application.yaml"), filepath.Join(dir, "argocd-cm.yaml")
	require.NoError(t, os.WriteFile(app, []byte(application), 0o644))
	require.NoError(t, os.WriteFile(cm, []byte(r.argocdCM), 0o644))
	cmd := exec.Command(r.harness, "generate", "--repo", r.repo, "--application", app, "--argocd-cm", cm)
	cmd.Env = append(os.Environ(), "PATH="+r.path, "TMPDIR="+r.tmp)
	if r.sockets != "" {
		cmd.Env = append(cmd.Env, "ARGOCD_PLUGINSOCKFILEPATH="+r.sockets)
	}
	manifests, log, runErr := run(cmd)
	g := argocdResult{manifests: manifests, log: log}
	lines := strings.Split(g.log, "\n")
	for i, line := range lines {
		if v, ok := strings.CutPrefix(line, "sourceType: "); ok {
			g.sourceType = v
		} else if v, ok := strings.CutPrefix(line, "command: "); ok {
			g.commands = append(g.commands, v)
		} else if v, ok := strings.CutPrefix(line, "error: "); ok {
			// The error is the last thing written, and may span lines.
			g.err = strings.TrimSuffix(strings.Join(append([]string{v}, lines[i+1:]...), "\n"), "\n")
			break
		}
	}
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() == 1 && g.err != "") {
		require.NoError(t, runErr, g.log)
	}
	return g
}

// object decodes the installed object of that kind and name into into,
// strictly, so that a misspelt field in a patch fails here, and returns
// its document.
func (r *argocdRoad) object(t *testing.T, kind, name string, into any) string {
	t.Helper()
	var found []string
	for _, doc := range r.objects {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
		if meta.Kind == kind && meta.Metadata.Name == name {
			found = append(found, doc)
		}
	}
	require.Len(t, found, 1, "installed %s %s", kind, name)
	require.NoError(t, yaml.UnmarshalStrict([]byte(found[0]), into), "%s %s", kind, name)
	return found[0]
}

// buildArgoCD builds an example's install/ kustomization with kustomize,
// Argo CD's install.yaml read from the module argocd-harness is built from
// instead of the URL: the URL must name that module's version.
func buildArgoCD(t *testing.T, install string) []string {
	t.Helper()
	kustomize := testtool.Find(t, "kustomize")
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", argocdModule)
	list.Dir = filepath.Join("..", "hack", "tools", "argocd")
	mod, err := list.Output()
	require.NoError(t, err, "run hack/argocd-tools.sh")
	moduleDir, version, ok := strings.Cut(strings.TrimSpace(string(mod)), " ")
	require.True(t, ok, string(mod))

	dir := filepath.Join(t.TempDir(), "install")
	require.NoError(t, os.CopyFS(dir, os.DirFS(install)))
	url := "https://raw.githubusercontent.com/argoproj/argo-cd/" + version + "/manifests/install.yaml"
	replaceInFile(t, filepath.Join(dir, "kustomization.yaml"), "- "+url+"\n", "- upstream.yaml\n")
	upstream, err := os.ReadFile(filepath.Join(moduleDir, "manifests", "install.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "upstream.yaml"), upstream, 0o644))

	out, stderr, err := kustomizeBuild(kustomize, dir)
	require.NoError(t, err, stderr)
	return strings.Split(out, "\n---\n")
}

// startPluginSidecar runs Argo CD's CMP server on config/plugin.yaml, as the
// sidecar does, and returns the folder of its socket once it listens.
func startPluginSidecar(t *testing.T, harness, config string) string {
	t.Helper()
	sockets, work := t.TempDir(), t.TempDir()
	cmd := exec.Command(harness, "cmp-server", "--config-dir-path", config, "--logformat", "text")
	// The server empties its work folder when it starts: never the default,
	// the machine's /tmp/_cmp_server.
	cmd.Env = append(os.Environ(), "ARGOCD_PLUGINSOCKFILEPATH="+sockets, "ARGOCD_CMP_WORKDIR="+work)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		// The server traps SIGTERM without stopping serving (the kubelet's
		// grace period ends it); kill it, as that would.
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("argocd-cmp-server:\n%s", log.String())
		}
	})

	socket := filepath.Join(sockets, "trainfn.sock")
	testtool.Eventually(t, 30*time.Second, "the CMP server's socket", func(context.Context) error {
		select {
		case <-exited:
			return testtool.GiveUp(errors.New("argocd-cmp-server exited"))
		default:
		}
		_, err := os.Stat(socket)
		return err
	})
	return sockets
}

// functionExecPath is the exec path of a KRM function config.
func functionExecPath(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var config struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	require.NoError(t, yaml.Unmarshal(b, &config))
	var function struct {
		Exec struct {
			Path string `json:"path"`
		} `json:"exec"`
	}
	require.NoError(t, yaml.UnmarshalStrict([]byte(config.Metadata.Annotations["config.kubernetes.io/function"]), &function))
	return function.Exec.Path
}

// checkToolCopy follows a path in the repo-server container back to
// trainfn's image: the container mounts there a file of an emptyDir, an
// init container copies into that volume exactly that file, and copies it
// from the binary of trainfn's image, mounted as an image volume.
func checkToolCopy(t *testing.T, deploy appsv1.Deployment, path string) {
	t.Helper()
	spec := deploy.Spec.Template.Spec
	repoServer := containerNamed(t, spec.Containers, "argocd-repo-server")
	tool := mountAt(t, repoServer, path)
	require.NotEmpty(t, tool.SubPath, "one file of the volume, not a folder over %s", filepath.Dir(path))
	require.NotNil(t, volumeNamed(t, deploy, tool.Name).EmptyDir)

	var copies []corev1.Container
	for _, c := range spec.InitContainers {
		for _, m := range c.VolumeMounts {
			if m.Name == tool.Name {
				copies = append(copies, c)
			}
		}
	}
	require.Len(t, copies, 1, "init containers writing to %s", tool.Name)
	cp := copies[0]
	require.Len(t, cp.Command, 3, "cp SOURCE DEST")
	assert.Equal(t, "cp", filepath.Base(cp.Command[0]))
	dest, inDest := mountHolding(t, cp, cp.Command[2])
	assert.Equal(t, tool.Name, dest.Name)
	assert.Equal(t, tool.SubPath, inDest, "the copy is the file the repo-server mounts")
	source, inSource := mountHolding(t, cp, cp.Command[1])
	image := volumeNamed(t, deploy, source.Name).Image
	require.NotNil(t, image, "the copy's source is an image volume")
	assert.Equal(t, functionImage, image.Reference)
	assert.Equal(t, strings.TrimPrefix(argocdImageBinary, "/"), inSource, "the copy's source is the image's binary")
}

func containerNamed(t *testing.T, containers []corev1.Container, name string) corev1.Container {
	t.Helper()
	for _, c := range containers {
		if c.Name == name {
			return c
		}
	}
	require.Failf(t, "no container", "%s", name)
	return corev1.Container{}
}

func volumeNamed(t *testing.T, deploy appsv1.Deployment, name string) corev1.Volume {
	t.Helper()
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	require.Failf(t, "no volume", "%s", name)
	return corev1.Volume{}
}

func mountAt(t *testing.T, c corev1.Container, path string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return m
		}
	}
	require.Failf(t, "no mount", "%s mounts nothing at %s", c.Name, path)
	return corev1.VolumeMount{}
}

// mountHolding is the mount of c that path lies in, and path within it.
func mountHolding(t *testing.T, c corev1.Container, path string) (corev1.VolumeMount, string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if rel, err := filepath.Rel(m.MountPath, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return m, rel
		}
	}
	require.Failf(t, "no mount", "%s mounts nothing holding %s", c.Name, path)
	return corev1.VolumeMount{}, ""
}
