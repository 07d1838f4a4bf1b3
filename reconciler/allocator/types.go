package allocator

import (
	"errors"
	"fmt"
)

// Job priorities, as a DIJob's spec.priority spells them.
const (
	PriorityNormal = "normal"
	PriorityHigh   = "high"
)

// JobInfo is what a policy knows of one preemptible job.
type JobInfo struct {
	// Key is the job's "namespace/name".
	Key string
	// Min and Max bound the job's worker count. A job runs Min workers or
	// none; a Max below Min is read as Min.
	Min, Max int32
	// Priority is PriorityNormal or PriorityHigh; high-priority jobs get
	// their minimum first.
	Priority string
	// Request is what one worker requests.
	Request Resources
	// Throughput is the job's observed throughput keyed by the worker count
	// it was measured at, in whatever unit the job reports. It may be empty.
	Throughput map[int32]float64
	// Eligible, when set, tells the nodes a new worker of the job may be
	// placed on (its template's node selector, node affinity and
	// tolerations, say); nil: every node.
	Eligible func(node string) bool
	// Fixed holds the indexes of the workers whose node in prev is final:
	// their pods are bound to it, or pinned to it and waiting for the
	// scheduler, and a pod never moves. Optimize keeps such a worker on
	// its node whatever room the node seems to have, or removes it, but
	// never gives its index another node.
	Fixed map[int]bool
}

// NodeInfo is one node as a policy sees it.
type NodeInfo struct {
	Name string
	// Free is the node's allocatable resources minus what its
	// non-preemptible pods request: the room preemptible workers share.
	Free Resources
}

// NodeList is a job's placement: element i is the node of the worker of pod
// ordinal i, and its length is the job's worker count.
type NodeList []string

// Policy places preemptible jobs' workers. Maps of jobs and nodes are keyed
// by JobInfo.Key and NodeInfo.Name; a policy does not modify its arguments.
type Policy interface {
	// Allocate places a new job's minimum workers on the nodes' free room,
	// or returns an error wrapping ErrDoesNotFit and no list.
	Allocate(job JobInfo, nodes map[string]*NodeInfo) (NodeList, error)
	// Optimize decides every job's workers for the next period. prev holds
	// the placements that run now; a worker that exists keeps its node,
	// and a fixed one (JobInfo.Fixed) is never given another. The
	// result holds a list for every job: a job whose minimum does not fit
	// gets an empty one, and the error, wrapping ErrDoesNotFit, names it.
	Optimize(jobs map[string]JobInfo, nodes map[string]*NodeInfo, prev map[string]NodeList) (map[string]NodeList, error)
}

// ErrDoesNotFit is wrapped, with the job's key, by the error of a job whose
// minimum workers find no room.
var ErrDoesNotFit = errors.New("minimum workers do not fit")

func doesNotFit(key string) error {
	return fmt.Errorf("allocator: job %s: %w", key, ErrDoesNotFit)
}
