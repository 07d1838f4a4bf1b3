package allocator

import (
	"cmp"
	"errors"
	"slices"
)

// incumbentBonus multiplies the gain of a worker that already runs, against
// the gain of a new one. Two jobs' gains are often close, and measurements
// are noisy; without a bonus the policy hands a worker back and forth
// between them from one period to the next. And every change of a job's
// worker count restarts its training, so taking a worker from one job to
// give it to another costs both of them, whatever the gains say. A new use
// must therefore be clearly better, here half again, to take a running
// worker. In the simulation (simulation_test.go), which charges half a
// period per resize, a bonus of 1.0 ends jobs about 12% later than an even
// split, 1.1 about 7% later and 1.5 on a par, with a fifth fewer resizes
// than 1.1; larger bonuses gain little more and make the policy slower to
// move room to where it is worth more.
const incumbentBonus = 1.5

// MarginalThroughput is the Policy that hands room out one worker at a
// time to the job whose next worker adds the most throughput.
//
// Optimize first gives every job its minimum: fixed workers (JobInfo.Fixed)
// keep their nodes, then the other workers that run keep theirs, then the
// missing ones are placed, high-priority jobs first and then by key. A job
// that already runs keeps its minimum even against a high-priority
// newcomer, since it cannot run with fewer. (Only when a node is gone, or
// shrank below what runs on it, does a minimum worker that is not fixed
// get a new node. A fixed one keeps its node even then, since its pod
// cannot leave it: a pinned pod that finds no room there is the
// reconciler's to replace.) A job whose minimum finds no room gets an
// empty NodeList, and the returned error joins one error wrapping
// ErrDoesNotFit per such job; the map still holds every job, so a caller
// that applies it scales those jobs to zero.
//
// Then the remaining room goes, one worker at a time, to the job with the
// highest relative gain of its next worker (MarginalGain over the job's
// best throughput per worker, so jobs reporting in different units
// compare), among jobs below Max whose next worker fits and gains
// something. Ties go to the job with fewer workers, then to the smaller
// key. A job's next worker that already runs only fits on its own node,
// and its gain is raised by incumbentBonus; when it does not fit there the
// job stops growing, and that worker and those above it are removed,
// because a running pod is never moved. (A worker whose node is gone is
// not running, and its ordinal is placed anew, unless the worker is fixed:
// then the job stops short of it.) A new worker goes to the best fitting
// node (see bestFit), preferring room no running worker holds.
//
// The result never puts more on a node than its Free, unless fixed
// workers alone overfill it; never gives a fixed worker's index another
// node; and never gives a job more than Max or (unless empty) fewer than
// Min workers.
type MarginalThroughput struct{}

var _ Policy = MarginalThroughput{}

// Allocate places job's minimum workers by best fit on the nodes' Free
// room, which it takes to be all unused: to place a job around running
// preemptible workers, pass Free net of them, or Optimize all jobs.
func (MarginalThroughput) Allocate(job JobInfo, nodes map[string]*NodeInfo) (NodeList, error) {
	l := newLedger(nodes)
	list := make(NodeList, 0, max(job.Min, 0))
	for range job.Min {
		node, ok := l.place(job)
		if !ok {
			return nil, doesNotFit(job.Key)
		}
		list = append(list, node)
	}
	return list, nil
}

// Optimize decides every job's workers for the next period; see
// MarginalThroughput for the rules.
func (MarginalThroughput) Optimize(jobs map[string]JobInfo, nodes map[string]*NodeInfo, prev map[string]NodeList) (map[string]NodeList, error) {
	l := newLedger(nodes)
	claims := newClaims(jobs, prev)
	for _, c := range claims {
		for _, node := range c.prev {
			l.hold(node, c.job.Request)
		}
	}
	err := grantMinimums(l, claims)
	grantExtras(l, claims)
	out := make(map[string]NodeList, len(claims))
	for _, c := range claims {
		out[c.job.Key] = c.nodes
	}
	return out, err
}

// claim is one job's allocation in the making.
type claim struct {
	job JobInfo
	// prev are the nodes of the job's running workers, up to Max.
	prev NodeList
	// nodes are the workers granted so far.
	nodes NodeList
	// points are the job's usable throughput observations.
	points []point
	// gain is the relative gain of the job's next worker, bonus included.
	gain float64
	// settled is set once the job gets no more workers.
	settled bool
}

// newClaims are the jobs' claims in the order minimums are served: high
// priority first, then by key.
func newClaims(jobs map[string]JobInfo, prev map[string]NodeList) []*claim {
	claims := make([]*claim, 0, len(jobs))
	for key, job := range jobs {
		job.Key = key
		job.Min = max(job.Min, 0)
		job.Max = max(job.Max, job.Min)
		running := prev[key]
		claims = append(claims, &claim{
			job:    job,
			prev:   running[:min(len(running), int(job.Max))],
			points: knownPoints(job.Throughput),
		})
	}
	slices.SortFunc(claims, func(a, b *claim) int {
		return cmp.Or(
			-cmp.Compare(priorityRank(a.job.Priority), priorityRank(b.job.Priority)),
			cmp.Compare(a.job.Key, b.job.Key),
		)
	})
	return claims
}

