package options

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnnotationsOverrideTheConfig(t *testing.T) {
	config := Options{MPI: MPI{LaunchMode: SSH}, Gang: Gang{Scheduler: SchedulerPlugins, SchedulerName: "cosched", Queue: "q"}}

	got, errs := config.ForJob(map[string]string{LaunchModeAnnotation: "KubectlExec", GangSchedulerAnnotation: "Volcano"}, nil)
	require.Empty(t, errs)
	assert.Equal(t, KubectlExec, got.MPI.LaunchMode)
	assert.Equal(t, Gang{Scheduler: Volcano, Queue: "q"}, got.Gang, "another scheduler's name does not carry over")

	got, errs = config.ForJob(map[string]string{GangSchedulerAnnotation: "None"}, nil)
	require.Empty(t, errs)
	assert.Equal(t, Gang{}, got.Gang)

	got, errs = config.ForJob(map[string]string{GangSchedulerAnnotation: "SchedulerPlugins", "other.io/x": "y"}, nil)
	require.Empty(t, errs)
	assert.Equal(t, config, got, "naming the configured scheduler keeps its settings")
}

func TestUnknownAnnotationsAreErrors(t *testing.T) {
	_, errs := Default.ForJob(map[string]string{
		LaunchModeAnnotation:           "ssh",
		GangSchedulerAnnotation:        "kube-batch",
		"trainfn.dev/mpi-launch-modes": "SSH",
	}, nil)
	require.Len(t, errs, 3)
	assert.Equal(t, "metadata.annotations[trainfn.dev/mpi-launch-mode]", errs[0].Field)
	assert.Equal(t, "metadata.annotations[trainfn.dev/gang-scheduler]", errs[1].Field)
	assert.Equal(t, "metadata.annotations[trainfn.dev/mpi-launch-modes]", errs[2].Field)
}

// Kueue's docs queue an MPIJob, a PyTorchJob or a TrainJob with its label
// alone: the label chooses Kueue, with its queue, whatever the run's
// config says of Kueue, and before the kind decodes, since Kueue changes
// the shape of elastic workers.
func TestKueuesQueueLabelChoosesKueue(t *testing.T) {
	label := map[string]string{"kueue.x-k8s.io/queue-name": "user-queue"}
	for name, c := range map[string]struct {
		config      Gang
		annotations map[string]string
		want        Gang
	}{
		"no config": {want: Gang{Scheduler: Kueue, QueueLabel: "user-queue"}},
		"the config's Kueue, its queue kept for other jobs": {
			config: Gang{Scheduler: Kueue, SchedulerName: "s", Queue: "jobs"},
			want:   Gang{Scheduler: Kueue, SchedulerName: "s", Queue: "jobs", QueueLabel: "user-queue"},
		},
		"the annotation's Kueue over the config's Volcano": {
			config:      Gang{Scheduler: Volcano, KubernetesVersion: "1.37"},
			annotations: map[string]string{GangSchedulerAnnotation: "Kueue"},
			want:        Gang{Scheduler: Kueue, KubernetesVersion: "1.37", QueueLabel: "user-queue"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, errs := Options{Gang: c.config}.ForJob(c.annotations, label)
			require.Empty(t, errs)
			assert.Equal(t, c.want, got.Gang)
			assert.True(t, got.Gang.ResizesJobs(), "elastic workers are decoded as a Job Kueue resizes")
		})
	}
	got, errs := Default.ForJob(nil, map[string]string{"kueue.x-k8s.io/queue-name": ""})
	require.Empty(t, errs)
	assert.Equal(t, Gang{}, got.Gang, "an empty queue queues nothing, as for Kueue")
}

// Kueue reads its label whatever else the job says: with another gang
// scheduler, or none, the job would be a second gang, or none Kueue
// would admit whole.
func TestKueuesQueueLabelWithAnotherSchedulerIsAnError(t *testing.T) {
	label := map[string]string{"kueue.x-k8s.io/queue-name": "user-queue"}
	for name, c := range map[string]struct {
		config      Gang
		annotations map[string]string
		says        []string
	}{
		"the annotation's Volcano": {
			annotations: map[string]string{GangSchedulerAnnotation: "Volcano"},
			says:        []string{"trainfn.dev/gang-scheduler: Volcano", "remove the label or the annotation"},
		},
		"the annotation's None": {
			config:      Gang{Scheduler: Kueue, Queue: "jobs"},
			annotations: map[string]string{GangSchedulerAnnotation: "None"},
			says:        []string{"trainfn.dev/gang-scheduler: None turns gang scheduling off"},
		},
		"the config's Kubernetes": {
			config: Gang{Scheduler: Kubernetes},
			says:   []string{"gangScheduling.scheduler in trainfn's function config chooses Kubernetes", "trainfn.dev/gang-scheduler: Kueue"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := Options{Gang: c.config}.ForJob(c.annotations, label)
			require.Len(t, errs, 1)
			assert.Equal(t, "metadata.labels[kueue.x-k8s.io/queue-name]", errs[0].Field)
			assert.Contains(t, errs[0].Error(), "queues the job with Kueue, as one Workload")
			for _, s := range c.says {
				assert.Contains(t, errs[0].Error(), s)
			}
		})
	}
}

// The progress annotation turns progress on or off for its job, over the
// config either way; any other value is an error at the annotation.
func TestProgressAnnotation(t *testing.T) {
	on := Options{Progress: true, ProgressServer: "s:1"}
	got, errs := on.ForJob(map[string]string{ProgressAnnotation: "false"}, nil)
	require.Empty(t, errs)
	assert.Equal(t, Options{ProgressServer: "s:1"}, got)

	got, errs = Default.ForJob(map[string]string{ProgressAnnotation: "true"}, nil)
	require.Empty(t, errs)
	assert.True(t, got.Progress)
	assert.Equal(t, DefaultProgressServer, got.ProgressServer)

	got, errs = on.ForJob(nil, nil)
	require.Empty(t, errs)
	assert.True(t, got.Progress, "the config's choice holds for a job that makes none")

	_, errs = Default.ForJob(map[string]string{ProgressAnnotation: "True"}, nil)
	require.Len(t, errs, 1)
	assert.Equal(t, "metadata.annotations[trainfn.dev/progress]", errs[0].Field)
	assert.Contains(t, errs[0].Error(), `supported values: "true", "false"`)
}
