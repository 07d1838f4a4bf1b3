package phase

import (
	"fmt"
)

// shortfall is why a job that has not ended is not running yet, as far as
// its pods' creation and placement go.
type shortfall struct{ reason, message string }

// shortfallOf finds the first workload short of pods, else the first pod
// gated or not placed, else a job that asks for no pod (rule 7).
func shortfallOf(ws []*workload) shortfall {
	var expected int32
	for _, w := range ws {
		expected += w.expected
		have := int32(len(w.pods))
		switch {
		case w.unset && (have < w.expected || w.expected == 0):
			return shortfall{ReasonWorkersNotSet, fmt.Sprintf("the reconciler has not set the count of %s %s yet; it has %d of %d pods", w.kind, w.name, have, w.expected)}
		case have < w.expected:
			return shortfall{ReasonPodsMissing, fmt.Sprintf("%s %s has %d of %d pods", w.kind, w.name, have, w.expected)}
		}
	}
	for _, w := range ws {
		for _, p := range w.pods {
			if g := gates(p); g != "" {
				return shortfall{ReasonSchedulingGated, fmt.Sprintf("pod %s waits for its scheduling gates: %s", p.Name, g)}
			}
		}
	}
	for _, w := range ws {
		for _, p := range w.pods {
			if why, ok := unscheduled(p); ok {
				return shortfall{ReasonUnscheduled, join(fmt.Sprintf("pod %s is not scheduled", p.Name), why)}
			}
		}
	}
	if expected == 0 {
		return shortfall{ReasonNoPodsExpected, "the job's workloads ask for no pod"}
	}
	return shortfall{}
}

// restarted tells whether a job that is not running restarted or had been
// running (rule 6), and says how.
func restarted(prev Phase, ws []*workload) (reason, message string) {
	for _, w := range ws {
		for _, p := range w.pods {
			if n := restartsOf(p); n > 0 {
				return ReasonPodRestarted, fmt.Sprintf("pod %s restarted (restartCount %d)", p.Name, n)
			}
		}
	}
	for _, w := range ws {
		if w.job != nil && w.expected > 0 && w.job.Status.Failed > 0 {
			return ReasonPodReplaced, fmt.Sprintf("Job %s replaced failed pods (status.failed %d)", w.name, w.job.Status.Failed)
		}
	}
	if prev.hadRun() {
		return ReasonWasRunning, fmt.Sprintf("the job was %s", prev)
	}
	return "", ""
}

// notReady names the first live pod that is not ready, and what it waits
// for.
func notReady(ws []*workload) string {
	for _, w := range ws {
		for _, p := range w.pods {
			if ready, _ := Ready(p); !ready {
				return fmt.Sprintf("pod %s is %s", p.Name, waiting(p))
			}
		}
	}
	return ""
}
