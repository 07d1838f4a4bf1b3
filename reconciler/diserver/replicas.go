package diserver

import (
	"context"
	"fmt"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// listReplicas answers GET .../replicas from the cache: callers poll it,
// and an address a moment late is read again at the next poll.
func (s *server) listReplicas(ctx context.Context, c *call) (answer, error) {
	j, err := loadJob(ctx, s.cache, c.id)
	if err != nil {
		return answer{}, err
	}
	var pods corev1.PodList
	if err := s.cache.List(ctx, &pods, client.InNamespace(c.id.Namespace), client.MatchingLabels(handoff.JobLabels(c.id.Name))); err != nil {
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
func (s *server) addReplicas(ctx context.Context, c *call) (answer, error) {
	n, bad := decodeReplicas(c.body)
	if bad != nil {
		return answer{}, bad
	}
	return s.rescale(ctx, c, n)
}

// removeReplicas answers DELETE .../replicas: n fewer workers.
func (s *server) removeReplicas(ctx context.Context, c *call) (answer, error) {
	n, bad := decodeReplicas(c.body)
	if bad != nil {
		return answer{}, bad
	}
	return s.rescale(ctx, c, -n)
}

// patch writes fields of obj by a JSON merge patch on condition that obj
// is still at the resourceVersion read: a merge patch that names a
// resourceVersion is applied only to that version, and fails with a
// conflict otherwise. obj becomes what the API server answers.
func (s *server) patch(ctx context.Context, obj client.Object, fields map[string]any) error {
	metadata, _ := fields["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		fields["metadata"] = metadata
	}
	metadata["resourceVersion"] = obj.GetResourceVersion()
	return s.written.MergePatch(ctx, obj, fields)
}

// scalable gives the job's bounds when the API may change the count of
// set, the job's preemptible StatefulSet (nil when it has none), and
// otherwise the reason it may not.
func scalable(id JobID, set *appsv1.StatefulSet) (handoff.Bounds, error) {
	if set == nil {
		return handoff.Bounds{}, fail(http.StatusConflict,
			"job %s is not preemptible: its worker count is fixed by its spec, and only a preemptible DIJob's is changed through this API", id.job())
	}
	value, elastic := set.Annotations[handoff.ElasticWorkers]
	if !elastic {
		return handoff.Bounds{}, fail(http.StatusConflict, "job %s is no longer preemptible", id.job())
	}
	b, err := handoff.ParseBounds(value)
	if err != nil {
		return b, fail(http.StatusInternalServerError, "StatefulSet %s: metadata.annotations[%s]: %v", set.Name, handoff.ElasticWorkers, err)
	}
	switch {
	case set.DeletionTimestamp != nil:
		return b, fail(http.StatusConflict, "job %s is being deleted", id.job())
	case set.Annotations[handoff.Ended] != "":
		return b, fail(http.StatusConflict, "job %s has ended (%s): its workers are no longer scaled", id.job(), set.Annotations[handoff.Ended])
	}
	if _, started := set.Annotations[handoff.ScaledFrom]; !started {
		return b, fail(http.StatusConflict,
			"job %s is starting: the reconciler has not set its first worker count yet; retry shortly", id.job())
	}
	return b, nil
}
