//go:build e2e

package onnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/test/node"
	"github.com/trainfn/trainfn/test/testtool"
)

// conditionsLine is what `trainfn status -w` prints of each change: the
// job, its phase and its conditions with their statuses.
const conditionsLine = `jsonpath={.metadata.name} {.status.phase} {range .status.conditions[*]}{.type}={.status},{end}{"\n"}`

// TestOperableJobs follows two PyTorchJobs on the node as an SRE and a CI
// pipeline would: `trainfn status -w` from before they exist to their
// ends, `trainfn wait` for each, the progress the one reports through
// Kubeflow Trainer's contract in `trainfn status` and the reconciler's
// /metrics, and Argo CD's health of their objects, with the health check
// trainfn ships, running and ended.
func TestOperableJobs(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	conn := []string{"--kubeconfig", kube.Kubeconfig, "-n", ns}
	watch := testtool.Start(t, trainfn, append([]string{"status", "-w", "-o", conditionsLine}, conn...)...)
	s := submitTo(t, ns, []string{"testdata/torch-progress.yaml", "testdata/torch-fails.yaml"}, nil)

	succeeded := testtool.Start(t, trainfn, append([]string{"wait", "progress", "--for=condition=Succeeded", "--timeout=" + jobTimeout.String()}, conn...)...)
	failed := testtool.Start(t, trainfn, append([]string{"wait", "fails", "--for=condition=Succeeded", "--timeout=" + jobTimeout.String()}, conn...)...)

	running := runTrainfn(t, append([]string{"wait", "progress", "--for=condition=Running", "--timeout=" + jobTimeout.String()}, conn...)...)
	require.Equal(t, 0, running.code, running.stderr)
	assert.Equal(t, "Progressing", argoHealth(t, s, "progress"), "a running job")

	ok := ended(succeeded.Wait(t, jobTimeout+time.Minute))
	require.Equal(t, 0, ok.code, "%s\n%s", ok.stderr, s.logs("training.kubeflow.org/job-name=progress", ""))
	assert.Equal(t, "pytorchjob.kubeflow.org/progress condition met\n", ok.stdout)
	bad := ended(failed.Wait(t, jobTimeout+time.Minute))
	assert.Equal(t, 1, bad.code, bad.stderr)
	assert.Contains(t, bad.stderr, "pytorchjob.kubeflow.org/fails: condition=Succeeded will not be met: the job Failed (BackoffLimitExceeded)")

	// The reconciler has stopped what it stops, and Argo CD sees the end.
	assert.Eventually(t, func() bool { return argoHealth(t, s, "progress") == "Healthy" }, time.Minute, time.Second, "a succeeded job")
	assert.Eventually(t, func() bool { return argoHealth(t, s, "fails") == "Degraded" }, time.Minute, time.Second, "a failed job")

	out := ended(watch.Interrupt(t))
	assert.Equal(t, 0, out.code, "an interrupted watch exits 0: %s", out.stderr)
	t.Logf("trainfn status -w:\n%s", out.stdout)
	seen := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.stdout), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			seen[f[0]] = append(seen[f[0]], f[1]+" "+holding(f[2]))
		}
	}
	require.NotEmpty(t, seen["progress"])
	assert.Contains(t, seen["progress"][0], "Created,", "the first change seen")
	assert.Contains(t, strings.Join(seen["progress"], "\n"), "Running Created,Running,")
	assert.Equal(t, "Succeeded Created,Succeeded,", seen["progress"][len(seen["progress"])-1])
	for _, line := range seen["progress"] {
		assert.NotContains(t, line, "Restarting", "a job that ends well never reads as a restart: its Job counting its done pod is no restart")
	}
	require.NotEmpty(t, seen["fails"])
	assert.Equal(t, "Failed Created,Failed,", seen["fails"][len(seen["fails"])-1])

	wide := runTrainfn(t, append([]string{"status", "fails", "-o", "wide", "--no-headers"}, conn...)...)
	require.Equal(t, 0, wide.code, wide.stderr)
	assert.Contains(t, wide.stdout, "BackoffLimitExceeded", "the last failure's reason")

	// The last report, in trainfn status and in /metrics.
	doc := runTrainfn(t, append([]string{"status", "progress", "-o", "json"}, conn...)...)
	require.Equal(t, 0, doc.code, doc.stderr)
	var job struct {
		Status struct {
			TrainerStatus struct {
				ProgressPercentage *int32 `json:"progressPercentage"`
				Metrics            []struct{ Name, Value string }
			} `json:"trainerStatus"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc.stdout), &job), doc.stdout)
	require.NotNil(t, job.Status.TrainerStatus.ProgressPercentage, doc.stdout)
	assert.Equal(t, int32(100), *job.Status.TrainerStatus.ProgressPercentage)
	names := []string{}
	for _, m := range job.Status.TrainerStatus.Metrics {
		names = append(names, m.Name)
	}
	assert.ElementsMatch(t, []string{"loss", "step"}, names)

	metrics := reconcilerMetrics(t)
	assert.Contains(t, metrics, `trainfn_job_progress_percentage{job="progress",kind="PyTorchJob",namespace="`+ns+`"} 100`)
	assert.Contains(t, metrics, `trainfn_jobs_successful_total{kind="PyTorchJob",namespace="`+ns+`"} 1`)
	assert.Contains(t, metrics, `trainfn_jobs_failed_total{kind="PyTorchJob",namespace="`+ns+`"} 1`)
}

// holding keeps, of "Created=True,Running=False,", the conditions that
// hold: "Created,".
func holding(conditions string) string {
	var out strings.Builder
	for c := range strings.SplitSeq(conditions, ",") {
		if typ, ok := strings.CutSuffix(c, "=True"); ok {
			out.WriteString(typ + ",")
		}
	}
	return out.String()
}

// argoHealth is Argo CD's health, by its own code and the health check
// trainfn ships, of an Application holding the job's objects as they are
// live.
func argoHealth(t *testing.T, s *submission, job string) string {
	t.Helper()
	harness, ok := testtool.Built("argocd-harness")
	require.True(t, ok, "argocd-harness is not built: run hack/tools.sh")
	kubectl, ok := testtool.Built("kubectl")
	require.True(t, ok)
	live, err := exec.Command(kubectl, "--kubeconfig", kube.Kubeconfig, "-n", s.ns, "get", "jobs,statefulsets,services,configmaps",
		"-l", "training.kubeflow.org/job-name="+job, "-o", "yaml").Output()
	require.NoError(t, err, stderrOf(err))
	cmd := exec.Command(harness, "health", "--argocd-cm", filepath.Join(repoRoot(), "examples", "argocd", "health", "argocd-cm-patch.yaml"))
	cmd.Stdin = bytes.NewReader(live)
	out, err := cmd.Output()
	require.NoError(t, err, stderrOf(err))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	app, found := strings.CutPrefix(lines[len(lines)-1], "Application\t")
	require.True(t, found, "%s", out)
	t.Logf("Argo CD's health of %s:\n%s", job, out)
	return app
}

// reconcilerMetrics is what the reconciler serves on /metrics, through
// the API server's proxy to its Service.
func reconcilerMetrics(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := kube.Client.CoreV1().Services(node.ReconcilerNamespace).
		ProxyGet("http", node.ReconcilerRelease+"-metrics", "metrics", "/metrics", nil).DoRaw(ctx)
	require.NoError(t, err)
	return string(out)
}

// ended reads how a background trainfn ended as runTrainfn reports it.
func ended(e testtool.Ended) ran { return ran{e.Code, e.Stdout, e.Stderr} }

// ran is how a run of trainfn ended.
type ran struct {
	code           int
	stdout, stderr string
}

func runTrainfn(t *testing.T, args ...string) ran {
	t.Helper()
	cmd := exec.Command(trainfn, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("trainfn %s: %v", strings.Join(args, " "), err)
	}
	return ran{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}
