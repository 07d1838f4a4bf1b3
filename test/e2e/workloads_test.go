//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/trainfn/trainfn/render/mpi"
)

// settle bounds how long controllers, the scheduler and kwok may take to
// turn applied objects into ready pods and endpoints.
const settle = 90 * time.Second

// checkWorkloads checks, against the cluster, what a rendered output
// promises: each Job's pods run, with the hostnames and subdomain the
// hostfile names; the headless Service lists each host under its name; and
// the launcher's wait-for-workers script, as the API server holds it,
// reaches every worker by those names.
func checkWorkloads(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	var launchers []*corev1.Pod
	// promised holds the hostname of every pod the output's Jobs create,
	// true if it should be running now, false if its Job is suspended.
	promised := map[string]bool{}
	for _, obj := range objs {
		if obj.GetAPIVersion() != "batch/v1" || obj.GetKind() != "Job" {
			continue
		}
		var job batchv1.Job
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &job))
		for _, hostname := range jobHostnames(&job) {
			promised[hostname] = !suspended(&job)
		}
		for _, pod := range jobPods(t, ns, &job) {
			if waitContainer(pod) != nil {
				launchers = append(launchers, pod)
			}
		}
	}
	for _, obj := range objs {
		if obj.GetKind() != "ConfigMap" {
			continue
		}
		if _, ok, _ := unstructured.NestedString(obj.Object, "data", mpi.HostfileKey); ok {
			cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
			require.NoError(t, err)
			for _, host := range hostfileHosts(cm.Data[mpi.HostfileKey]) {
				hostname, _, _ := strings.Cut(host, ".")
				up, ok := promised[hostname]
				require.True(t, ok, "hostfile %s names %s, which no Job of the output creates", cm.Name, host)
				if up {
					checkHost(t, ns, host)
				}
			}
		}
	}
	for _, launcher := range launchers {
		checkWaitForWorkers(t, ns, launcher)
	}
}

// jobHostnames are the hostnames of the pods a Job creates: for an Indexed
// Job the Job controller's <job>-<index>, else the template's, if any.
func jobHostnames(job *batchv1.Job) []string {
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion && job.Spec.Completions != nil {
		var names []string
		for i := range *job.Spec.Completions {
			names = append(names, fmt.Sprintf("%s-%d", job.Name, i))
		}
		return names
	}
	if h := job.Spec.Template.Spec.Hostname; h != "" {
		return []string{h}
	}
	return nil
}

func suspended(job *batchv1.Job) bool {
	return job.Spec.Suspend != nil && *job.Spec.Suspend
}

// jobPods waits for the pods a Job promises, running and ready, and checks
// the hostname each gets: the template's, or for an Indexed Job the Job
// controller's <job>-<index>. A suspended Job promises none.
func jobPods(t *testing.T, ns string, job *batchv1.Job) []*corev1.Pod {
	want := int32(1)
	if job.Spec.Parallelism != nil {
		want = *job.Spec.Parallelism
	}
	if suspended(job) {
		want = 0
	}
	selector := batchv1.JobNameLabel + "=" + job.Name
	var pods []*corev1.Pod
	waitUntil(t, fmt.Sprintf("%d running pods of Job %s", want, job.Name), func() error {
		list, err := kube.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		pods = pods[:0]
		var waiting []string
		for i := range list.Items {
			pod := &list.Items[i]
			pods = append(pods, pod)
			if !running(pod) {
				waiting = append(waiting, fmt.Sprintf("%s is %s %s", pod.Name, pod.Status.Phase, conditionMessages(pod)))
			}
		}
		if int32(len(pods)) != want || len(waiting) > 0 {
			return fmt.Errorf("%d pods, not %d; %s; %s", len(pods), want, strings.Join(waiting, "; "), jobConditions(ns, job.Name))
		}
		return nil
	})
	if want == 0 {
		t.Logf("Job %s is suspended and has no pods, as it should", job.Name)
	}
	template := job.Spec.Template.Spec
	for _, pod := range pods {
		hostname := template.Hostname
		if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
			hostname = job.Name + "-" + pod.Annotations[batchv1.JobCompletionIndexAnnotation]
		}
		require.Equal(t, hostname, pod.Spec.Hostname, "hostname of %s", pod.Name)
		require.Equal(t, template.Subdomain, pod.Spec.Subdomain, "subdomain of %s", pod.Name)
	}
	return pods
}

