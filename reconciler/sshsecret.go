package reconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/sshkey"
	"github.com/trainfn/trainfn/render/handoff"
)

// ensureSSHSecret creates the job's SSH Secret of that name when its pods
// mount one and nobody supplied it. The Secret is owned by the workloads that mount it,
// so it goes when they go; it is immutable, so it is never rotated under a
// running job; and a Secret that exists, the user's or an earlier one, is
// never written. Key material is never logged.
func (r *Reconciler) ensureSSHSecret(ctx context.Context, j *job, name string) error {
	// Every workload that mounts the Secret owns it, none as its
	// controller, and none blocked from deletion by it, which would take
	// rights on their finalizers.
	var owners []metav1.OwnerReference
	own := func(obj metav1.Object, gvk schema.GroupVersionKind) {
		owners = append(owners, metav1.OwnerReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		})
	}
	for i := range j.jobs {
		if mounts(j.jobs[i].Spec.Template.Spec, name) {
			own(&j.jobs[i], batchv1.SchemeGroupVersion.WithKind("Job"))
		}
	}
	for i := range j.statefulSets {
		if mounts(j.statefulSets[i].Spec.Template.Spec, name) {
			own(&j.statefulSets[i], appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
		}
	}
	if len(owners) == 0 {
		return nil
	}
	slices.SortFunc(owners, func(a, b metav1.OwnerReference) int { return strings.Compare(string(a.UID), string(b.UID)) })
	seen := j.namespace + "/" + name
	for _, o := range owners {
		seen += "/" + string(o.UID)
	}
	if _, ok := r.secretsSeen.Load(seen); ok {
		return nil
	}

	var existing corev1.Secret
	err := r.Secrets.Get(ctx, types.NamespacedName{Namespace: j.namespace, Name: name}, &existing)
	if err == nil {
		r.secretsSeen.Store(seen, true)
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("looking up Secret %s: %w", name, err)
	}
	data, err := sshkey.Generate()
	if err != nil {
		return err
	}
	secretLabels := handoff.JobLabels(j.name)
	secretLabels[handoff.GeneratedSSH] = "ssh"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: j.namespace, Labels: secretLabels, OwnerReferences: owners,
		},
		Type:      corev1.SecretTypeSSHAuth,
		Data:      data,
		Immutable: new(true),
	}
	r.Metrics.Writes.WithLabelValues("Secret").Inc()
	switch err := r.Client.Create(ctx, secret, client.FieldOwner(FieldManager)); {
	case apierrors.IsAlreadyExists(err):
		// Supplied meanwhile, by the user or another writer: theirs stands.
	case err != nil:
		return fmt.Errorf("creating Secret %s: %w", name, err)
	default:
		r.Metrics.SSHSecrets.Inc()
		log.FromContext(ctx).Info("created the job's SSH Secret", "secret", name)
		for i := range j.jobs {
			if j.jobs[i].Labels[handoff.JobRoleLabel] == handoff.RoleLauncher {
				r.Recorder.Eventf(&j.jobs[i], nil, corev1.EventTypeNormal, "SSHSecretCreated", "Create",
					"created Secret %s with a new Ed25519 key: none was supplied", name)
			}
		}
	}
	r.secretsSeen.Store(seen, true)
	return nil
}

// mounts tells whether a pod spec mounts the named Secret.
func mounts(spec corev1.PodSpec, secret string) bool {
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			return true
		}
	}
	return false
}
