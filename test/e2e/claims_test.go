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
			_, err := kube.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: volume},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
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
