package phase_test

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// The job every test builds is "j"; its objects are the API's own types,
// shaped as the API server and its controllers leave them.

// meta is a workload's metadata: named, labelled as rendered, with a UID as
// the API server gives it, and annotated with key-value pairs.
func meta(name, role string, annotations ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Labels: handoff.RoleLabels("j", role)}
	if len(annotations) > 0 {
		m.Annotations = map[string]string{}
		for i := 0; i+1 < len(annotations); i += 2 {
			m.Annotations[annotations[i]] = annotations[i+1]
		}
	}
	return m
}

// indexedJob is an Indexed Job of n pods, as trainfn renders workers and
// DIJob tasks.
func indexedJob(name, role string, n int32, annotations ...string) batchv1.Job {
	return batchv1.Job{
		ObjectMeta: meta(name, role, annotations...),
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(n), Completions: ptr.To(n),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
		},
	}
}

// with is a changed copy of a Job, for a case to build on; the Job itself,
// which other cases share, is left alone.
func with(j batchv1.Job, change func(*batchv1.Job)) batchv1.Job {
	c := j.DeepCopy()
	change(c)
	return *c
}

// condition gives a Job a true condition, as the Job controller sets it.
func condition(t batchv1.JobConditionType, reason string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason})
	}
}

// statefulSet is a StatefulSet of replicas pods; nil leaves them unset.
func statefulSet(name, role string, replicas *int32, annotations ...string) appsv1.StatefulSet {
	return appsv1.StatefulSet{ObjectMeta: meta(name, role, annotations...), Spec: appsv1.StatefulSetSpec{Replicas: replicas}}
}

// podState is what a pod's kubelet, scheduler or controller made of it.
type podState func(*corev1.Pod)

// podOf is pod i of a workload, which is its controller. Without states
// it is created and not scheduled yet.
func podOf(owner metav1.Object, kind string, i int, states ...podState) corev1.Pod {
	apiVersion := "batch/v1"
	if kind == "StatefulSet" {
		apiVersion = "apps/v1"
	}
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d", owner.GetName(), i), Namespace: "ns",
			Labels: map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(i)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true),
			}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "trainer"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for k, v := range owner.GetLabels() {
		p.Labels[k] = v
	}
	for _, s := range states {
		s(&p)
	}
	return p
}

func jobPod(j *batchv1.Job, i int, states ...podState) corev1.Pod {
	return podOf(j, "Job", i, states...)
}

func setPod(s *appsv1.StatefulSet, i int, states ...podState) corev1.Pod {
	return podOf(s, "StatefulSet", i, states...)
}

// jobPods are pods 0..n-1 of a Job, all in the same states.
func jobPods(j *batchv1.Job, n int, states ...podState) []corev1.Pod {
	var pods []corev1.Pod
	for i := range n {
		pods = append(pods, jobPod(j, i, states...))
	}
	return pods
}

func setPods(s *appsv1.StatefulSet, n int, states ...podState) []corev1.Pod {
	var pods []corev1.Pod
	for i := range n {
		pods = append(pods, setPod(s, i, states...))
	}
	return pods
}

// unschedulable: the scheduler found no node, and said why.
func unschedulable(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}
}

// gated: the pod waits for the allocator, as a preemptible DIJob's does.
func gated(p *corev1.Pod) {
	p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: handoff.AllocationGate}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
}

// creating: placed on a node, its containers not started yet.
func creating(p *corev1.Pod) {
	p.Spec.NodeName = "node-1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
}

// runningReady: it runs, and its readiness probe (if any) passes.
func runningReady(p *corev1.Pod) { running(p, true) }

// runningNotReady: it runs, and is not ready.
func runningNotReady(p *corev1.Pod) { running(p, false) }

func running(p *corev1.Pod, ready bool) {
	p.Spec.NodeName = "node-1"
	p.Status.Phase = corev1.PodRunning
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: status},
	}
	restarts := int32(0)
	if len(p.Status.ContainerStatuses) > 0 {
		restarts = p.Status.ContainerStatuses[0].RestartCount
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Ready: ready, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
}

// restarted: the kubelet restarted its container n times; give it before
// the running state.
func restarted(n int32) podState {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: n}}
	}
}

// initializing: placed, an init container (the launcher's
// wait-for-workers) still running.
func initializing(p *corev1.Pod) {
	creating(p)
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "wait-for-workers",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	p.Status.ContainerStatuses[0].State.Waiting.Reason = "PodInitializing"
}

// succeeded: its containers exited with 0.
func succeeded(p *corev1.Pod) {
	p.Spec.NodeName = "node-1"
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}
}

// failed: its container exited with 1 and was not restarted.
func failed(p *corev1.Pod) {
	p.Spec.NodeName = "node-1"
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
}

// deleting: it is being deleted, still running until its grace period ends.
func deleting(p *corev1.Pod) {
	now := metav1.Now()
	p.DeletionTimestamp = &now
}

// exitedAndRestarted: an elastic PyTorch agent that ended training, exited
// with 0 and was started again by the StatefulSet's restart policy.
func exitedAndRestarted(p *corev1.Pod) {
	running(p, true)
	p.Status.ContainerStatuses[0].RestartCount = 1
	p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
}

// objects gathers a job's objects for Of.
func objects(jobs []batchv1.Job, sets []appsv1.StatefulSet, pods ...[]corev1.Pod) phase.Objects {
	o := phase.Objects{Jobs: jobs, StatefulSets: sets}
	for _, ps := range pods {
		o.Pods = append(o.Pods, ps...)
	}
	return o
}

func jobs(js ...batchv1.Job) []batchv1.Job               { return js }
func sets(ss ...appsv1.StatefulSet) []appsv1.StatefulSet { return ss }
func pods(ps ...corev1.Pod) []corev1.Pod                 { return ps }
