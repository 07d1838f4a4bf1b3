package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// jobName is every benchmark job's name; each has a namespace of its own.
const jobName = "job"

func workerPod(i int) string { return fmt.Sprintf("%s-worker-%d", jobName, i) }

// listsAll is true of a script that lists workers 0 to n-1.
func listsAll(n int) func(map[string]bool) bool {
	return func(hosts map[string]bool) bool {
		for i := range n {
			if !hosts[workerPod(i)] {
				return false
			}
		}
		return true
	}
}

// changeTimeout bounds one change's wait: far beyond any latency worth
// reporting, so that only a reconciler that lost the change hits it.
const changeTimeout = 30 * time.Second

// discovery measures every size with one reconciler, as one deployment
// serves every job of a cluster.
func (b *run) discovery(ctx context.Context) ([]Size, error) {
	r, err := b.startReconciler(ctx, "discovery")
	if err != nil {
		return nil, err
	}
	defer r.stop()
	var out []Size
	for _, n := range b.cfg.Sizes {
		s, err := b.size(ctx, r, n)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%d workers: %w", n, err), r.failed())
		}
		out = append(out, s)
	}
	return out, nil
}

// size applies one job of n workers, waits until the reconciler lists them
// all, then changes workers one at a time and measures each change, then
// in bursts.
func (b *run) size(ctx context.Context, r *reconciler, n int) (Size, error) {
	res := Size{Workers: n}
	ns := fmt.Sprintf("discovery-%d", n)
	if err := b.kube.namespace(ctx, ns); err != nil {
		return res, err
	}
	objs, err := b.kube.render(ctx, jobName, n)
	if err != nil {
		return res, err
	}
	w, err := watchScript(ctx, b.kube.Client, ns, jobName+"-config")
	if err != nil {
		return res, err
	}
	defer w.stop()
	b.progress("%d workers: applying the job", n)
	applied := time.Now()
	if err := b.kube.apply(ctx, ns, objs); err != nil {
		return res, err
	}
	// The controller manager creates a StatefulSet's pods at 20 a second
	// (its default client QPS), which is most of this wait.
	at, err := w.waitFor(ctx, 0, 2*time.Minute+time.Duration(n)*200*time.Millisecond, "listed every worker", listsAll(n))
	if err != nil {
		return res, err
	}
	res.StartupSeconds = at.Sub(applied).Seconds()
	b.progress("%d workers: all listed after %.1fs; changing %d workers one at a time, %s apart", n, res.StartupSeconds, b.cfg.Samples, b.cfg.Gap)

	before, err := r.settle(ctx)
	if err != nil {
		return res, err
	}
	var notReady, ready []time.Duration
	for i := range b.cfg.Samples {
		pod := workerPod(i * n / b.cfg.Samples)
		d, err := b.change(ctx, w, ns, pod, false)
		if err != nil {
			return res, err
		}
		notReady = append(notReady, d)
		if d, err = b.change(ctx, w, ns, pod, true); err != nil {
			return res, err
		}
		ready = append(ready, d)
	}

	after, err := r.settle(ctx)
	if err != nil {
		return res, err
	}
	res.NotReady, res.Ready = latency(notReady), latency(ready)
	res.Changes = 2 * b.cfg.Samples
	res.PerChange = perChange(before, after, float64(res.Changes))

	k := max(1, n/10)
	var burst []string
	for j := range k {
		burst = append(burst, workerPod(j*n/k))
	}
	b.progress("%d workers: bursts of %d", n, k)
	if res.BurstNotReady, err = b.burst(ctx, r, w, ns, burst, false, func(hosts map[string]bool) bool {
		for _, pod := range burst {
			if hosts[pod] {
				return false
			}
		}
		return true
	}); err != nil {
		return res, err
	}
	if res.BurstReady, err = b.burst(ctx, r, w, ns, burst, true, listsAll(n)); err != nil {
		return res, err
	}
	return res, nil
}

// change makes one worker ready or not and measures until the script
// agrees: from the API server's answer to the status patch to the
// benchmark's watch seeing the ConfigMap that lists, or no longer lists,
// the worker.
func (b *run) change(ctx context.Context, w *scripts, ns, pod string, ready bool) (time.Duration, error) {
	mark := w.mark()
	t0, err := b.kube.setReady(ctx, ns, pod, ready)
	if err != nil {
		return 0, err
	}
	what := "dropped " + pod
	if ready {
		what = "listed " + pod + " again"
	}
	at, err := w.waitFor(ctx, mark, changeTimeout, what, func(hosts map[string]bool) bool { return hosts[pod] == ready })
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(b.cfg.Gap):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return at.Sub(t0), nil
}

// burst changes many workers at once and counts what the reconciler did
// about it, until it settled.
func (b *run) burst(ctx context.Context, r *reconciler, w *scripts, ns string, pods []string, ready bool, done func(map[string]bool) bool) (Burst, error) {
	res := Burst{Pods: len(pods)}
	before, err := r.scrape(ctx)
	if err != nil {
		return res, err
	}
	mark := w.mark()
	last, err := b.kube.setReadyAll(ctx, ns, pods, ready)
	if err != nil {
		return res, err
	}
	at, err := w.waitFor(ctx, mark, changeTimeout, "took in the burst", done)
	if err != nil {
		return res, err
	}
	after, err := r.settle(ctx)
	if err != nil {
		return res, err
	}
	res.LatencyMs = ms(at.Sub(last))
	res.ScriptVersions = w.versions(mark)
	res.Counts = perChange(before, after, 1)
	return res, nil
}

// perChange is what the reconciler spent between two scrapes, divided by
// the number of changes made meanwhile.
func perChange(before, after metrics, changes float64) Counts {
	c := Counts{
		Requests:        (after.Sum(requestsTotal) - before.Sum(requestsTotal)) / changes,
		RequestsBy:      delta(before, after, requestsTotal, "method"),
		Writes:          (after.Sum(writesTotal) - before.Sum(writesTotal)) / changes,
		WritesBy:        delta(before, after, writesTotal, "kind"),
		DiscoveryWrites: (after.Sum(discoveryWrites) - before.Sum(discoveryWrites)) / changes,
		CPUMs:           1000 * (after.Sum(cpuSeconds) - before.Sum(cpuSeconds)) / changes,
	}
	for _, by := range []map[string]float64{c.RequestsBy, c.WritesBy} {
		for k := range by {
			by[k] /= changes
		}
	}
	return c
}
