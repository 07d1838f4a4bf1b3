package status

import (
	"cmp"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/status/phase"
)

// Condition is one of a job's conditions, as training-operator's and
// mpi-operator's JobCondition and metav1.Condition have it, so that
// `kubectl wait --for=condition=Succeeded` and jsonpath queries written for
// the operators' objects read it unchanged.
type Condition struct {
	Type   string                 `json:"type"`
	Status metav1.ConditionStatus `json:"status"`
	// Reason is the job's kind and what happened, as the operators name
	// it (MPIJobRunning, PyTorchJobSucceeded), or, for Failed, the
	// failing Job's reason (BackoffLimitExceeded) where it has one.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// LastTransitionTime is read from the live objects (see
	// conditionsOf), as no job object keeps its history; left out when
	// none keeps it.
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitzero"`
}

// The condition types, training-operator's and mpi-operator's, and for a
// TrainJob also Trainer's Complete.
const (
	ConditionCreated    = "Created"
	ConditionRunning    = "Running"
	ConditionRestarting = "Restarting"
	ConditionSuspended  = "Suspended"
	ConditionSucceeded  = "Succeeded"
	ConditionFailed     = "Failed"
	// ConditionComplete is Trainer's name for a TrainJob's Succeeded.
	ConditionComplete = "Complete"
)

// conditionOrder is the order a job's conditions are listed in: the order
// the operators add them in over a job's life.
var conditionOrder = []string{ConditionCreated, ConditionSuspended, ConditionRunning, ConditionRestarting,
	ConditionSucceeded, ConditionComplete, ConditionFailed}

// conditionsOf derives a job's conditions from its phase and live
// objects, with the operators' semantics: Created from the first
// workload's creation; Running true while the job runs, false once it
// restarts, is suspended or ends; Restarting true while it restarts, gone
// once it runs again; Suspended true while a job not ended is held, and
// false after a resume; Succeeded or Failed at the end. A condition that
// never held is left out, as the operators leave it, except Running, which
// they set false on a suspension or at the end even when the job never
// ran.
//
// No job object keeps when each condition changed, so each time is the one
// the objects that decide the condition keep (see the functions below):
// the same objects give the same times, whoever reads them and when.
func conditionsOf(j Job, ending phase.Ending, ended bool, objs phase.Objects) []Condition {
	c := conditions{kind: j.Kind, name: j.Name}
	c.set(ConditionCreated, metav1.ConditionTrue, "Created", fmt.Sprintf("%s %s is created", j.Kind, j.Name), j.Created)
	if ended {
		c.ended(ending, objs)
		return c.sorted()
	}
	s := j.Summary
	if s.Reason == phase.ReasonSuspended {
		at := suspendedAt(objs)
		c.set(ConditionSuspended, metav1.ConditionTrue, "Suspended", s.Message, at)
		c.set(ConditionRunning, metav1.ConditionFalse, "Suspended", s.Message, at)
		return c.sorted()
	}
	c.resumed(objs)
	switch s.Phase {
	case phase.Running:
		c.set(ConditionRunning, metav1.ConditionTrue, "Running", s.Message, runningSince(objs))
	case phase.Restarting:
		at := disruptedAt(objs)
		c.set(ConditionRunning, metav1.ConditionFalse, "Restarting", s.Message, at)
		c.set(ConditionRestarting, metav1.ConditionTrue, "Restarting", s.Message, at)
	}
	return c.sorted()
}

// conditions collects a job's conditions, by type.
type conditions struct {
	kind, name string
	list       []Condition
}

// set adds a condition; its reason is the kind and what happened, as the
// operators form it (training-operator's NewReason).
func (c *conditions) set(t string, status metav1.ConditionStatus, what, message string, at metav1.Time) {
	c.list = append(c.list, Condition{Type: t, Status: status, Reason: c.kind + what, Message: message, LastTransitionTime: at})
}

// ended adds the conditions of a job that ended: Running false, at the
// end; Succeeded (and a TrainJob's Complete) or Failed; and whether it was
// resumed, the only part of its suspension left to tell: the reconciler
// suspends a Job to stop its pods once the job has ended, which is no
// holding.
func (c *conditions) ended(e phase.Ending, objs phase.Objects) {
	c.resumed(objs)
	message := e.Message
	if e.Phase == phase.Succeeded {
		c.set(ConditionRunning, metav1.ConditionFalse, "Succeeded", message, e.At)
		c.set(ConditionSucceeded, metav1.ConditionTrue, "Succeeded", message, e.At)
		if c.kind == "TrainJob" {
			c.set(ConditionComplete, metav1.ConditionTrue, "Succeeded", message, e.At)
		}
		return
	}
	c.set(ConditionRunning, metav1.ConditionFalse, "Failed", message, e.At)
	c.set(ConditionFailed, metav1.ConditionTrue, "Failed", message, e.At)
	// As mpi-operator does with its launcher's, the failing Job's reason
	// and message say why; a Job controller's message is the clearer
	// one, and the phase's message names the Job that failed.
	if jc := e.Condition; jc != nil && jc.Reason != "" {
		failed := &c.list[len(c.list)-1]
		failed.Reason = jc.Reason
		if jc.Message != "" {
			failed.Message = jc.Message
		}
	}
}

// resumed adds Suspended false when a Job of the job was resumed: the Job
// controller keeps its Suspended condition false (JobResumed) from then,
// at the time of the resume.
func (c *conditions) resumed(objs phase.Objects) {
	var at metav1.Time
	for i := range objs.Jobs {
		if jc := jobCondition(&objs.Jobs[i], batchv1.JobSuspended); jc != nil && jc.Status == corev1.ConditionFalse && at.Before(&jc.LastTransitionTime) {
			at = jc.LastTransitionTime
		}
	}
	if !at.IsZero() {
		c.set(ConditionSuspended, metav1.ConditionFalse, "Resumed", fmt.Sprintf("%s %s is resumed", c.kind, c.name), at)
	}
}

// sorted is the conditions in conditionOrder.
func (c *conditions) sorted() []Condition {
	slices.SortStableFunc(c.list, func(a, b Condition) int {
		return cmp.Compare(slices.Index(conditionOrder, a.Type), slices.Index(conditionOrder, b.Type))
	})
	return c.list
}

// jobCondition is a Job's condition of a type, nil when it has none.
func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}
