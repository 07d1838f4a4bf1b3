package jobphase

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/status/phase"
)

// The suffixes of the events' reasons, training-operator's: a reason is
// the job's kind and one of them (pkg/util/status.go, NewReason), as
// PyTorchJobRunning; mpi-operator names its MPIJob's the same way.
const (
	Created    = "Created"
	Running    = "Running"
	Restarting = "Restarting"
	Suspended  = "Suspended"
	Resumed    = "Resumed"
	Succeeded  = "Succeeded"
	Failed     = "Failed"
)

// noteLimit is the most an event's note may hold (events.k8s.io/v1).
const noteLimit = 1024

// Transition is a change of a job's recorded phase.
type Transition struct {
	// Kind is the job's kind: MPIJob, PyTorchJob, DIJob or TrainJob.
	Kind string
	// From is the phase recorded before; "" when none was.
	From phase.Phase
	// To is the phase now, with its reason and message.
	To phase.Summary
	// Resumed tells that one of the job's Jobs was suspended and has been
	// resumed since (its Suspended condition is False).
	Resumed bool
}

// Event is one event a transition emits.
type Event struct {
	// Type is corev1.EventTypeNormal or EventTypeWarning.
	Type    string
	Reason  string
	Message string
}

// Starts tells whether the transition begins a run of the job: no phase
// was recorded (the reconciler sees the job for the first time), or the
// one recorded was an end and the job runs again (it changed in Git and
// its workloads were renewed).
func (t Transition) Starts() bool {
	return t.From == "" || t.From.Ended() && !t.To.Phase.Ended()
}

// Resumes tells whether the transition takes a job a queue or its
// runPolicy held suspended out of Pending: a Job of it was resumed.
func (t Transition) Resumes() bool {
	return t.Resumed && t.From == phase.Pending && !t.Starts() && t.To.Phase != phase.Pending && !t.To.Phase.Ended()
}

// FirstRun tells whether the transition is the job's reaching Running
// from its start, not back from a restart.
func (t Transition) FirstRun() bool {
	return t.To.Phase == phase.Running && t.From != phase.Restarting
}

// Events are the events the transition emits, in order: Created when it
// starts a run, Resumed when it resumes one, then what the new phase is
// (Running, Restarting, Suspended, Succeeded or Failed), if any of those;
// Pending and Starting have no reason of their own upstream. Restarting
// and Failed are warnings. Every message is the phase's.
func (t Transition) Events() []Event {
	var suffixes []string
	if t.Starts() {
		suffixes = append(suffixes, Created)
	}
	if t.Resumes() {
		suffixes = append(suffixes, Resumed)
	}
	switch {
	case t.To.Phase == phase.Running:
		suffixes = append(suffixes, Running)
	case t.To.Phase == phase.Restarting:
		suffixes = append(suffixes, Restarting)
	case t.To.Phase == phase.Pending && t.To.Reason == phase.ReasonSuspended:
		suffixes = append(suffixes, Suspended)
	case t.To.Phase == phase.Succeeded:
		suffixes = append(suffixes, Succeeded)
	case t.To.Phase == phase.Failed:
		suffixes = append(suffixes, Failed)
	}
	events := make([]Event, 0, len(suffixes))
	for _, s := range suffixes {
		kind := corev1.EventTypeNormal
		if s == Restarting || s == Failed {
			kind = corev1.EventTypeWarning
		}
		events = append(events, Event{Type: kind, Reason: t.Kind + s, Message: truncate(t.To.Message, noteLimit)})
	}
	return events
}

// truncate cuts s to at most n bytes, at a rune's boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "..."
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
