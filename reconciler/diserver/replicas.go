package diserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// listReplicas answers GET .../replicas from the cache: callers poll it,
// and an address a moment late is read again at the next poll.
func (s *server) listReplicas(ctx context.Context, id JobID, _ *http.Request) (answer, error) {
	j, err := loadJob(ctx, s.cache, id)
	if err != nil {
		return answer{}, err
	}
	var pods corev1.PodList
	if err := s.cache.List(ctx, &pods, client.InNamespace(id.Namespace), client.MatchingLabels(handoff.JobLabels(id.Name))); err != nil {
		return answer{}, fromAPIServer(err, "listing the job's pods")
	}
	addrs := addresses(j, pods.Items)
	known := 0
	for _, a := range addrs {
		if a != "" {
			known++
		}
	}
	return answer{message: fmt.Sprintf("%d of %d replicas have an address", known, len(addrs)), data: addrs}, nil
}

// addReplicas answers POST .../replicas: n more workers.
func (s *server) addReplicas(ctx context.Context, id JobID, r *http.Request) (answer, error) {
	n, bad := decodeReplicas(r.Body)
	if bad != nil {
		return answer{}, bad
	}
	return s.rescale(ctx, id, n)
}

// removeReplicas answers DELETE .../replicas: n fewer workers.
func (s *server) removeReplicas(ctx context.Context, id JobID, r *http.Request) (answer, error) {
	n, bad := decodeReplicas(r.Body)
	if bad != nil {
		return answer{}, bad
	}
	return s.rescale(ctx, id, -n)
}

// rescale moves a preemptible job's worker count by delta. The count is
// read live and written through the scale subresource on condition that
// the StatefulSet is still the one read (its resourceVersion): a write
// that lost a race is computed again from the winner's count, so two
// requests never both start from the same count and lose one's workers.
func (s *server) rescale(ctx context.Context, id JobID, delta int64) (answer, error) {
	var set *appsv1.StatefulSet
	var from, to int32
	err := retryOnConflict(func() error {
		j, err := loadJob(ctx, s.live, id)
		if err != nil {
			return err
		}
		var b handoff.Bounds
		if set, b, err = scalable(j); err != nil {
			return err
		}
		from = phase.Replicas(set)
		var bad *requestError
		if to, bad = resize(from, delta, b); bad != nil {
			return bad
		}
		scale := &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: set.Name, Namespace: set.Namespace, ResourceVersion: set.ResourceVersion},
			Spec:       autoscalingv1.ScaleSpec{Replicas: to},
		}
		return s.writer.SubResource("scale").Update(ctx, set, client.WithSubResourceBody(scale), client.FieldOwner(FieldManager))
	})
	if err != nil {
		return answer{}, fromAPIServer(err, fmt.Sprintf("job %s: scaling its workers", id.job()))
	}
	logr.FromContextOrDiscard(ctx).Info("scaled workers", "job", id.job(), "statefulSet", set.Name, "from", from, "to", to)
	if to > from {
		s.metrics.changed(workersAdded, to-from)
		return answer{
			message: fmt.Sprintf("added %d %s: %d to %d", to-from, plural(int64(to-from), "worker"), from, to),
			data:    workerHosts(id.Name, set, from, to),
		}, nil
	}
	s.metrics.changed(workersRemoved, from-to)
	return answer{
		// The StatefulSet controller removes the highest ordinals first.
		message: fmt.Sprintf("removed %d %s: %d to %d", from-to, plural(int64(from-to), "worker"), from, to),
		data:    workerHosts(id.Name, set, to, from),
	}, nil
}

// scalable is the StatefulSet of a job whose count the API may change now,
// and the job's bounds; otherwise the reason it may not.
func scalable(j *diJob) (*appsv1.StatefulSet, handoff.Bounds, error) {
	s := j.preemptible()
	if s == nil {
		return nil, handoff.Bounds{}, fail(http.StatusConflict,
			"job %s is not preemptible: its worker count is fixed by its spec, and only a preemptible DIJob's is changed through this API", j.id.job())
	}
	b, err := handoff.ParseBounds(s.Annotations[handoff.ElasticWorkers])
	if err != nil {
		return nil, b, fail(http.StatusInternalServerError, "StatefulSet %s: metadata.annotations[%s]: %v", s.Name, handoff.ElasticWorkers, err)
	}
	switch {
	case s.DeletionTimestamp != nil:
		return nil, b, fail(http.StatusConflict, "job %s is being deleted", j.id.job())
	case s.Annotations[handoff.Ended] != "":
		return nil, b, fail(http.StatusConflict, "job %s has ended (%s): its workers are no longer scaled", j.id.job(), s.Annotations[handoff.Ended])
	}
	if _, started := s.Annotations[handoff.ScaledFrom]; !started {
		return nil, b, fail(http.StatusConflict,
			"job %s is starting: the reconciler has not set its first worker count yet; retry shortly", j.id.job())
	}
	return s, b, nil
}
