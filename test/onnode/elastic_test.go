//go:build e2e

package onnode

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/trainfn/trainfn/reconciler/discovery"
)

// TestElasticDiscoveryFollowsScaling scales an elastic MPIJob's workers
// 2 → 3 → 2 with kubectl scale and requires the launcher, reading
// /etc/mpi/discover_hosts.sh as horovodrun does, to see each count, the
// hosts in index order: the reconciler rewrites the script in the job's
// ConfigMap and touches the launcher's pod, and the kubelet refreshes the
// mounted file.
func TestElasticDiscoveryFollowsScaling(t *testing.T) {
	t.Parallel()
	s := submit(t, []string{"testdata/elastic-discovery.yaml"}, nil)
	launcher := s.runningPod("batch.kubernetes.io/job-name=elastic-launcher", jobTimeout)
	for step, workers := range []int{2, 3, 2} {
		began := time.Now()
		if step > 0 {
			s.kubectl(nil, "scale", "statefulset/elastic-worker", fmt.Sprintf("--replicas=%d", workers))
		}
		var want []string
		for i := range workers {
			// mpi-operator v2's format: the host alone.
			want = append(want, fmt.Sprintf("elastic-worker-%d.elastic", i))
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

// TestElasticPyTorchJobReformsItsWorld scales an elastic PyTorchJob's
// workers 2 → 3 → 2, with kubectl scale and through a
// HorizontalPodAutoscaler, and requires torchrun's agents to form each
// world anew (testdata/torch-elastic-membership.yaml): every process
// reports the world it joined, with distinct ranks. The node has no
// metrics server, so the autoscaler is moved by its bounds: a count below
// minReplicas or above maxReplicas is corrected through the StatefulSet's
// scale subresource, the path a metric takes. The job then ends when its
// processes do, and the reconciler scales its StatefulSet to zero.
func TestElasticPyTorchJobReformsItsWorld(t *testing.T) {
	for _, scaler := range []string{"kubectl-scale", "autoscaler"} {
		t.Run(scaler, func(t *testing.T) {
			t.Parallel()
			s := submit(t, []string{"testdata/torch-elastic-membership.yaml"}, nil)
			for step, workers := range []int{2, 3, 2} {
				began := time.Now()
				switch {
				case step == 0:
				case scaler == "kubectl-scale":
					s.kubectl(nil, "scale", "statefulset/torch-elastic-worker", fmt.Sprintf("--replicas=%d", workers))
				case step == 1:
					s.kubectl(nil, "autoscale", "statefulset/torch-elastic-worker", "--min=3", "--max=3", "--cpu=80%")
				default:
					s.kubectl(nil, "patch", "hpa/torch-elastic-worker", "--type=merge", "-p", `{"spec":{"minReplicas":2,"maxReplicas":2}}`)
				}
				s.formsWorld("torch-elastic-worker", workers, step+1, 3*time.Minute)
				t.Logf("%d workers: torchrun's agents formed a world of %d %s after the change", workers, workers, time.Since(began).Round(10*time.Millisecond))
			}
			s.kubectl(nil, "exec", "torch-elastic-worker-0", "--container", "pytorch", "--", "touch", "/tmp/done")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				set, err := kube.Client.AppsV1().StatefulSets(s.ns).Get(ctx, "torch-elastic-worker", metav1.GetOptions{})
				return err == nil && set.Spec.Replicas != nil && *set.Spec.Replicas == 0, nil
			})
			require.NoError(t, err, "the job did not end once its processes did")
		})
	}
}

var worldLine = regexp.MustCompile(`(?m)^host=(\S+) rank=(\d+) world=(\d+) restart=\d+$`)

// formsWorld waits until the workers of index 0 to n-1 each last
// reported a world of n, with n distinct ranks, and worker 0 has reported
// worlds times: the agents formed a new world. The workers are a
// StatefulSet's or an Indexed Job's pods.
func (s *submission) formsWorld(workers string, n, worlds int, within time.Duration) {
	s.t.Helper()
	var last string
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ranks := map[string]bool{}
		var b strings.Builder
		byIndex, err := s.workerPods(ctx, workers)
		if err != nil {
			return false, nil
		}
		for i := range n {
			pod, ok := byIndex[i]
			if !ok {
				return false, nil
			}
			out, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "pytorch"}).DoRaw(ctx)
			if err != nil {
				return false, nil
			}
			lines := worldLine.FindAllStringSubmatch(string(out), -1)
			if len(lines) == 0 || (i == 0 && len(lines) < worlds) {
				return false, nil
			}
			m := lines[len(lines)-1]
			fmt.Fprintf(&b, "%s ", m[0])
			if m[3] != strconv.Itoa(n) {
				last = b.String()
				return false, nil
			}
			ranks[m[2]] = true
		}
		last = b.String()
		return len(ranks) == n, nil
	})
	require.NoError(s.t, err, "no world of %d formed within %s; the pods last said: %s", n, within, last)
}

// workerPods are the names of the workers' pods not being deleted, by
// index: the pods of a StatefulSet, or of an Indexed Job, named workers.
func (s *submission) workerPods(ctx context.Context, workers string) (map[int]string, error) {
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	byIndex := map[int]string{}
	for _, p := range pods.Items {
		owner := metav1.GetControllerOf(&p)
		if owner == nil || owner.Name != workers || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if i, ok := discovery.Index(&p); ok {
			byIndex[i] = p.Name
		}
	}
	return byIndex, nil
}
