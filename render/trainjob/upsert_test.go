package trainjob

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// Trainer's apply.UpsertVolumeMounts keys mounts by path: a plugin's mount
// replaces the runtime's at the same path, and one of the same volume at
// another path is added beside it.
func TestUpsertVolumeMountKeysByPath(t *testing.T) {
	mounts := []corev1.VolumeMount{{Name: "runtime-ssh", MountPath: "/root/.ssh"}, {Name: "data", MountPath: "/data"}}
	upsertVolumeMount(&mounts, corev1.VolumeMount{Name: "mpi-ssh-auth", MountPath: "/root/.ssh"})
	upsertVolumeMount(&mounts, corev1.VolumeMount{Name: "data", MountPath: "/cache"})
	assert.Equal(t, []corev1.VolumeMount{
		{Name: "mpi-ssh-auth", MountPath: "/root/.ssh"},
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/cache"},
	}, mounts)
}
