// Package write makes the reconciler's writes: merge patches of only the
// fields it owns, creations and deletions, each under the reconciler's
// field manager and counted by kind of object. Every concern writes
// through it, the DI server too, so that what the reconciler writes is
// counted in one place.
package write

import (
	"context"
	"encoding/json"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// FieldManager is the name the reconciler's writes are recorded under, so
// that managedFields tell them from GitOps' applies.
const FieldManager = handoff.FieldManager

// Writer writes to the API server.
type Writer struct {
	Client client.Client
	// Writes counts the writes by kind of object.
	Writes *prometheus.CounterVec
}

// MergePatch writes only the given fields. A patch that carries
// metadata.resourceVersion applies only to the object as it was read.
func (w Writer) MergePatch(ctx context.Context, obj client.Object, patch map[string]any) error {
	w.Writes.WithLabelValues(KindOf(obj)).Inc()
	return w.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, MustJSON(patch)), client.FieldOwner(FieldManager))
}

// Create creates obj.
func (w Writer) Create(ctx context.Context, obj client.Object) error {
	w.Writes.WithLabelValues(KindOf(obj)).Inc()
	return w.Client.Create(ctx, obj, client.FieldOwner(FieldManager))
}

// Delete deletes obj, on the preconditions given.
func (w Writer) Delete(ctx context.Context, obj client.Object, preconditions client.Preconditions) error {
	w.Writes.WithLabelValues(KindOf(obj)).Inc()
	return w.Client.Delete(ctx, obj, preconditions)
}

// KindOf is the kind of an object the reconciler writes, for its metrics.
func KindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.Pod:
		return "Pod"
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *batchv1.Job:
		return "Job"
	}
	return "other"
}

// MustJSON encodes a patch built from maps, strings and numbers, which
// cannot fail.
func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
