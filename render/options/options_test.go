package options

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnnotationsOverrideTheConfig(t *testing.T) {
	config := Options{MPI: MPI{LaunchMode: SSH}, Gang: Gang{Scheduler: SchedulerPlugins, SchedulerName: "cosched", Queue: "q"}}

	got, errs := config.ForJob(map[string]string{LaunchModeAnnotation: "KubectlExec", GangSchedulerAnnotation: "Volcano"})
	require.Empty(t, errs)
	assert.Equal(t, KubectlExec, got.MPI.LaunchMode)
	assert.Equal(t, Gang{Scheduler: Volcano, Queue: "q"}, got.Gang, "another scheduler's name does not carry over")

	got, errs = config.ForJob(map[string]string{GangSchedulerAnnotation: "None"})
	require.Empty(t, errs)
	assert.Equal(t, Gang{}, got.Gang)

	got, errs = config.ForJob(map[string]string{GangSchedulerAnnotation: "SchedulerPlugins", "other.io/x": "y"})
	require.Empty(t, errs)
	assert.Equal(t, config, got, "naming the configured scheduler keeps its settings")
}

func TestUnknownAnnotationsAreErrors(t *testing.T) {
	_, errs := Default.ForJob(map[string]string{
		LaunchModeAnnotation:           "ssh",
		GangSchedulerAnnotation:        "kube-batch",
		"trainfn.dev/mpi-launch-modes": "SSH",
	})
	require.Len(t, errs, 3)
	assert.Equal(t, "metadata.annotations[trainfn.dev/mpi-launch-mode]", errs[0].Field)
	assert.Equal(t, "metadata.annotations[trainfn.dev/gang-scheduler]", errs[1].Field)
	assert.Equal(t, "metadata.annotations[trainfn.dev/mpi-launch-modes]", errs[2].Field)
}
