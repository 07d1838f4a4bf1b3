package status

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// ReplicaStatus counts the pods of one of a job's roles by their state, as
// training-operator's and mpi-operator's replicaStatuses do, with the
// ready ones besides.
type ReplicaStatus struct {
	// Active pods are neither finished nor being deleted.
	Active int32 `json:"active,omitempty"`
	// Ready pods are active, running and ready, as the phase counts them.
	Ready     int32 `json:"ready,omitempty"`
	Succeeded int32 `json:"succeeded,omitempty"`
	Failed    int32 `json:"failed,omitempty"`
}

// replicaStatuses counts a job's pods by the role of the workload that
// controls them (launcher, master, worker, or a DIJob's task name); every
// role of a workload is listed, with no pod too.
//
// Pods are counted, not the workloads' status counters, as package phase
// counts them. kstatus (github.com/fluxcd/cli-utils/pkg/kstatus), which
// Flux's health checks use, would tell a StatefulSet's rollout
// from its controller's counters (readyReplicas, currentRevision), which
// lag its pods, and so disagree with READY in the same output; for a Job
// it is of no use, as it calls a running Job Current, ready, where a
// training job that has not ended is not done.
func replicaStatuses(objs phase.Objects) map[string]ReplicaStatus {
	roles := map[types.UID]string{}
	out := map[string]ReplicaStatus{}
	for _, w := range workloadMetas(objs) {
		role := w.Labels[handoff.JobRoleLabel]
		if role == "" {
			continue
		}
		roles[w.UID] = role
		out[role] = ReplicaStatus{}
	}
	for _, p := range ownedPods(objs) {
		role, ok := roles[metav1.GetControllerOfNoCopy(p).UID]
		if !ok {
			continue
		}
		s := out[role]
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			s.Succeeded++
		case p.Status.Phase == corev1.PodFailed:
			s.Failed++
		case p.DeletionTimestamp == nil:
			s.Active++
			if ready, _ := phase.Ready(p); ready {
				s.Ready++
			}
		}
		out[role] = s
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// workloadMetas are the metadata of a job's workloads.
func workloadMetas(objs phase.Objects) []*metav1.ObjectMeta {
	var out []*metav1.ObjectMeta
	for i := range objs.Jobs {
		out = append(out, &objs.Jobs[i].ObjectMeta)
	}
	for i := range objs.StatefulSets {
		out = append(out, &objs.StatefulSets[i].ObjectMeta)
	}
	return out
}
