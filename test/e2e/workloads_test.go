//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
)

// settle bounds how long controllers, the scheduler and kwok may take to
// turn applied objects into ready pods and endpoints.
const settle = 90 * time.Second

// checkWorkloads checks, against the cluster, what a rendered output
// promises: each Job's and StatefulSet's pods run, with the hostnames and
// subdomain the hostfile names; the headless Service lists each host under
// its name; the launcher's wait-for-workers script, as the API server holds
// it, reaches every worker by those names; and each PodGroup is one its
// gang scheduler could start.
func checkWorkloads(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	var launchers []*corev1.Pod
	// promised holds the hostname of every pod the output's Jobs and
	// StatefulSets create, true if it should be running now, false if its
	// Job is suspended or left to another controller; indexed, those of
	// Indexed Jobs and of StatefulSets: workers.
	promised, indexed := map[string]bool{}, map[string]bool{}
	// workerPods are the pods of the workers' Jobs, as the Job controller
	// named them.
	var workerPods []*corev1.Pod
	for _, obj := range objs {
		if obj.GetAPIVersion() != "apps/v1" || obj.GetKind() != "StatefulSet" {
			continue
		}
		var sts appsv1.StatefulSet
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &sts))
		gated := len(sts.Spec.Template.Spec.SchedulingGates) > 0
		for _, pod := range statefulSetPods(t, ns, &sts) {
			promised[pod.Spec.Hostname], indexed[pod.Spec.Hostname] = !gated, true
		}
	}
	for _, obj := range objs {
		if obj.GetAPIVersion() != "batch/v1" || obj.GetKind() != "Job" {
			continue
		}
		var job batchv1.Job
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &job))
		for _, hostname := range jobHostnames(&job) {
			indexed[hostname] = isIndexed(&job)
			promised[hostname] = !suspended(&job) && !elsewhere(&job) && !heldForDependencies(&job)
		}
		for _, pod := range jobPods(t, ns, &job) {
			if waitContainer(pod) != nil {
				launchers = append(launchers, pod)
			}
			if job.Labels[handoff.JobRoleLabel] == handoff.RoleWorker {
				workerPods = append(workerPods, pod)
			}
		}
	}
	checkExecPods(t, objs, workerPods)
	workers := 0
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
				if up && indexed[hostname] {
					workers++
				}
			}
		}
	}
	// The hosts the pods' environment names (PyTorch's master and
	// rendezvous) are pods of the output, running under those names; only
	// a rendezvous may be a server of the user's (rdzvHost).
	for _, addr := range environmentHosts(t, objs) {
		hostname, _, _ := strings.Cut(addr.host, ".")
		up, ok := promised[hostname]
		if !ok {
			require.Equal(t, "PET_RDZV_ENDPOINT", addr.variable, "%s names %s, which no Job of the output creates", addr.variable, addr.host)
			t.Logf("the rendezvous %s is no pod of the output", addr.host)
			continue
		}
		if up {
			checkAddress(t, ns, addr.host)
		}
	}
	// A launcher waits for running workers; the check below must not go
	// quietly unrun because the wait container could not be recognised.
	// A TrainJob's launcher waits at its dependsOn gate instead, which
	// trainfn's reconciler lifts once the nodes are ready (test/onnode).
	if workers > 0 && !slices.ContainsFunc(objs, heldObject(t)) {
		require.NotEmpty(t, launchers, "the hostfile names running workers, but no launcher pod runs the wait-for-workers script")
	}
	for _, launcher := range launchers {
		if reachesWorkersByRsh(launcher) {
			// Its script runs rsh, which needs an rsh server where the
			// workers are; test/mpirun runs it, and mpirun after it,
			// against real rsh servers.
			t.Logf("not run: the wait-for-workers of %s reaches the workers over rsh, which test/mpirun runs with rsh servers", launcher.Name)
			continue
		}
		if reachesWorkersByExec(launcher) {
			// Its script runs kubectl exec, which the API server serves
			// through the worker's kubelet; kwok runs no containers to
			// exec into. TestKubectlExecLauncherRBAC checks that the
			// launcher may exec into its workers, and nothing else.
			t.Logf("not run: the wait-for-workers of %s reaches the workers through kubectl exec, which kwok's pods do not serve", launcher.Name)
			continue
		}
		checkWaitForWorkers(t, ns, launcher)
	}
	checkPodGroups(t, ns, objs)
}