// hostfileHosts are the host names of a hostfile in either format,
// OpenMPI's "host slots=N" or Hydra's "host:N".
func hostfileHosts(hostfile string) []string {
	var hosts []string
	for _, line := range strings.Split(hostfile, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		host, _, _ := strings.Cut(fields[0], ":")
		hosts = append(hosts, host)
	}
	return hosts
}

// checkHost checks that a hostfile entry <hostname>.<subdomain> is a
// running pod, and that the headless Service <subdomain> lists that pod,
// ready, under its hostname: exactly what cluster DNS answers the name from.
func checkHost(t *testing.T, ns, host string) {
	hostname, subdomain, ok := strings.Cut(host, ".")
	require.True(t, ok, "hostfile entry %q has no subdomain, so cluster DNS cannot resolve it", host)
	ctx := context.Background()
	pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var ip string
	for _, pod := range pods.Items {
		if pod.Spec.Hostname == hostname && pod.Spec.Subdomain == subdomain && running(&pod) {
			ip = pod.Status.PodIP
		}
	}
	require.NotEmpty(t, ip, "no running pod has hostname %s and subdomain %s", hostname, subdomain)
	_, err = kube.Client.CoreV1().Services(ns).Get(ctx, subdomain, metav1.GetOptions{})
	require.NoError(t, err, "the hostfile's subdomain %s is no Service", subdomain)
	waitUntil(t, "Service "+subdomain+" to list "+hostname, func() error {
		for _, name := range endpointNames(t, ns)[ip] {
			if name == host {
				return nil
			}
		}
		return fmt.Errorf("no ready endpoint %s with address %s", hostname, ip)
	})
}

// endpointNames are the names cluster DNS gives each ready endpoint of the
// namespace's headless Services, by address: <hostname>.<service>, and the
// full <hostname>.<service>.<namespace>.svc.cluster.local.
func endpointNames(t *testing.T, ns string) map[string][]string {
	list, err := kube.Client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	names := map[string][]string{}
	for _, slice := range list.Items {
		service := slice.Labels[discoveryv1.LabelServiceName]
		for _, ep := range slice.Endpoints {
			if ep.Hostname == nil || len(ep.Addresses) == 0 || ep.Conditions.Ready == nil || !*ep.Conditions.Ready {
				continue
			}
			short := *ep.Hostname + "." + service
			names[ep.Addresses[0]] = append(names[ep.Addresses[0]], short, short+"."+ns+".svc.cluster.local")
		}
	}
	return names
}

func running(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return false
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func conditionMessages(pod *corev1.Pod) string {
	var msgs []string
	for _, cond := range pod.Status.Conditions {
		if cond.Message != "" {
			msgs = append(msgs, cond.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

// jobConditions says why a Job may have no pods, for a failing test.
func jobConditions(ns, name string) string {
	ctx := context.Background()
	job, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var says []string
	for _, cond := range job.Status.Conditions {
		says = append(says, fmt.Sprintf("%s=%s %s", cond.Type, cond.Status, cond.Message))
	}
	events, err := kube.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning {
				says = append(says, e.InvolvedObject.Name+": "+e.Message)
			}
		}
	}
	slices.Sort(says)
	return strings.Join(slices.Compact(says), "; ")
}

// waitUntil polls check until it succeeds, failing the test with check's
// last complaint after settle.
func waitUntil(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
