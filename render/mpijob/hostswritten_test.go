package mpijob

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/objectsize"
)

// A hostfile of 50,000 workers takes 1.3 MB, over what a ConfigMap holds;
// the launcher then writes it when it starts.
func TestTooManyHostsForTheConfigMapAreWrittenByTheLauncher(t *testing.T) {
	job := newJob("pi").workers(50_000).launcherWorks().obj()
	r := renderJob(t, job)

	for _, o := range r.objects {
		assert.LessOrEqual(t, objectsize.JSON(o.YNode(), objectsize.Max), objectsize.Max, "%s %s", o.GetKind(), o.GetName())
	}
	cm := r.configMap("pi-config")
	assert.NotContains(t, cm.Data, mpi.HostfileKey)
	assert.NotContains(t, cm.Data, handoff.DiscoverHostsKey)
	assert.Contains(t, cm.Data, mpi.WaitForWorkersKey)
	assert.Less(t, dataSize(cm.Data), 16<<10, "the script does not grow with the workers")

	spec := r.job("pi-launcher").Spec.Template.Spec
	require.Len(t, spec.InitContainers, 1, "the wait runs in the launcher's container")
	write := spec.InitContainers[0]
	assert.Equal(t, "write-hosts", write.Name)
	assert.Equal(t, spec.Containers[0].Image, write.Image)
	assert.Equal(t, []string{"/bin/sh", "/etc/mpi-configmap/write_hosts.sh", "/etc/mpi-configmap", "/etc/mpi"}, write.Command)
	assert.Equal(t, []corev1.VolumeMount{{Name: "mpi-job-config", MountPath: "/etc/mpi-configmap"}, {Name: "mpi-job-hosts", MountPath: "/etc/mpi"}}, write.VolumeMounts)
	assert.Contains(t, spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "mpi-job-hosts", MountPath: "/etc/mpi"})
	require.NotNil(t, volume(spec, "mpi-job-hosts"))
	assert.NotNil(t, volume(spec, "mpi-job-hosts").EmptyDir)
	config := volume(spec, "mpi-job-config")
	require.NotNil(t, config)
	assert.ElementsMatch(t, []string{mpi.WriteHostsKey, mpi.WaitForWorkersKey, mpi.LaunchKey}, keys(config.ConfigMap.Items),
		"write_hosts.sh copies the scripts beside what it writes")

	// What the launcher writes is what a ConfigMap large enough would list.
	from, to := t.TempDir(), t.TempDir()
	for k, v := range cm.Data {
		require.NoError(t, os.WriteFile(filepath.Join(from, k), []byte(v), 0o555))
	}
	out, err := exec.Command("/bin/sh", filepath.Join(from, mpi.WriteHostsKey), from, to).CombinedOutput()
	require.NoError(t, err, "%s", out)
	first, workers := hostList(job)
	hosts := slices.Concat(first, workers.Hosts())
	require.Len(t, hosts, 50_001)
	hostfile, err := os.ReadFile(filepath.Join(to, mpi.HostfileKey))
	require.NoError(t, err)
	assert.Equal(t, mpi.Hostfile(job.Implementation, hosts), string(hostfile))
	discover, err := os.ReadFile(filepath.Join(to, handoff.DiscoverHostsKey))
	require.NoError(t, err)
	assert.Equal(t, handoff.DiscoverHosts(hosts, job.discoverFormat()), string(discover))
}

func TestHostsThatFitAreListed(t *testing.T) {
	cm := renderJob(t, newJob("pi").workers(10_000).obj()).configMap("pi-config")
	assert.Contains(t, cm.Data, mpi.HostfileKey)
	assert.NotContains(t, cm.Data, mpi.WriteHostsKey)
}

// An elastic job's discovery script lives in its ConfigMap, where the
// reconciler rewrites it as workers come and go.
func TestTooManyHostsForAnElasticJob(t *testing.T) {
	b := newJob("pi").workers(60_000)
	b.job.Options.ElasticWorkers = &handoff.Bounds{Min: 50_000, Max: 70_000}
	_, errs := checkAndBuild(b.obj())
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.mpiReplicaSpecs.Worker.replicas", errs[0].Field)
	assert.Contains(t, errs[0].Detail, "too many workers for one ConfigMap")
}
