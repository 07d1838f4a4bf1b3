package diserver

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/status/phase"
)

// rescale moves a preemptible job's worker count by delta. The count is
// read from the cache and written by a merge patch of the StatefulSet's
// spec.replicas on condition that the StatefulSet is still the one read
// (its resourceVersion): a write that lost a race, or read a cache a
// moment behind, is computed again from the StatefulSet read live by name,
// so two requests never both start from the same count and lose one's
// workers. A request refused for the job's bounds writes nothing.
func (s *server) rescale(ctx context.Context, c *call, delta int64) (answer, error) {
	j, err := loadJob(ctx, s.cache, c.id)
	if err != nil {
		return answer{}, err
	}
	set := j.preemptible()
	if _, err := scalable(c.id, set); err != nil {
		return answer{}, err
	}
	if err := s.mayWrite(ctx, c.caller, set); err != nil {
		return answer{}, err
	}
	start, done, err := s.turns.take(ctx, set)
	if err != nil {
		return answer{}, err
	}
	r := &rescaling{server: s, job: j, set: start.(*appsv1.StatefulSet)}
	var written client.Object
	defer func() { done(written) }()
	var from, to int32
	err = retryOnConflict(func() error {
		if r.attempts++; r.attempts > 1 {
			if err := r.reread(ctx); err != nil {
				return err
			}
		}
		if from, to, err = r.count(ctx, delta); err != nil {
			return err
		}
		if err := r.admit(); err != nil {
			return err
		}
		return s.patch(ctx, r.set, map[string]any{"spec": map[string]any{"replicas": to}})
	})
	if err != nil {
		return answer{}, fromAPIServer(err, fmt.Sprintf("job %s: scaling its workers", c.id.job()))
	}
	set, written = r.set, r.set
	logr.FromContextOrDiscard(ctx).Info("scaled workers", "job", c.id.job(), "statefulSet", set.Name, "from", from, "to", to)
	if to > from {
		s.metrics.changed(workersAdded, to-from)
		return answer{
			message: fmt.Sprintf("added %d %s: %d to %d", to-from, plural(int64(to-from), "worker"), from, to),
			data:    workerHosts(c.id.Name, set, from, to),
		}, nil
	}
	s.metrics.changed(workersRemoved, from-to)
	return answer{
		// The StatefulSet controller removes the highest ordinals first.
		message: fmt.Sprintf("removed %d %s: %d to %d", from-to, plural(int64(from-to), "worker"), from, to),
		data:    workerHosts(c.id.Name, set, to, from),
	}, nil
}

// rescaling is one request's change of a worker count: the StatefulSet as
// last read, and whether the request has asked the API server anything.
type rescaling struct {
	*server
	job *diJob
	set *appsv1.StatefulSet
	// fresh is whether set was read from the API server rather than the
	// cache.
	fresh bool
	// admitted is whether the request has taken its token of the write
	// bucket: one a request, which its retries share.
	admitted bool
	attempts int
}

// admit takes the request's token, once.
func (r *rescaling) admit() error {
	if r.admitted {
		return nil
	}
	if over := r.writes.take(); over != nil {
		return over
	}
	r.admitted = true
	return nil
}

// reread reads the StatefulSet again, live.
func (r *rescaling) reread(ctx context.Context) error {
	if err := r.admit(); err != nil {
		return err
	}
	fresh, err := r.job.reread(ctx, r.live, r.set)
	if err != nil {
		return err
	}
	r.set, r.fresh = fresh.(*appsv1.StatefulSet), true
	return nil
}

// count is the count the request moves the StatefulSet from and to. A
// count the cache puts out of the job's bounds is read live once before
// the request is refused: the caller's own previous change may not be in
// the cache yet, and must not refuse its next.
func (r *rescaling) count(ctx context.Context, delta int64) (from, to int32, err error) {
	for {
		b, err := scalable(r.job.id, r.set)
		if err != nil {
			return 0, 0, err
		}
		from = phase.Replicas(r.set)
		want, bad := resize(from, delta, b)
		switch {
		case bad == nil:
			return from, want, nil
		case r.fresh:
			return 0, 0, bad
		}
		if err := r.reread(ctx); err != nil {
			return 0, 0, err
		}
	}
}
