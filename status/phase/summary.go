package phase

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Objects are one job's live objects: everything that carries its
// job-name label. The reconciler's cache and `trainfn status` list the
// same.
type Objects struct {
	Jobs         []batchv1.Job
	StatefulSets []appsv1.StatefulSet
	Pods         []corev1.Pod
}

// Summary is a job's phase, why, and the counts it was decided from.
type Summary struct {
	Phase Phase `json:"phase"`
	// Reason is one word, CamelCase, for programs: one of the Reason
	// constants.
	Reason string `json:"reason"`
	// Message says it for people, naming the workload or pod concerned.
	Message string `json:"message,omitempty"`
	// Expected is how many pods the job should have now, of every role
	// (a launcher or master counts, as it must run too); Ready is how
	// many of them run and are ready.
	Expected int32 `json:"expected"`
	Ready    int32 `json:"ready"`
	// Restarts counts container restarts of the live pods and the pods
	// the Jobs replaced after they failed.
	Restarts  int32      `json:"restarts"`
	Workloads []Workload `json:"workloads"`
}

// Workload is the count of one of the job's Jobs or StatefulSets.
type Workload struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Role is the job-role label: launcher, master, worker, or a DIJob's
	// task name.
	Role     string `json:"role,omitempty"`
	Expected int32  `json:"expected"`
	// Pods counts its live pods: neither finished nor being deleted.
	Pods     int32 `json:"pods"`
	Ready    int32 `json:"ready"`
	Restarts int32 `json:"restarts"`
}

// Reasons, by the phase they explain.
const (
	// Unknown.
	ReasonNoWorkloads = "NoWorkloads"

	// Succeeded or Failed.
	ReasonEnded              = "Ended" // as the reconciler recorded it
	ReasonEndingJobSucceeded = "EndingJobSucceeded"
	ReasonEndingJobFailed    = "EndingJobFailed"
	ReasonJobFailed          = "JobFailed"
	ReasonWorkerExited       = "WorkerExited" // the ending container exited with 0
	ReasonJobsCompleted      = "JobsCompleted"

	// Pending.
	ReasonSuspended       = "Suspended"
	ReasonWorkersNotSet   = "WorkersNotSet"
	ReasonPodsMissing     = "PodsMissing"
	ReasonSchedulingGated = "SchedulingGated"
	ReasonUnscheduled     = "Unscheduled"
	ReasonNoPodsExpected  = "NoPodsExpected"

	// Starting.
	ReasonPodsStarting = "PodsStarting"

	// Running.
	ReasonAllReady = "AllReady"

	// Running or Restarting, held while a Job catches up with a pod of it
	// that is done.
	ReasonPodsSettling = "PodsSettling"

	// Restarting.
	ReasonPodRestarted = "PodRestarted"
	ReasonPodReplaced  = "PodReplaced"
	ReasonWasRunning   = "WasRunning"
)

// Of derives a job's phase from its live objects, by the rules of the
// package documentation. prev is the phase last recorded, "" when none: it
// tells a job that had been running (Restarting) from one starting.
func Of(prev Phase, objs Objects) Summary {
	ws := workloadsOf(objs)
	if len(ws) == 0 {
		return Summary{Phase: Unknown, Reason: ReasonNoWorkloads, Message: "no Job or StatefulSet of the job exists", Workloads: []Workload{}}
	}
	if e, ok := end(ws); ok {
		for _, w := range ws {
			w.expected = 0
		}
		return summarize(ws, e.Phase, e.Reason, e.Message)
	}
	s := summarize(ws, "", "", "")
	progress := fmt.Sprintf("%d of %d pods ready", s.Ready, s.Expected)
	if w := suspended(ws); w != nil {
		s.Phase, s.Reason, s.Message = Pending, ReasonSuspended, fmt.Sprintf("Job %s is suspended; %s", w.name, progress)
		return s
	}
	// Each workload's Ready is at most its Expected, so the sums are
	// equal only when every workload has all its pods ready.
	if s.Expected > 0 && s.Ready == s.Expected {
		s.Phase, s.Reason, s.Message = Running, ReasonAllReady, progress
		return s
	}
	if why := settling(ws); why != "" && prev != "" && !prev.Ended() {
		s.Phase, s.Reason, s.Message = prev, ReasonPodsSettling, join(why, progress)
		return s
	}
	short := shortfallOf(ws)
	if reason, why := restarted(prev, ws); reason != "" {
		detail := short.message
		if detail == "" {
			detail = notReady(ws)
		}
		s.Phase, s.Reason, s.Message = Restarting, reason, join(why, progress, detail)
		return s
	}
	if short.reason != "" {
		s.Phase, s.Reason, s.Message = Pending, short.reason, join(short.message, progress)
		return s
	}
	s.Phase, s.Reason, s.Message = Starting, ReasonPodsStarting, join(progress, notReady(ws))
	return s
}

// summarize counts the workloads into a Summary of the phase given.
func summarize(ws []*workload, phase Phase, reason, message string) Summary {
	s := Summary{Phase: phase, Reason: reason, Message: message, Workloads: make([]Workload, 0, len(ws))}
	for _, w := range ws {
		c := w.count()
		s.Expected += c.Expected
		s.Ready += c.Ready
		s.Restarts += c.Restarts
		s.Workloads = append(s.Workloads, c)
	}
	return s
}

// join puts the non-empty parts of a message together.
func join(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += p
	}
	return out
}
