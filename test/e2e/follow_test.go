//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/test/testtool"
)

// followJobs are the jobs TestStatusFollowsAndWaits follows: ok ends well,
// bad's worker fails and its Job does not retry it.
const followJobs = `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ok
  labels:
    team: follow
spec:
  pytorchReplicaSpecs:
    Master: &replica
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/mnist:1
    Worker:
      <<: *replica
      replicas: 1
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bad
  labels:
    team: follow
spec:
  runPolicy:
    backoffLimit: 0
  pytorchReplicaSpecs:
    Master: &replica
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/mnist:1
    Worker:
      <<: *replica
      replicas: 1
`

// TestStatusFollowsAndWaits runs `trainfn status -w` and `trainfn wait`
// beside jobs as a CI pipeline would: wait returns 0 once a job succeeded,
// 1 with the job's reason once it failed, and -w prints each change.
func TestStatusFollowsAndWaits(t *testing.T) {
	t.Parallel()
	trainfn := buildTrainfn(t)
	ns := kube.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, serverSideApply(ctx, ns, renderWith(t, trainfn, followJobs)))
	status := func(args ...string) statusRun {
		return runStatus(t, trainfn, append([]string{"status", "--kubeconfig", kube.Kubeconfig}, args...)...)
	}
	conn := []string{"--kubeconfig", kube.Kubeconfig, "-n", ns}

	watch := testtool.Start(t, trainfn, append([]string{"status", "-w", "--no-headers", "-l", "team=follow"}, conn...)...)
	succeeded := testtool.Start(t, trainfn, append([]string{"wait", "ok", "--for=condition=Succeeded", "--timeout=2m"}, conn...)...)
	failed := testtool.Start(t, trainfn, append([]string{"wait", "pytorchjob/bad", "--for=condition=Succeeded", "--timeout=2m"}, conn...)...)

	r := runStatus(t, trainfn, append([]string{"wait", "ok", "bad", "--for=condition=Running", "--timeout=1m"}, conn...)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "pytorchjob.kubeflow.org/ok condition met\npytorchjob.kubeflow.org/bad condition met\n", r.stdout)
	r = runStatus(t, trainfn, append([]string{"wait", "ok", "--for=condition=Succeeded", "--timeout=0"}, conn...)...)
	assert.Equal(t, 1, r.code, "--timeout=0 checks once: %s", r.stderr)
	assert.Contains(t, r.stderr, "timed out waiting for condition=Succeeded on ok")

	updatePodStatus(t, ns, "batch.kubernetes.io/job-name=ok-master", func(p *corev1.Pod) { exitPod(p, 0) })
	updatePodStatus(t, ns, "batch.kubernetes.io/job-name=bad-worker-0", func(p *corev1.Pod) { exitPod(p, 1) })

	ok := ran(succeeded.Wait(t, 3*time.Minute))
	assert.Equal(t, statusRun{stdout: "pytorchjob.kubeflow.org/ok condition met\n"}, ok)
	bad := ran(failed.Wait(t, 3*time.Minute))
	assert.Equal(t, 1, bad.code, bad.stderr)
	assert.Empty(t, bad.stdout)
	assert.Contains(t, bad.stderr, "pytorchjob.kubeflow.org/bad: condition=Succeeded will not be met: the job Failed (")
	assert.Contains(t, bad.stderr, "BackoffLimitExceeded")

	// -w printed each job as it changed, ending with its end.
	awaitStatus(t, status, ns, map[string]string{
		"ok": "PyTorchJob Succeeded 0/0 0", "bad": "PyTorchJob Failed 0/0 1", // the failed pod counts as replaced
	})
	out := ran(watch.Interrupt(t))
	assert.Equal(t, 0, out.code, "an interrupted watch exits 0: %s", out.stderr)
	phases := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.stdout), "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			if p := phases[f[0]]; len(p) == 0 || p[len(p)-1] != f[2] {
				phases[f[0]] = append(p, f[2])
			}
		}
	}
	assert.Equal(t, "Succeeded", last(phases["ok"]), "status -w:\n%s", out.stdout)
	assert.Equal(t, "Failed", last(phases["bad"]), "status -w:\n%s", out.stdout)
	assert.Contains(t, phases["ok"], "Running", "status -w:\n%s", out.stdout)
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// ran is how a background trainfn ended, as runStatus reports it.
func ran(e testtool.Ended) statusRun {
	return statusRun{code: e.Code, stdout: e.Stdout, stderr: e.Stderr}
}
