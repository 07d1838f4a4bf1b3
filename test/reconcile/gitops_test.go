//go:build e2e

package reconcile

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/gitopssync"
)

// TestGitOpsReapply applies the unchanged rendered output again after the
// job changed at run time, as Argo CD and Flux do on every sync: the
// run-time facts stay, and no apply conflicts with the reconciler, forced
// or not.
func TestGitOpsReapply(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	j.scale(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	j.keep(t, 3)
	for _, manager := range []string{gitOps, "flux"} {
		for _, force := range []bool{false, true} {
			// A function per apply, so that its deadline ends with it.
			func() {
				ctx, cancel := timeout()
				defer cancel()
				switch err := apply(ctx, j.ns, manager, force, j.objs); {
				case err == nil:
				case force || strings.Contains(err.Error(), strconv.Quote(handoff.FieldManager)):
					t.Fatalf("applying again as %s (force %v): %v", manager, force, err)
				default:
					// Two appliers may conflict with each other over a field
					// the API server normalizes (an env value "", which it
					// drops); that is between them, not the reconciler.
					t.Logf("applying as %s without force conflicts with another applier only: %v", manager, err)
				}
				// At once, not eventually: the apply itself must have kept the
				// count and the script, which checkDiscovery reads both of.
				if err := j.checkDiscovery(ctx, []int{0, 1, 2}); err != nil {
					t.Errorf("after applying as %s (force %v): %v", manager, force, err)
				}
				if s := j.liveStatefulSet(t); s.Spec.Replicas == nil || *s.Spec.Replicas != 3 {
					t.Errorf("after applying as %s (force %v): spec.replicas %s, want 3", manager, force, replicasOf(s.Spec.Replicas))
				}
			}()
		}
	}
	j.checkInvariants(t)
}

// TestChangedJobRunsAgain changes an elastic job in Git after it ended, and
// syncs it with Flux's apply engine, as kustomize-controller does (the
// Jobs, whose templates cannot change, recreated; the StatefulSet applied,
// so rolled): the reconciler must see a new run in the rolled StatefulSet,
// clear what the ended run left on it and start its workers again, rather
// than hold them stopped.
func TestChangedJobRunsAgain(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	finish(t, j.ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
	j.waitReplicas(t, 0)
	first := j.liveStatefulSet(t)
	if first.Annotations[handoff.Ended] != "Succeeded" || first.Annotations[handoff.Revision] == "" {
		t.Fatalf("the first run's marks: %v", first.Annotations)
	}
	jobs := kube.JobUIDs(t, j.ns)
	if len(jobs) == 0 {
		t.Fatal("the first run has no Jobs to replace")
	}

	changed := elasticMPIJob
	changed.Workers = 3
	objs := render(t, changed.String())
	flux, err := gitopssync.Flux(kube.Config, gitopssync.FluxOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := timeout()
	defer cancel()
	report, err := flux(ctx, j.ns, objs)
	t.Logf("flux apply:\n%s", report)
	if err != nil {
		t.Fatal(err)
	}
	j.objs = objs
	for name, uid := range kube.JobUIDs(t, j.ns) {
		if jobs[name] == uid {
			t.Errorf("Job %s was kept, not recreated", name)
		}
	}

	j.waitReplicas(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	s := j.liveStatefulSet(t)
	if _, ended := s.Annotations[handoff.Ended]; ended {
		t.Errorf("the new run is marked ended: %v", s.Annotations)
	}
	if s.Annotations[handoff.Revision] == first.Annotations[handoff.Revision] || s.Annotations[handoff.Revision] != s.Spec.Template.Labels[handoff.DigestLabel] {
		t.Errorf("revision %q, first run's %q, template's %q", s.Annotations[handoff.Revision], first.Annotations[handoff.Revision], s.Spec.Template.Labels[handoff.DigestLabel])
	}
	j.checkInvariants(t)
}
