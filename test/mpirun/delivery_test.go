//go:build e2e

package mpirun

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/test/rendered"
	"github.com/trainfn/trainfn/test/testtool"
)

// TestKubectlDelivery runs the KubectlExec launcher's first init container
// in an image laid out as mpioperator/kubectl-delivery's (its Dockerfile:
// kubectl at /bin/kubectl, over a base with cp), and the launcher's own
// container after it: the kubectl the init container delivered must run
// where kubexec.sh runs it. The init container runs as nobody, as the
// launcher's pod names no user, and the launcher as the image's root: the
// kubectl nobody copied is nobody's, and runs for root. The delivery
// image's entrypoint is not run:
// the rendered command replaces it, since the image's later entrypoint
// reads pod names from /etc/mpi/hostfile and watches the namespace's pods,
// which the launcher's Role does not allow.
func TestKubectlDelivery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), scenario)
	defer cancel()
	name, _, _ := readJob(t, "openmpi-kubectl-exec.yaml")
	out := render(t, "openmpi-kubectl-exec.yaml")
	c := newCluster(t, ctx, out, "openmpi", name)
	c.image.addKubectl(t)

	var launcher *rendered.Pod
	for i := range out.Jobs {
		if out.Jobs[i].Labels[handoff.JobRoleLabel] == handoff.RoleLauncher {
			launcher = rendered.Pods(&out.Jobs[i])[0]
		}
	}
	require.NotNil(t, launcher)
	require.NotEmpty(t, launcher.Spec.InitContainers)
	delivery := launcher.Spec.InitContainers[0]
	require.Equal(t, "kubectl-delivery", delivery.Name)

	l := c.start(launcher)
	require.NotNil(t, delivery.SecurityContext)
	require.NotNil(t, delivery.SecurityContext.RunAsUser)
	require.EqualValues(t, 65534, *delivery.SecurityContext.RunAsUser, "the delivery runs as nobody")
	step := c.run(l, delivery.Name, nil)
	require.NoError(t, c.await(step), step.output())
	info, err := os.Stat(filepath.Join(l.dir, "volumes", delivery.VolumeMounts[0].Name, "kubectl"))
	require.NoError(t, err)
	assert.EqualValues(t, 65534, info.Sys().(*syscall.Stat_t).Uid, "kubectl was copied as nobody")
	client := c.run(l, launcher.Spec.Containers[0].Name, []string{mpi.KubectlPath, "version", "--client"})
	require.NoError(t, c.await(client), client.output())
	assert.Contains(t, client.output(), "Client Version:")
}

// addKubectl lays kubectl over the image where mpi-operator's kubectl
// delivery image has it, /bin/kubectl, and the folder the launcher mounts
// it into.
func (img *image) addKubectl(t *testing.T) {
	t.Helper()
	content, err := os.ReadFile(testtool.Find(t, "kubectl"))
	require.NoError(t, err)
	root := users[0]
	img.write(t, "bin/kubectl", 0o755, root, string(content))
	img.mkdir(t, "opt", 0o755, root)
}
