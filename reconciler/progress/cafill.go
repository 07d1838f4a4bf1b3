package progress

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// The ConfigMap the render gives a progress job's pods the server's CA in
// (handoff.ProgressCAName), annotated CAAnnotation, rendered with no data;
// the reconciler fills its CAKey.
const (
	CAAnnotation = handoff.ProgressCA
	CAKey        = handoff.ProgressCAKey
)

// CAFiller fills the CA's certificate into the CA ConfigMaps of progress
// jobs: per job as the reconciler reconciles it, and every one when the
// CA changes.
type CAFiller struct {
	Cache  client.Reader
	Writer write.Writer
	// CA is the CA's certificate, and a channel closed when it changes;
	// nil before the server has read its Secret.
	CA func() ([]byte, <-chan struct{})
}

// Fill fills the job's CA ConfigMap, if it has one. A nil filler (no
// progress server) fills nothing.
func (f *CAFiller) Fill(ctx context.Context, j *observed.Job) error {
	if f == nil {
		return nil
	}
	var cm corev1.ConfigMap
	err := f.Cache.Get(ctx, types.NamespacedName{Namespace: j.Namespace, Name: handoff.ProgressCAName(j.Kind, j.Name)}, &cm)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.fill(ctx, &cm)
}

// FillAll fills every CA ConfigMap of the cache.
func (f *CAFiller) FillAll(ctx context.Context) error {
	var cms corev1.ConfigMapList
	if err := f.Cache.List(ctx, &cms, client.MatchingLabels{handoff.OperatorNameLabel: handoff.Operator}); err != nil {
		return err
	}
	var errs []error
	for i := range cms.Items {
		errs = append(errs, f.fill(ctx, &cms.Items[i]))
	}
	return errors.Join(errs...)
}

// fill writes the CA into cm when cm asks for it and holds another.
func (f *CAFiller) fill(ctx context.Context, cm *corev1.ConfigMap) error {
	if cm.Annotations[CAAnnotation] != "true" || cm.Labels[handoff.JobNameLabel] == "" {
		return nil
	}
	ca, _ := f.CA()
	if ca == nil {
		// Filled with every other when the server has its CA (Filling).
		return nil
	}
	if cm.Data[CAKey] == string(ca) {
		return nil
	}
	err := f.Writer.MergePatch(ctx, cm, map[string]any{"data": map[string]string{CAKey: string(ca)}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Run fills every CA ConfigMap each time the CA changes, until ctx ends.
func (f *CAFiller) Run(ctx context.Context, failed func(error)) {
	for {
		_, changed := f.CA()
		if err := f.FillAll(ctx); err != nil {
			failed(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
