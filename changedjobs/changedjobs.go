// Package changedjobs deletes the live Jobs whose pods a new render
// changes, so that a tool that can only patch them, as Helm can, creates
// them anew instead of failing on their immutable pod template; a Job
// whose pods run what they ran is left alone, running.
//
// What a Job's pods run is its render digest, the label on its pod
// template (gitops.Digest): the live Job's and the new render's differ
// exactly when the pods must restart.
package changedjobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
)

// Outcome is what became of one Job of the new render.
type Outcome string

const (
	// Absent: no such Job is live; the apply creates it.
	Absent Outcome = "not in the cluster"
	// Kept: the live Job's pods run what the new render's would.
	Kept Outcome = "unchanged, kept"
	// Deleted: the live Job and its pods are gone; the apply creates it.
	Deleted Outcome = "deleted"
	// WouldDelete: Deleted, in a dry run.
	WouldDelete Outcome = "would be deleted"
)

// Result is the outcome for one Job, and the digests compared.
type Result struct {
	Namespace, Name string
	Outcome         Outcome
	Live, Rendered  string
}

func (r Result) String() string {
	line := fmt.Sprintf("Job %s/%s: %s", r.Namespace, r.Name, r.Outcome)
	if r.Outcome == Deleted || r.Outcome == WouldDelete {
		line += fmt.Sprintf(" (its pods run %s, the new render %s)", r.Live, r.Rendered)
	}
	return line
}

// Options say where and how.
type Options struct {
	// Namespace is that of the Jobs whose object names none.
	Namespace string
	// DryRun deletes nothing.
	DryRun bool
	// Timeout bounds the wait for each deleted Job's pods to be gone.
	Timeout time.Duration
}

// Delete deletes the live Jobs, among those objects render, whose render
// digest differs from the new one, each with its pods (foreground
// deletion), and returns once they are gone: the Job controller creates a
// new Job's pods under the old ones' hostnames, which must be free.
func Delete(ctx context.Context, batch rest.Interface, objects []*yaml.RNode, opts Options) ([]Result, error) {
	var results []Result
	for _, o := range objects {
		if o.GetApiVersion() != "batch/v1" || o.GetKind() != "Job" {
			continue
		}
		r := Result{Namespace: o.GetNamespace(), Name: o.GetName(), Rendered: digestOf(o)}
		if r.Namespace == "" {
			r.Namespace = opts.Namespace
		}
		if r.Rendered == "" {
			continue // not trainfn's
		}
		live, err := get(ctx, batch, r.Namespace, r.Name)
		switch {
		case err != nil:
			return results, err
		case live == nil:
			r.Outcome = Absent
		default:
			r.Live = live.Spec.Template.Labels[handoff.DigestLabel]
			r.Outcome = Kept
			if r.Live != r.Rendered {
				r.Outcome = WouldDelete
				if !opts.DryRun {
					if err := deleteAndWait(ctx, batch, live, opts.Timeout); err != nil {
						return results, err
					}
					r.Outcome = Deleted
				}
			}
		}
		results = append(results, r)
	}
	return results, nil
}

func digestOf(o *yaml.RNode) string {
	n, err := o.Pipe(yaml.Lookup("spec", "template", "metadata", "labels", handoff.DigestLabel))
	if err != nil || n == nil {
		return ""
	}
	return yaml.GetValue(n)
}

// get is the live Job, or nil when there is none.
func get(ctx context.Context, batch rest.Interface, namespace, name string) (*batchv1.Job, error) {
	var job batchv1.Job
	err := batch.Get().Namespace(namespace).Resource("jobs").Name(name).Do(ctx).Into(&job)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Job %s/%s: %w", namespace, name, err)
	}
	return &job, nil
}

// deleteAndWait deletes the Job, only the one read (its UID), and waits
// until it is gone with its pods.
func deleteAndWait(ctx context.Context, batch rest.Interface, job *batchv1.Job, timeout time.Duration) error {
	foreground := metav1.DeletePropagationForeground
	err := batch.Delete().Namespace(job.Namespace).Resource("jobs").Name(job.Name).
		Body(&metav1.DeleteOptions{PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &job.UID}}).
		Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		live, err := get(ctx, batch, job.Namespace, job.Name)
		return live == nil || live.UID != job.UID, err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the pods of Job %s/%s were not gone within %s: run again to wait on", job.Namespace, job.Name, timeout)
	}
	return err
}
