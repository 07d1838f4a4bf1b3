package observed

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// Key names one rendered job. Jobs of two kinds may share a namespace and
// a name, as a PyTorchJob and the TrainJob it moves to do (Trainer's
// migration guide keeps the name): they are two jobs, and neither's end
// may stop the other's workers.
type Key struct {
	Namespace string
	// Kind is the job-kind label of the job's workloads and pods; "" for
	// objects without one (labelled by hand), which make a job of their
	// own.
	Kind string
	Name string
}

func (k Key) String() string { return k.Namespace + "/" + k.Kind + "/" + k.Name }

// KeyOf is the job a rendered workload or pod belongs to, by its labels;
// false for an object without the job-name label.
func KeyOf(obj client.Object) (Key, bool) {
	l := obj.GetLabels()
	name, ok := l[handoff.JobNameLabel]
	if !ok {
		return Key{}, false
	}
	return Key{Namespace: obj.GetNamespace(), Kind: l[handoff.KindLabel], Name: name}, true
}

// Selector selects the job's workloads and pods, and no other kind's of
// the same name. It fails only for a kind no label can hold.
func (k Key) Selector() (labels.Selector, error) {
	s := labels.SelectorFromSet(handoff.JobLabels(k.Name))
	op, values := selection.Equals, []string{k.Kind}
	if k.Kind == "" {
		op, values = selection.DoesNotExist, nil
	}
	kind, err := labels.NewRequirement(handoff.KindLabel, op, values)
	if err != nil {
		return nil, err
	}
	return s.Add(*kind), nil
}

// KeysOf are the jobs an object belongs to, as r, the cache, holds them. A
// workload or pod names its job's kind; a ConfigMap does not, nor does a
// pod rendered before pods carried it, and either belongs to each job of
// its name that has a workload.
func KeysOf(ctx context.Context, r client.Reader, obj client.Object) ([]Key, error) {
	key, ok := KeyOf(obj)
	if !ok {
		return nil, nil
	}
	if _, labelled := obj.GetLabels()[handoff.KindLabel]; labelled {
		return []Key{key}, nil
	}
	in := []client.ListOption{client.InNamespace(key.Namespace), client.MatchingLabels(handoff.JobLabels(key.Name))}
	var jobs batchv1.JobList
	var sets appsv1.StatefulSetList
	var workloads []client.Object
	for _, list := range []client.ObjectList{&jobs, &sets} {
		if err := r.List(ctx, list, in...); err != nil {
			return nil, err
		}
	}
	for i := range jobs.Items {
		workloads = append(workloads, &jobs.Items[i])
	}
	for i := range sets.Items {
		workloads = append(workloads, &sets.Items[i])
	}
	var keys []Key
	for _, w := range workloads {
		if k, ok := KeyOf(w); ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}
