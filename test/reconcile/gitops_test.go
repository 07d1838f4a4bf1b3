//go:build e2e

package reconcile

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trainfn/trainfn/reconciler"
)

// TestGitOpsReapply applies the unchanged rendered output again after the
// job changed at run time, as Argo CD and Flux do on every sync: the
// run-time facts stay, and no apply conflicts with the reconciler, forced
// or not (DESIGN invariant 6).
func TestGitOpsReapply(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	j.scale(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	j.keep(t, 3)
	for _, manager := range []string{gitOps, "flux"} {
		for _, force := range []bool{false, true} {
			ctx, cancel := timeout()
			defer cancel()
			switch err := apply(ctx, j.ns, manager, force, j.objs); {
			case err == nil:
			case force || strings.Contains(err.Error(), strconv.Quote(reconciler.FieldManager)):
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
		}
	}
	j.checkInvariants(t)
}
