//go:build e2e

package onnode

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBrokenRendersFail breaks a render on purpose, as a regression of
// trainfn would, and requires the job to fail where the kubelet and ssh
// catch it: the suite's jobs prove the rendered fields, not just that the
// objects were accepted. The launcher gives up waiting for the workers
// after waitTimeout, and its Job on its first failure, so that each case
// ends in moments.
func TestBrokenRendersFail(t *testing.T) {
	for _, tt := range []struct {
		name, manifest, job string
		// breakIt changes a rendered object.
		breakIt func(obj map[string]any)
		// says is what the launcher's wait-for-workers step prints.
		says string
	}{{
		// Without the subdomain, a worker's hostname is not in the job's
		// headless Service's DNS: the launcher cannot resolve it.
		name: "hostname-without-subdomain", manifest: "testdata/pi-root.yaml", job: "pi-root",
		breakIt: func(obj map[string]any) {
			if obj["kind"] == "Job" && strings.HasSuffix(name(obj), "-worker") {
				delete(podSpec(obj), "subdomain")
			}
		},
		says: "Could not resolve hostname",
	}, {
		// A root's private key that others may read: ssh refuses to use
		// it, and no worker lets the launcher in.
		name: "private-key-readable-by-all", manifest: "testdata/pi-root.yaml", job: "pi-root",
		breakIt: func(obj map[string]any) {
			for _, v := range list(podSpec(obj), "volumes") {
				if secret, ok := v.(map[string]any)["secret"].(map[string]any); ok {
					secret["defaultMode"] = 0o644
				}
			}
		},
		says: "UNPROTECTED PRIVATE KEY FILE",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			launcher := tt.job + "-launcher"
			s := submit(t, []string{tt.manifest}, func(obj map[string]any) {
				tt.breakIt(obj)
				if obj["kind"] == "Job" && name(obj) == launcher {
					failFast(obj)
				}
			})
			succeeded, took := s.finish(launcher, jobTimeout)
			out := s.logs("batch.kubernetes.io/job-name="+launcher, waitStep)
			require.False(t, succeeded, "the broken job succeeded:\n%s", out)
			t.Logf("the broken job failed %s after kubectl apply; wait-for-workers said:\n%s", took.Round(10*time.Millisecond), out)
			assert.Contains(t, out, tt.says)
		})
	}
}

// waitStep is the launcher's init container that waits for the workers.
const waitStep = "wait-for-workers"

// waitTimeout is how long a broken job's launcher waits for its workers.
const waitTimeout = "15"

// failFast makes a launcher Job fail at its first failure, its
// wait-for-workers step give up after waitTimeout. Its pod is not
// restarted, so that it stays, with what it printed, once the Job failed.
func failFast(job map[string]any) {
	job["spec"].(map[string]any)["backoffLimit"] = 0
	podSpec(job)["restartPolicy"] = "Never"
	waitFor(job, waitTimeout)
}

// waitFor has a launcher Job's wait-for-workers step give up after the
// seconds given.
func waitFor(job map[string]any, seconds string) {
	for _, c := range list(podSpec(job), "initContainers") {
		c := c.(map[string]any)
		if c["name"] != waitStep {
			continue
		}
		for _, e := range list(c, "env") {
			if e := e.(map[string]any); e["name"] == "TRAINFN_WAIT_TIMEOUT_SECONDS" {
				e["value"] = seconds
			}
		}
	}
}
