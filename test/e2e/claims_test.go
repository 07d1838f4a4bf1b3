//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// provideClaims creates, in ns, the PersistentVolumeClaims the output's
// pod templates mount, as the job's user provides them beside the job, each
// bound to a PersistentVolume of its own, so that the scheduler places the
// pods as it places those of a cluster with storage. The volumes go when
// the test ends.
func provideClaims(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	for _, tmpl := range podTemplates(t, objs) {
		for _, v := range tmpl.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			claim := v.PersistentVolumeClaim.ClaimName
			volume := ns + "-" + claim
			size := resource.MustParse("1Gi")
			rendered, access := renderedClaim(t, objs, claim)
			if rendered != nil {
				// The output has the claim (a TrainJob's volumeClaimPolicies):
				// only a volume for it to bind is provided.
				size = rendered.Spec.Resources.Requests[corev1.ResourceStorage]
			}
			_, err := kube.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: volume},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
					AccessModes:                   access,
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + volume}},
					ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
				},
			}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			require.NoError(t, err, "creating PersistentVolume %s", volume)
			t.Cleanup(func() {
				_ = kube.Client.CoreV1().PersistentVolumes().Delete(context.Background(), volume, metav1.DeleteOptions{})
			})
			if rendered != nil {
				continue
			}
			_, err = kube.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: claim},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
					VolumeName:       volume,
					StorageClassName: new(string),
				},
			}, metav1.CreateOptions{})
			require.NoError(t, err, "creating PersistentVolumeClaim %s", claim)
		}
	}
}

// renderedClaim is the output's PersistentVolumeClaim of that name, if it
// has one, and the access modes a volume for the claim needs.
func renderedClaim(t *testing.T, objs []*unstructured.Unstructured, name string) (*corev1.PersistentVolumeClaim, []corev1.PersistentVolumeAccessMode) {
	for _, obj := range objs {
		if obj.GetKind() != "PersistentVolumeClaim" || obj.GetName() != name {
			continue
		}
		var claim corev1.PersistentVolumeClaim
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &claim))
		return &claim, claim.Spec.AccessModes
	}
	return nil, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
}

// provideServiceAccounts creates the ServiceAccounts the pods name and the
// output does not render, as a cluster provides them (Kubeflow Trainer's
// data cache installs the one its runtime's initializer runs as).
func provideServiceAccounts(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	rendered := map[string]bool{}
	for _, obj := range objs {
		if obj.GetKind() == "ServiceAccount" {
			rendered[obj.GetName()] = true
		}
	}
	for _, tmpl := range podTemplates(t, objs) {
		name := tmpl.Spec.ServiceAccountName
		if name == "" || name == "default" || rendered[name] {
			continue
		}
		rendered[name] = true
		_, err := kube.Client.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "creating ServiceAccount %s", name)
		}
	}
}
