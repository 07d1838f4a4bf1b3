//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/testtool"
)

const jobChart = "../../charts/trainfn-job"

// TestHelmUpgradeReplacesOnlyChangedJobs upgrades a release of the
// trainfn-job chart, trainfn its post-renderer, as docs/helm.md says: with
// trainfn delete-changed before each helm upgrade. Neither Helm 3 nor 4 can
// replace a Job whose pod template changed (the control below fails on
// field is immutable, and --force is a PUT that fails too): the step
// deletes exactly the Jobs whose pods change, and Helm creates them anew.
// An upgrade with the same values, or with new labels, touches no pod.
func TestHelmUpgradeReplacesOnlyChangedJobs(t *testing.T) {
	trainfn := buildTrainfn(t)
	for _, v := range []struct {
		name, binary string
		postRenderer []string
	}{
		{"Helm 3", "helm", []string{"--post-renderer", trainfn, "--post-renderer-args", "render", "--post-renderer-args", "-"}},
		{"Helm 4", "helm4", []string{"--post-renderer", "trainfn"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			h := helmAt(t, v.binary, trainfn)
			if v.binary == "helm4" {
				h.run(t, "plugin", "install", "../../examples/helm/plugin/trainfn")
			}
			helmUpgrades(t, h, trainfn, v.postRenderer)
		})
	}
}

func helmUpgrades(t *testing.T, h helmCLI, trainfn string, postRenderer []string) {
	ns := kube.Namespace(t)
	// values are pi, as examples/jobs/pi.yaml has it and then edited, as
	// the chart's values file.
	values := func(name string, edit func(string) string) []string {
		pi, err := os.ReadFile("../../examples/jobs/pi.yaml")
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), name+".yaml")
		require.NoError(t, os.WriteFile(path, []byte("job:\n  "+strings.ReplaceAll(edit(string(pi)), "\n", "\n  ")+"\n"), 0o644))
		return slices.Concat([]string{jobChart, "-n", ns, "-f", path}, postRenderer)
	}
	first := values("first", func(s string) string { return s })
	relabelled := values("relabelled", func(s string) string {
		return strings.Replace(s, "  name: pi\n", "  name: pi\n  labels:\n    cost-center: vision\n", 1)
	})
	mpich := values("mpich", func(s string) string { return strings.ReplaceAll(s, "mpi-pi:openmpi", "mpi-pi:mpich") })
	// What the upgrade will apply, as helm template renders it.
	beforeUpgrade := func(args []string, flags ...string) string {
		return deleteChanged(t, trainfn, ns, h.run(t, append([]string{"template", "pi"}, args...)...), flags...)
	}

	h.run(t, append([]string{"install", "pi"}, first...)...)
	checkWorkersRun(t, ns, 2, "mpioperator/mpi-pi:openmpi", "installed")
	jobs, pods := kube.JobUIDs(t, ns), piPodUIDs(t, ns)
	keeps := func(what string) {
		assert.Equal(t, jobs, kube.JobUIDs(t, ns), "%s: the Jobs are the same", what)
		assert.ElementsMatch(t, pods, piPodUIDs(t, ns), "%s: every pod keeps running", what)
	}

	for _, rev := range []struct {
		what string
		args []string
	}{{"the same values", first}, {"a label on the job", relabelled}} {
		said := beforeUpgrade(rev.args)
		assert.Contains(t, said, "Job "+ns+"/pi-launcher: unchanged, kept", rev.what)
		assert.Contains(t, said, "Job "+ns+"/pi-worker: unchanged, kept", rev.what)
		h.run(t, append([]string{"upgrade", "pi"}, rev.args...)...)
		keeps(rev.what)
	}
	launcher, err := kube.Client.BatchV1().Jobs(ns).Get(t.Context(), "pi-launcher", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "vision", launcher.Labels["cost-center"], "the new label is patched onto the Job")

	_, stderr, err := h.try(append([]string{"upgrade", "pi"}, mpich...)...)
	require.Error(t, err, "Helm alone cannot change a Job's pod template")
	assert.Contains(t, stderr, "field is immutable")

	said := beforeUpgrade(mpich, "--dry-run")
	assert.Contains(t, said, "Job "+ns+"/pi-worker: would be deleted (its pods run ")
	assert.Equal(t, jobs, kube.JobUIDs(t, ns), "a dry run deletes nothing")

	said = beforeUpgrade(mpich)
	assert.Contains(t, said, "Job "+ns+"/pi-launcher: deleted (its pods run ")
	assert.Contains(t, said, "Job "+ns+"/pi-worker: deleted (its pods run ")
	h.run(t, append([]string{"upgrade", "pi"}, mpich...)...)
	replaced := kube.JobUIDs(t, ns)
	for _, name := range []string{"pi-launcher", "pi-worker"} {
		assert.NotEqual(t, jobs[name], replaced[name], "Job %s is created anew", name)
	}
	checkWorkersRun(t, ns, 2, "mpioperator/mpi-pi:mpich", "a new image")

	// helm rollback patches as helm upgrade does: the same step first,
	// with the manifest of the revision rolled back to.
	deleteChanged(t, trainfn, ns, h.run(t, "get", "manifest", "pi", "-n", ns, "--revision", "3"))
	h.run(t, "rollback", "pi", "3", "-n", ns)
	checkWorkersRun(t, ns, 2, "mpioperator/mpi-pi:openmpi", "rolled back")
	assert.NotEqual(t, replaced["pi-worker"], kube.JobUIDs(t, ns)["pi-worker"])
}

// deleteChanged runs trainfn delete-changed, with flags, on what is about
// to be applied in ns, and returns what it said.
func deleteChanged(t *testing.T, trainfn, ns, manifest string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(trainfn, append([]string{"delete-changed", "--kubeconfig", kube.Kubeconfig, "-n", ns, "-"}, flags...)...)
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// helmCLI runs one Helm binary against the suite's API server, with homes
// of its own and trainfn on PATH (for Helm 4's post-renderer plugin).
type helmCLI struct {
	path string
	env  []string
}

func helmAt(t *testing.T, binary, trainfn string) helmCLI {
	home := t.TempDir()
	return helmCLI{path: testtool.Find(t, binary), env: append(os.Environ(),
		"KUBECONFIG="+kube.Kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"PATH="+filepath.Dir(trainfn)+string(os.PathListSeparator)+os.Getenv("PATH"),
	)}
}

func (h helmCLI) try(args ...string) (string, string, error) {
	cmd := exec.Command(h.path, args...)
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func (h helmCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, err := h.try(args...)
	require.NoError(t, err, "helm %s: %s", strings.Join(args, " "), stderr)
	return out
}
