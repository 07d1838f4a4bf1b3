package diserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// postProfilings answers POST .../profilings: it stores the data on the
// job's workload of first rank 0, merged with what is there (see
// Profilings.record). The merge is computed from the cache and written on
// condition that the workload is still the one read; a write that lost a
// race is computed again from the workload read live by name, so that a
// concurrent post never drops another's throughput.
func (s *server) postProfilings(ctx context.Context, c *call) (answer, error) {
	data, bad := decodeProfilings(c.body)
	if bad != nil {
		return answer{}, bad
	}
	log := logr.FromContextOrDiscard(ctx)
	j, err := loadJob(ctx, s.cache, c.id)
	if err != nil {
		return answer{}, err
	}
	leader, ok := j.leader()
	if !ok {
		return answer{}, fail(http.StatusInternalServerError, "job %s: none of its workloads has %s 0, which holds the profilings", c.id.job(), handoff.FirstRank)
	}
	if err := s.mayWrite(ctx, c.caller, leader); err != nil {
		return answer{}, err
	}
	leader, done, err := s.turns.take(ctx, leader)
	if err != nil {
		return answer{}, err
	}
	j.replace(leader)
	var written client.Object
	defer func() { done(written) }()
	var workers int32
	attempts := 0
	err = retryOnConflict(func() error {
		if attempts++; attempts > 1 {
			if leader, err = j.reread(ctx, s.live, leader); err != nil {
				return err
			}
		}
		stored, err := ParseProfilings(leader.GetAnnotations()[handoff.Profilings])
		if err != nil {
			// Only the DI server writes the annotation; a value it cannot
			// read is replaced rather than kept failing every post.
			log.Info("replacing unreadable profilings", "workload", leader.GetName(), "error", err.Error())
			stored = Profilings{}
		}
		workers = j.workers()
		// Data equal to what the cache holds is written all the same: the
		// cache may be behind a later post, which this one must replace.
		value := stored.record(data, workers).String()
		if attempts == 1 {
			if over := s.writes.take(); over != nil {
				return over
			}
		}
		return s.patch(ctx, leader, map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.Profilings: value}}})
	})
	if err != nil {
		return answer{}, fromAPIServer(err, fmt.Sprintf("job %s: storing its profilings", c.id.job()))
	}
	written = leader
	message := fmt.Sprintf("stored the profilings on %s %s", kindOf(leader), leader.GetName())
	if v, ok := throughputIn(data); ok && workers >= 1 {
		message += fmt.Sprintf(", with throughput %g at %d %s", v, workers, plural(int64(workers), "worker"))
	}
	log.Info("stored profilings", "job", c.id.job(), "workload", leader.GetName(), "bytes", len(data), "workers", workers)
	return answer{message: message}, nil
}
