// Package sshsecret creates a job's SSH Secret when its pods mount one and
// nobody supplied it. It may create Secrets and nothing more: it never
// reads one, so it neither learns whether a Secret is the user's nor can
// read any other; a Secret that exists, whoever made it, stands.
package sshsecret

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/sshkey"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// Rules are the rights Ensure needs. Creation cannot be limited by name in
// RBAC (the object does not exist yet): the chart's admission policy lets
// the reconciler create only kubernetes.io/ssh-auth Secrets named for the
// job whose labels they carry.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
}

// Ensurer creates the SSH Secrets of jobs.
type Ensurer struct {
	Writer   write.Writer
	Recorder recorder.EventRecorder
	// Created counts the Secrets it made.
	Created prometheus.Counter

	// tried remembers the Secrets created, or found there, for a set of
	// owners, so that each is sent once per job, not once per event.
	tried sync.Map
}

// Ensure creates each SSH Secret the job's pods mount, once. The Secret is
// owned by the workloads that mount it, so it goes when they go; it is
// immutable, so it is never rotated under a running job. Key material is
// never logged.
func (e *Ensurer) Ensure(ctx context.Context, j *observed.Job) error {
	var errs []error
	for _, name := range handoff.SSHSecretNames(j.Name) {
		errs = append(errs, e.ensure(ctx, j, name))
	}
	return errors.Join(errs...)
}

func (e *Ensurer) ensure(ctx context.Context, j *observed.Job, name string) error {
	owners := mountedBy(j, name)
	if len(owners) == 0 {
		return nil
	}
	key := j.Namespace + "/" + name
	for _, o := range owners {
		key += "/" + string(o.UID)
	}
	if _, ok := e.tried.Load(key); ok {
		return nil
	}
	data, err := sshkey.Generate()
	if err != nil {
		return err
	}
	labels := handoff.JobLabels(j.Name)
	labels[handoff.GeneratedSSH] = "ssh"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: j.Namespace, Labels: labels, OwnerReferences: owners},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       data,
		Immutable:  new(true),
	}
	switch err := e.Writer.Create(ctx, secret); {
	case apierrors.IsAlreadyExists(err):
		// Supplied by the user, or made before: it stands.
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		// A quota, an admission policy or a webhook refuses it (the
		// Secret itself is valid), and the reconciler cannot tell whether
		// the user supplied one: said once, not sent again at every event
		// of the job.
		log.FromContext(ctx).Info("the job's SSH Secret was refused", "secret", name, "reason", err.Error())
		e.toLaunchers(j, corev1.EventTypeWarning, "SSHSecretRefused",
			"could not create Secret %s, which the job's pods mount, unless it exists already: %v", name, err)
	case err != nil:
		return fmt.Errorf("creating Secret %s: %w", name, err)
	default:
		e.Created.Inc()
		log.FromContext(ctx).Info("created the job's SSH Secret", "secret", name)
		e.toLaunchers(j, corev1.EventTypeNormal, "SSHSecretCreated", "created Secret %s with a new Ed25519 key: none was supplied", name)
	}
	e.tried.Store(key, true)
	return nil
}

// toLaunchers records an event on the job's launcher Jobs, where a user
// looks first when the job does not start.
func (e *Ensurer) toLaunchers(j *observed.Job, kind, reason, note string, args ...any) {
	for i := range j.Jobs {
		if j.Jobs[i].Labels[handoff.JobRoleLabel] == handoff.RoleLauncher {
			e.Recorder.Eventf(&j.Jobs[i], nil, kind, reason, "Create", note, args...)
		}
	}
}

// mountedBy are the owner references of every workload that mounts the
// Secret: none its controller, and none blocked from deletion by it, which
// would take rights on their finalizers.
func mountedBy(j *observed.Job, secret string) []metav1.OwnerReference {
	var owners []metav1.OwnerReference
	own := func(obj metav1.Object, gvk schema.GroupVersionKind) {
		owners = append(owners, metav1.OwnerReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		})
	}
	for i := range j.Jobs {
		if mounts(j.Jobs[i].Spec.Template.Spec, secret) {
			own(&j.Jobs[i], batchv1.SchemeGroupVersion.WithKind("Job"))
		}
	}
	for i := range j.StatefulSets {
		if mounts(j.StatefulSets[i].Spec.Template.Spec, secret) {
			own(&j.StatefulSets[i], appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
		}
	}
	slices.SortFunc(owners, func(a, b metav1.OwnerReference) int { return strings.Compare(string(a.UID), string(b.UID)) })
	return owners
}

// mounts tells whether a pod spec mounts the named Secret: as a volume of
// its own (the workers'), or as a source of a projected volume (the
// launcher's, beside its ssh configuration).
func mounts(spec corev1.PodSpec, secret string) bool {
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			return true
		}
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.Secret != nil && s.Secret.Name == secret {
				return true
			}
		}
	}
	return false
}