// priorityRank orders priorities, higher first served; anything but high
// is normal.
func priorityRank(priority string) int {
	if priority == PriorityHigh {
		return 1
	}
	return 0
}

// grantMinimums gives every job its Min workers or none: first the fixed
// ones keep their nodes, for all jobs, then the other running ones keep
// theirs where they still fit, then the missing ones are placed in claim
// order. Fixed workers go first because they cannot go anywhere else:
// where a node is short, it is a worker not yet pinned that must move,
// whichever job comes first. It returns the jobs that got none, joined.
func grantMinimums(l *ledger, claims []*claim) error {
	for _, c := range claims {
		c.nodes = make(NodeList, c.job.Min)
		for i := range min(len(c.nodes), len(c.prev)) {
			if fixed(c, i) {
				l.pin(c.prev[i], c.job.Request)
				c.nodes[i] = c.prev[i]
			}
		}
	}
	for _, c := range claims {
		for i := range min(len(c.nodes), len(c.prev)) {
			switch {
			case c.nodes[i] != "":
			case l.keep(c.prev[i], c.job.Request):
				c.nodes[i] = c.prev[i]
			default:
				l.letGo(c.prev[i], c.job.Request)
			}
		}
	}
	var errs []error
	for _, c := range claims {
		if !placeMissing(l, c) {
			errs = append(errs, doesNotFit(c.job.Key))
		}
	}
	return errors.Join(errs...)
}

// placeMissing places the claim's minimum workers that have no node yet,
// or gives the claim up when one finds no room.
func placeMissing(l *ledger, c *claim) bool {
	for i := range c.nodes {
		if c.nodes[i] != "" {
			continue
		}
		node, ok := l.place(c.job)
		if !ok {
			giveUp(l, c)
			return false
		}
		c.nodes[i] = node
	}
	return true
}

// giveUp leaves the claim with no workers: what it was granted, and what
// its running workers above the minimum hold, goes back to the ledger.
func giveUp(l *ledger, c *claim) {
	for _, node := range c.nodes {
		if node != "" {
			l.release(node, c.job.Request)
		}
	}
	for _, node := range c.prev[min(len(c.prev), len(c.nodes)):] {
		l.letGo(node, c.job.Request)
	}
	c.nodes = NodeList{}
	c.settled = true
}

// grantExtras hands out the room left after the minimums, one worker at a
// time, to the claim with the best next gain.
func grantExtras(l *ledger, claims []*claim) {
	for _, c := range claims {
		if !c.settled {
			nextGain(l, c)
		}
	}
	for {
		c := bestClaim(claims)
		if c == nil {
			return
		}
		if grow(l, c) {
			nextGain(l, c)
		} else {
			settle(l, c)
		}
	}
}

// nextGain computes the gain of the claim's next worker, or settles the
// claim when it is at Max or the next worker would gain nothing.
func nextGain(l *ledger, c *claim) {
	n := int32(len(c.nodes))
	if n >= c.job.Max {
		settle(l, c)
		return
	}
	c.gain = relativeGain(c.points, n)
	if running(l, c, int(n)) {
		c.gain *= incumbentBonus
	}
	if c.gain <= 0 {
		settle(l, c)
	}
}

// bestClaim is the unsettled claim with the highest gain; ties go to fewer
// workers, then to the smaller key.
func bestClaim(claims []*claim) *claim {
	var best *claim
	for _, c := range claims {
		if c.settled {
			continue
		}
		if best == nil || cmp.Or(
			-cmp.Compare(c.gain, best.gain),
			cmp.Compare(len(c.nodes), len(best.nodes)),
			cmp.Compare(c.job.Key, best.job.Key),
		) < 0 {
			best = c
		}
	}
	return best
}

// running reports whether the claim's worker i runs now: it ran in the
// previous period on a node that is still there. A worker whose node is
// gone went with it, and its ordinal is a new worker's to place, unless
// the worker is fixed: its pod is still on that node, and the job can
// only stop short of it.
func running(l *ledger, c *claim, i int) bool {
	return i < len(c.prev) && (l.has(c.prev[i]) || fixed(c, i))
}

// fixed reports whether the claim's worker i is final on its node in prev.
func fixed(c *claim, i int) bool {
	return i < len(c.prev) && c.prev[i] != "" && c.job.Fixed[i]
}

// grow grants the claim its next worker: a running one on its own node, a
// new one by best fit. It reports whether the worker found room.
func grow(l *ledger, c *claim) bool {
	n := len(c.nodes)
	if running(l, c, n) {
		if !l.keep(c.prev[n], c.job.Request) {
			return false
		}
		c.nodes = append(c.nodes, c.prev[n])
		return true
	}
	node, ok := l.place(c.job)
	if ok {
		c.nodes = append(c.nodes, node)
	}
	return ok
}

// settle ends the claim's growth and lets go of the room its running
// workers above its count hold. Room only shrinks while extras are handed
// out, so a worker that does not fit now will not fit later.
func settle(l *ledger, c *claim) {
	c.settled = true
	for _, node := range c.prev[min(len(c.prev), len(c.nodes)):] {
		l.letGo(node, c.job.Request)
	}
}
