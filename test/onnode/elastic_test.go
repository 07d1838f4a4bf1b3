//go:build e2e

package onnode

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestElasticDiscoveryFollowsScaling scales an elastic MPIJob's workers
// 2 → 3 → 2 with kubectl scale and requires the launcher, reading
// /etc/mpi/discover_hosts.sh as horovodrun does, to see each count, the
// hosts in index order: the reconciler rewrites the script in the job's
// ConfigMap and touches the launcher's pod, and the kubelet refreshes the
// mounted file.
func TestElasticDiscoveryFollowsScaling(t *testing.T) {
	t.Parallel()
	s := submit(t, []string{"testdata/elastic-discovery.yaml"}, "elastic", nil)
	launcher := s.runningPod("batch.kubernetes.io/job-name=elastic-launcher", jobTimeout)
	for step, workers := range []int{2, 3, 2} {
		began := time.Now()
		if step > 0 {
			s.kubectl(nil, "scale", "statefulset/elastic-worker", fmt.Sprintf("--replicas=%d", workers))
		}
		var want []string
		for i := range workers {
			want = append(want, fmt.Sprintf("elastic-worker-%d.elastic:1", i))
		}
		s.seesHosts(launcher, strings.Join(want, " "), 3*time.Minute)
		t.Logf("%d workers: the launcher listed them %s after the change", workers, time.Since(began).Round(10*time.Millisecond))
	}
	s.kubectl(nil, "exec", launcher, "--", "touch", "/tmp/done")
	s.succeed("elastic-launcher", time.Minute)
}

// runningPod waits for the pod the selector picks to run its main
// container, and returns its name.
func (s *submission) runningPod(selector string, within time.Duration) string {
	s.t.Helper()
	var name string
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) != 1 {
			return false, nil
		}
		name = pods.Items[0].Name
		return pods.Items[0].Status.Phase == corev1.PodRunning, nil
	})
	require.NoError(s.t, err, "no running pod %s within %s", selector, within)
	return name
}

var hostsLine = regexp.MustCompile(`(?m)^hosts: (.*?) ?$`)

// seesHosts waits until the last hosts line the launcher printed is want.
func (s *submission) seesHosts(pod, want string, within time.Duration) {
	s.t.Helper()
	var last string
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		out, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, nil
		}
		lines := hostsLine.FindAllStringSubmatch(string(out), -1)
		if len(lines) == 0 {
			return false, nil
		}
		last = lines[len(lines)-1][1]
		return last == want, nil
	})
	require.NoError(s.t, err, "the launcher's discover_hosts.sh lists %q, not %q, after %s", last, want, within)
}