// statefulSetPods waits for the pods a StatefulSet promises, running and
// ready, <name>-<ordinal> each, and checks that each is its own hostname
// in the StatefulSet's Service, as the StatefulSet controller names them.
func statefulSetPods(t *testing.T, ns string, sts *appsv1.StatefulSet) []*corev1.Pod {
	start := int32(0)
	if sts.Spec.Ordinals != nil {
		start = sts.Spec.Ordinals.Start
	}
	var names []string
	for i := range ptr.Deref(sts.Spec.Replicas, 1) {
		names = append(names, fmt.Sprintf("%s-%d", sts.Name, start+i))
	}
	var pods []*corev1.Pod
	err := waitUntil(fmt.Sprintf("%d running pods of StatefulSet %s", len(names), sts.Name), func(ctx context.Context) error {
		pods = pods[:0]
		var waiting []string
		for _, name := range names {
			pod, err := kube.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			pods = append(pods, pod)
			if len(sts.Spec.Template.Spec.SchedulingGates) > 0 {
				// Its pods wait for the reconciler to lift their gate (a
				// preemptible DIJob's, pinned to the allocator's node):
				// created, not scheduled.
				if !gatedPending(pod) {
					waiting = append(waiting, fmt.Sprintf("%s is %s %s, not waiting at its scheduling gate", pod.Name, pod.Status.Phase, conditionMessages(pod)))
				}
				continue
			}
			if !running(pod) {
				waiting = append(waiting, fmt.Sprintf("%s is %s %s", pod.Name, pod.Status.Phase, conditionMessages(pod)))
			}
		}
		if len(waiting) > 0 {
			return errors.New(strings.Join(waiting, "; "))
		}
		return nil
	})
	require.NoError(t, err)
	for _, pod := range pods {
		require.Equal(t, pod.Name, pod.Spec.Hostname, "hostname of %s", pod.Name)
		require.Equal(t, sts.Spec.ServiceName, pod.Spec.Subdomain, "subdomain of %s", pod.Name)
	}
	return pods
}

// gatedPending tells whether a pod waits at a scheduling gate.
func gatedPending(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonSchedulingGated {
			return pod.Spec.NodeName == ""
		}
	}
	return false
}

// reachesWorkersByRsh reports whether a launcher starts processes on its
// workers over rsh: its MPI variables name rsh as mpirun's remote shell.
func reachesWorkersByRsh(pod *corev1.Pod) bool {
	for _, e := range waitContainer(pod).Env {
		if e.Value == mpi.RshAgent && slices.Contains([]string{"OMPI_MCA_plm_rsh_agent", "I_MPI_HYDRA_BOOTSTRAP_EXEC", "HYDRA_LAUNCHER_EXEC"}, e.Name) {
			return true
		}
	}
	return false
}

// reachesWorkersByExec reports whether a launcher starts processes on its
// workers through kubectl exec: its MPI config projects the kubexec script.
func reachesWorkersByExec(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for _, item := range v.ConfigMap.Items {
			if item.Key == mpi.KubexecKey {
				return true
			}
		}
	}
	return false
}

// jobHostnames are the hostnames of the pods a Job creates.
func jobHostnames(job *batchv1.Job) []string {
	var names []string
	for i := range ptr.Deref(job.Spec.Completions, 1) {
		if name := podHostname(job, strconv.Itoa(int(i))); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func suspended(job *batchv1.Job) bool {
	return ptr.Deref(job.Spec.Suspend, false)
}

func isIndexed(job *batchv1.Job) bool {
	return ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}

// elsewhere reports whether a controller other than the built-in Job
// controller runs the Job (MultiKueue, say), so that none here makes pods.
func elsewhere(job *batchv1.Job) bool {
	return job.Spec.ManagedBy != nil && *job.Spec.ManagedBy != batchv1.JobControllerName
}

// jobPods waits for the pods a Job promises, running and ready, and checks
// the hostname each gets. A suspended Job promises none, once the Job
// controller has seen it; nor does a Job another controller manages.
func jobPods(t *testing.T, ns string, job *batchv1.Job) []*corev1.Pod {
	if elsewhere(job) {
		t.Logf("Job %s is managed by %s, not by the Job controller here", job.Name, *job.Spec.ManagedBy)
	} else if suspended(job) {
		err := waitUntil(fmt.Sprintf("Job %s to be suspended", job.Name), func(ctx context.Context) error {
			current, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range current.Status.Conditions {
				if cond.Type == batchv1.JobSuspended && cond.Status == corev1.ConditionTrue {
					return nil
				}
			}
			return errors.New("no Suspended condition yet")
		})
		require.NoError(t, err)
	}
	want := int32(0)
	if !suspended(job) && !elsewhere(job) {
		want = ptr.Deref(job.Spec.Parallelism, 1)
	}
	selector := batchv1.JobNameLabel + "=" + job.Name
	var pods []*corev1.Pod
	err := waitUntil(fmt.Sprintf("%d running pods of Job %s", want, job.Name), func(ctx context.Context) error {
		list, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		pods = pods[:0]
		var waiting []string
		for i := range list.Items {
			pod := &list.Items[i]
			pods = append(pods, pod)
			if heldForDependencies(job) {
				// Only trainfn's reconciler, not running here, lets them
				// out: their Jobs' pods are made, and wait at the gate.
				if !slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == handoff.DependsOnGate }) {
					waiting = append(waiting, pod.Name+" is not held at "+handoff.DependsOnGate)
				}
				continue
			}
			if !running(pod) {
				waiting = append(waiting, fmt.Sprintf("%s is %s %s", pod.Name, pod.Status.Phase, conditionMessages(pod)))
			}
		}
		if int32(len(pods)) != want || len(waiting) > 0 {
			return fmt.Errorf("%d pods, not %d; %s", len(pods), want, strings.Join(waiting, "; "))
		}
		return nil
	})
	require.NoError(t, err, jobConditions(ns, job.Name))
	if want == 0 {
		t.Logf("Job %s has no pods, as it should", job.Name)
	}
	for _, pod := range pods {
		require.Equal(t, podHostname(job, pod.Annotations[batchv1.JobCompletionIndexAnnotation]), pod.Spec.Hostname, "hostname of %s", pod.Name)
		require.Equal(t, job.Spec.Template.Spec.Subdomain, pod.Spec.Subdomain, "subdomain of %s", pod.Name)
	}
	return pods
}

