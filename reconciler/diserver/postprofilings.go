package diserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// postProfilings answers POST .../profilings: it stores the data on the
// job's workload of first rank 0, merged with what is there (see
// Profilings.record). The merge is read live and written on condition that
// the workload is still the one read, so that a concurrent post never
// drops another's throughput.
func (s *server) postProfilings(ctx context.Context, id JobID, r *http.Request) (answer, error) {
	data, bad := decodeProfilings(r.Body)
	if bad != nil {
		return answer{}, bad
	}
	log := logr.FromContextOrDiscard(ctx)
	var leader client.Object
	var workers int32
	err := retryOnConflict(func() error {
		j, err := loadJob(ctx, s.live, id)
		if err != nil {
			return err
		}
		var ok bool
		if leader, ok = j.leader(); !ok {
			return fail(http.StatusInternalServerError, "job %s: none of its workloads has %s 0, which holds the profilings", id.job(), handoff.FirstRank)
		}
		stored, err := ParseProfilings(leader.GetAnnotations()[handoff.Profilings])
		if err != nil {
			// Only the DI server writes the annotation; a value it cannot
			// read is replaced rather than kept failing every post.
			log.Info("replacing unreadable profilings", "workload", leader.GetName(), "error", err.Error())
			stored = Profilings{}
		}
		workers = j.workers()
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			// A merge patch that names a resourceVersion is applied only
			// to that version.
			"resourceVersion": leader.GetResourceVersion(),
			"annotations":     map[string]string{handoff.Profilings: stored.record(data, workers).String()},
		}})
		if err != nil {
			return err
		}
		return s.writer.Patch(ctx, leader, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager))
	})
	if err != nil {
		return answer{}, fromAPIServer(err, fmt.Sprintf("job %s: storing its profilings", id.job()))
	}
	message := fmt.Sprintf("stored the profilings on %s %s", kindOf(leader), leader.GetName())
	if v, ok := throughputIn(data); ok && workers >= 1 {
		message += fmt.Sprintf(", with throughput %g at %d %s", v, workers, plural(int64(workers), "worker"))
	}
	log.Info("stored profilings", "job", id.job(), "workload", leader.GetName(), "bytes", len(data), "workers", workers)
	return answer{message: message}, nil
}
