//go:build e2e

package reconcile

import (
	"context"
	"testing"
	"time"
)

// TestReconcilerCrash kills the reconciler without warning, changes the job
// while none runs, and starts a new one: it must find the cluster as it is,
// not as the old one left it. The new one waits for the dead one's lease
// to run out first.
func TestReconcilerCrash(t *testing.T) {
	t.Parallel()
	j, r := startElastic(t)
	j.keep(t, 2)
	r.kill()
	j.scale(t, 4)
	setReady(t, j.ns, j.worker(1), false)
	startReconciler(t, j.ns)
	j.waitDiscovery(t, 0, 2, 3)
	setReady(t, j.ns, j.worker(1), true)
	j.waitDiscovery(t, 0, 1, 2, 3)
	j.checkInvariants(t)
}

// TestAPIServerRestart restarts kube-apiserver under a running reconciler,
// which must reconnect and carry on. The test runs alone: every client of
// the cluster loses its connection.
//
// The reconciler runs without leader election: a leader that cannot renew
// its lease for the renew deadline exits by design, so that two never
// write; that is a restart, tested above, not a reconnection.
func TestAPIServerRestart(t *testing.T) {
	j, r := startElastic(t, "--leader-elect=false")
	j.keep(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := kube.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	j.scale(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	setReady(t, j.ns, j.worker(0), false)
	j.waitDiscovery(t, 1, 2)
	select {
	case <-r.exited:
		t.Fatalf("the reconciler exited (%v) rather than reconnect", r.err)
	default:
	}
	setReady(t, j.ns, j.worker(0), true)
	j.waitDiscovery(t, 0, 1, 2)
	j.checkInvariants(t)
}