// heldObject tells whether an object of the output is a Job whose pods
// wait at a TrainJob's dependsOn gate.
func heldObject(t *testing.T) func(*unstructured.Unstructured) bool {
	return func(obj *unstructured.Unstructured) bool {
		if obj.GetAPIVersion() != "batch/v1" || obj.GetKind() != "Job" {
			return false
		}
		var job batchv1.Job
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &job))
		return heldForDependencies(&job)
	}
}

// heldForDependencies tells whether a Job's pods wait at the scheduling
// gate of a TrainJob's dependsOn, which the reconciler lifts.
func heldForDependencies(job *batchv1.Job) bool {
	return slices.ContainsFunc(job.Spec.Template.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == handoff.DependsOnGate })
}

// podHostname is the hostname of a Job's pod of some completion index: for
// an Indexed Job the Job controller's <job>-<index>, else the template's.
func podHostname(job *batchv1.Job, index string) string {
	if isIndexed(job) {
		return job.Name + "-" + index
	}
	return job.Spec.Template.Spec.Hostname
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

// environmentHost is a host a container's environment names.
type environmentHost struct{ variable, host string }

// environmentHosts are the hosts that the containers of the output's Jobs
// are told to reach: MASTER_ADDR, PET_MASTER_ADDR, PET_RDZV_ENDPOINT.
func environmentHosts(t *testing.T, objs []*unstructured.Unstructured) []environmentHost {
	var hosts []environmentHost
	for _, obj := range objs {
		if obj.GetAPIVersion() != "batch/v1" || obj.GetKind() != "Job" {
			continue
		}
		var job batchv1.Job
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &job))
		for _, c := range job.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				switch e.Name {
				case "MASTER_ADDR", "PET_MASTER_ADDR":
					hosts = append(hosts, environmentHost{e.Name, e.Value})
				case "PET_RDZV_ENDPOINT":
					host, _, _ := strings.Cut(e.Value, ":")
					hosts = append(hosts, environmentHost{e.Name, host})
				case "DI_NODES":
					// DI-engine's workers, every one by its host.
					for _, host := range strings.Split(e.Value, ",") {
						hosts = append(hosts, environmentHost{e.Name, host})
					}
				}
			}
		}
	}
	slices.SortFunc(hosts, func(a, b environmentHost) int {
		return strings.Compare(a.variable+" "+a.host, b.variable+" "+b.host)
	})
	return slices.Compact(hosts)
}

// checkAddress checks that an address a pod is given resolves in the
// namespace to the running pod it means: <hostname>.<subdomain> through the
// job's Service, or a bare hostname through a headless Service of that name
// that lists exactly that pod, ready.
func checkAddress(t *testing.T, ns, host string) {
	if strings.Contains(host, ".") {
		checkHost(t, ns, host)
		return
	}
	ctx := context.Background()
	pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var ip string
	for _, pod := range pods.Items {
		if pod.Spec.Hostname == host && running(&pod) {
			ip = pod.Status.PodIP
		}
	}
	require.NotEmpty(t, ip, "no running pod has hostname %s", host)
	err = waitUntil("Service "+host+" to list the pod "+host, func(ctx context.Context) error {
		list, err := kube.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + host})
		if err != nil {
			return err
		}
		var ready []string
		for _, slice := range list.Items {
			for _, ep := range slice.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					ready = append(ready, ep.Addresses...)
				}
			}
		}
		if !slices.Equal(ready, []string{ip}) {
			return fmt.Errorf("Service %s lists %v, not only %s", host, ready, ip)
		}
		return nil
	})
	require.NoError(t, err)
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
	err = waitUntil("Service "+subdomain+" to list "+hostname, func(ctx context.Context) error {
		names, err := endpointNames(ctx, ns)
		if err != nil {
			return err
		}
		if !slices.Contains(names[ip], host) {
			return fmt.Errorf("no ready endpoint %s with address %s", hostname, ip)
		}
		return nil
	})
	require.NoError(t, err)
}

// endpointNames are the names cluster DNS gives each ready endpoint of the
// namespace's headless Services, by address: <hostname>.<service>, and the
// full <hostname>.<service>.<namespace>.svc.cluster.local.
func endpointNames(ctx context.Context, ns string) (map[string][]string, error) {
	list, err := kube.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
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
	return names, nil
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

// waitUntil polls check until it succeeds, or returns check's last
// complaint after settle.
func waitUntil(what string, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, settle, true, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, last)
	}
	return nil
}
