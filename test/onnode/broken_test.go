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
		// says is what the launcher's wait for the workers prints.
		says string
		// waits: the launcher waits on rather than fail.
		waits bool
	}{{
		// Without the subdomain, a worker's hostname is not in the job's
		// headless Service's DNS: the launcher cannot resolve it, and
		// waits, as for workers that wait for room, saying why.
		name: "hostname-without-subdomain", manifest: "testdata/pi-root.yaml", job: "pi-root", waits: true,
		breakIt: func(obj map[string]any) {
			if obj["kind"] == "Job" && strings.HasSuffix(name(obj), "-worker") {
				delete(podSpec(obj), "subdomain")
			}
		},
		says: "to be placed (no worker resolves yet): ssh: Could not resolve hostname",
	}, {
		// A root's private key that others may read: ssh refuses to use
		// it, and no worker lets the launcher in.
		name: "private-key-readable-by-all", manifest: "testdata/pi-root.yaml", job: "pi-root",
		breakIt: func(obj map[string]any) {
			// The launcher's key is a source of a projected volume, beside
			// its ssh configuration; the workers' a Secret volume.
			for _, v := range list(podSpec(obj), "volumes") {
				for _, kind := range []string{"secret", "projected"} {
					if volume, ok := v.(map[string]any)[kind].(map[string]any); ok {
						volume["defaultMode"] = 0o644
					}
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
			if tt.waits {
				// The timer of waitTimeout has not started: the job runs on.
				deadline := time.Now().Add(jobTimeout)
				for !strings.Contains(s.logs("batch.kubernetes.io/job-name="+launcher, ""), tt.says) {
					require.True(t, time.Now().Before(deadline), "the launcher does not say %q:\n%s", tt.says, s.logs("batch.kubernetes.io/job-name="+launcher, ""))
					time.Sleep(time.Second)
				}
				time.Sleep(30 * time.Second) // twice waitTimeout
				ended, _, _ := s.ends(launcher, time.Second)
				assert.False(t, ended, "the launcher gave up waiting for workers that never resolved")
				t.Logf("the launcher waits, saying:\n%s", s.logs("batch.kubernetes.io/job-name="+launcher, ""))
				return
			}
			succeeded, took := s.finish(launcher, jobTimeout)
			out := s.logs("batch.kubernetes.io/job-name="+launcher, "")
			require.False(t, succeeded, "the broken job succeeded:\n%s", out)
			t.Logf("the broken job failed %s after kubectl apply; its wait said:\n%s", took.Round(10*time.Millisecond), out)
			assert.Contains(t, out, tt.says)
		})
	}
}

// waitTimeout is how long a broken job's launcher waits for its workers.
const waitTimeout = "15"

// failFast makes a launcher Job fail at its first failure, its wait for
// the workers give up after waitTimeout. Its pod is not
// restarted, so that it stays, with what it printed, once the Job failed.
func failFast(job map[string]any) {
	job["spec"].(map[string]any)["backoffLimit"] = 0
	podSpec(job)["restartPolicy"] = "Never"
	waitFor(job, waitTimeout)
}

// waitFor has a launcher Job's wait for the workers give up after the
// seconds given: its container's, which runs launch.sh.
func waitFor(job map[string]any, seconds string) {
	for _, c := range list(podSpec(job), "containers") {
		c := c.(map[string]any)
		for _, e := range list(c, "env") {
			if e := e.(map[string]any); e["name"] == "TRAINFN_WAIT_TIMEOUT_SECONDS" {
				e["value"] = seconds
			}
		}
	}
}
