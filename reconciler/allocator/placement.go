package allocator

import (
	"cmp"
	"slices"
)

// bestFit returns the index of the room a worker of request r fits in
// with the least left over, or -1 when it fits in none. Rooms are indexed
// like names, which are sorted, so a tie goes to the first name.
//
// "Least left over" compares what would remain lexicographically: GPUs
// first, then CPU, then memory. GPUs are the scarcest and least divisible
// resource, so packing them tightly is what keeps a whole GPU node free
// for a worker that needs all of it; and a CPU-only worker goes to the
// node with the fewest free GPUs, not onto a GPU node's CPUs. Filling the
// fullest node that fits, rather than spreading, keeps big holes for big
// workers.
//
// eligible, when not nil, tells the rooms the worker may take.
func bestFit(rooms []Resources, r Resources, eligible func(int) bool) int {
	best := -1
	var bestLeft Resources
	for i, room := range rooms {
		if !r.FitsIn(room) || eligible != nil && !eligible(i) {
			continue
		}
		left := room.Sub(r)
		if best < 0 || compareLeftover(left, bestLeft) < 0 {
			best, bestLeft = i, left
		}
	}
	return best
}

// compareLeftover orders what remains on a node after a placement, tighter
// first: by GPUs, then CPU, then memory.
func compareLeftover(a, b Resources) int {
	return cmp.Or(cmp.Compare(a.GPU, b.GPU), cmp.Compare(a.MilliCPU, b.MilliCPU), cmp.Compare(a.Memory, b.Memory))
}

// ledger tracks the nodes' room while a policy hands it out, at two levels.
//
// free is each node's Free minus the workers granted so far: a worker fits
// on a node when it fits in free. idle is free minus the workers that ran
// in the previous period and have not been granted (or dropped) yet: room
// nobody uses. A new worker goes into idle room when it can and only takes
// room an existing worker still holds when it must, so that a new job's
// minimum or a growing job does not push out another job's worker while an
// empty node sits next to it. idle never exceeds free, so whatever fits in
// idle fits in free.
type ledger struct {
	names []string
	index map[string]int
	free  []Resources
	idle  []Resources
}

func newLedger(nodes map[string]*NodeInfo) *ledger {
	l := &ledger{index: make(map[string]int, len(nodes))}
	for name, node := range nodes {
		if node != nil {
			l.names = append(l.names, name)
		}
	}
	slices.Sort(l.names)
	for i, name := range l.names {
		l.index[name] = i
		l.free = append(l.free, nodes[name].Free)
		l.idle = append(l.idle, nodes[name].Free)
	}
	return l
}

// has reports whether node is one of the ledger's.
func (l *ledger) has(node string) bool {
	_, ok := l.index[node]
	return ok
}

// hold marks the room of an existing worker on node as used, until it is
// kept or let go. A node that is gone holds nothing.
func (l *ledger) hold(node string, r Resources) {
	if i, ok := l.index[node]; ok {
		l.idle[i] = l.idle[i].Sub(r)
	}
}

// letGo gives an existing worker's held room back: the worker will not run.
func (l *ledger) letGo(node string, r Resources) {
	if i, ok := l.index[node]; ok {
		l.idle[i] = l.idle[i].Add(r)
	}
}

// keep grants an existing worker its node, if the node is still there and
// has room for it.
func (l *ledger) keep(node string, r Resources) bool {
	i, ok := l.index[node]
	if !ok || !r.FitsIn(l.free[i]) {
		return false
	}
	l.free[i] = l.free[i].Sub(r)
	return true
}

// pin grants an existing worker its node whatever room is left there: its
// pod is bound or pinned to the node and cannot go elsewhere. The node may
// be left short, and then nothing else fits on it. A node that is gone
// holds nothing.
func (l *ledger) pin(node string, r Resources) {
	if i, ok := l.index[node]; ok {
		l.free[i] = l.free[i].Sub(r)
	}
}

// place grants a new worker of job the best-fitting node it is eligible
// for, in idle room if any fits and otherwise in room an existing worker
// holds.
func (l *ledger) place(job JobInfo) (string, bool) {
	r := job.Request
	var eligible func(int) bool
	if job.Eligible != nil {
		eligible = func(i int) bool { return job.Eligible(l.names[i]) }
	}
	i := bestFit(l.idle, r, eligible)
	if i < 0 {
		i = bestFit(l.free, r, eligible)
	}
	if i < 0 {
		return "", false
	}
	l.free[i] = l.free[i].Sub(r)
	l.idle[i] = l.idle[i].Sub(r)
	return l.names[i], true
}

// release takes back a granted worker, kept, pinned or placed: its room is
// free and idle again. A node that is gone holds nothing, though a pinned
// worker may have been granted it.
func (l *ledger) release(node string, r Resources) {
	if i, ok := l.index[node]; ok {
		l.free[i] = l.free[i].Add(r)
		l.idle[i] = l.idle[i].Add(r)
	}
}
