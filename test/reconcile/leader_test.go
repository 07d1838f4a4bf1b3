//go:build e2e

package reconcile

import "testing"

// TestLeaderElection runs two replicas of the reconciler: only the one
// holding the lease writes, and when it dies the other takes over.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	j := deploy(t, ns, elasticMPIJob)
	// Both elect their leader with the chart's Lease, the only one its
	// ServiceAccount may hold.
	a, b := startReconciler(t, ns), startReconciler(t, ns)
	j.waitDiscovery(t, 0, 1)
	leader, follower := a, b
	if a.writes(t) == 0 {
		leader, follower = b, a
	}
	if leader.writes(t) == 0 {
		t.Fatal("neither replica wrote, yet the job was started and discovered")
	}
	j.keep(t, 2)
	j.scale(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	if n := follower.writes(t); n != 0 {
		t.Fatalf("the replica without the lease wrote %v times", n)
	}

	leader.kill()
	j.scale(t, 4)
	j.waitDiscovery(t, 0, 1, 2, 3)
	if n := follower.writes(t); n == 0 {
		t.Fatalf("discovery converged, but not by the replica left (writes %v)", n)
	}
	j.checkInvariants(t)
}
