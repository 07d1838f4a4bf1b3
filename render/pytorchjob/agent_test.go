package pytorchjob

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/testtool"
)

// startAgent runs agentOnce as a worker's container does, its scratch
// directory, the pod's emptyDir, under run: one start of the container.
func startAgent(t *testing.T, run string, command ...string) *testtool.Script {
	t.Helper()
	script := strings.ReplaceAll(agentScript("train-worker"), runDir, run)
	require.NotEqual(t, agentScript("train-worker"), script, "the agent keeps its mark in its scratch directory")
	return testtool.StartScript(t, nil, script, agentName, command...)
}

// A StatefulSet restarts an agent that succeeded: the restart trains no
// more, says why on stderr, and waits to be stopped, which it then is at
// once. Before, every restart ran the command again.
func TestAgentRunsOnceItSucceeded(t *testing.T) {
	run, dir := t.TempDir(), t.TempDir()
	trained := filepath.Join(dir, "trained")
	command := []string{"/bin/sh", "-c", `echo once >> "$0"`, trained}

	first := startAgent(t, run, command...)
	require.Equal(t, 0, first.ExitCode(t, 10*time.Second), "%s", &first.Out)

	restarted := startAgent(t, run, command...)
	assert.Equal(t, -1, restarted.ExitCode(t, 2*time.Second), "the restart waits to be stopped: %s", &restarted.Out)
	got, err := os.ReadFile(trained)
	require.NoError(t, err)
	assert.Equal(t, "once\n", string(got), "the restart trained again")
	assert.Contains(t, restarted.Out.String(), "trainfn: training ended: this worker's command (/bin/sh) exited with status 0 before its StatefulSet restarted it")
	assert.Contains(t, restarted.Out.String(), "kubectl scale statefulset train-worker --replicas=0")

	require.NoError(t, restarted.Cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, restarted.ExitCode(t, 5*time.Second), "stopped, as the reconciler stops it")
}

// An agent that fails is restarted and runs again, as torchrun's agents
// rejoin the rendezvous; its code is the container's.
func TestAgentThatFailsRunsAgain(t *testing.T) {
	run, dir := t.TempDir(), t.TempDir()
	trained := filepath.Join(dir, "trained")
	command := []string{"/bin/sh", "-c", `echo try >> "$0"; exit 3`, trained}
	for range 2 {
		a := startAgent(t, run, command...)
		require.Equal(t, 3, a.ExitCode(t, 10*time.Second), "%s", &a.Out)
	}
	got, err := os.ReadFile(trained)
	require.NoError(t, err)
	assert.Equal(t, "try\ntry\n", string(got))
	assert.NoFileExists(t, filepath.Join(run, "ended"))
}

// Stopped by the kubelet (a scale-down), the agent's command is stopped,
// and a stop is no success, whatever the command then exits with: a new
// container would train.
func TestAgentStoppedPassesTheSignalOn(t *testing.T) {
	run, dir := t.TempDir(), t.TempDir()
	a := startAgent(t, run, "/bin/sh", "-c", `trap 'echo > "$0"/stopped; exit 0' TERM; echo > "$0"/started; sleep 60 >/dev/null 2>&1 & wait`, dir)
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGTERM))
	assert.NotEqual(t, -1, a.ExitCode(t, 10*time.Second), "the stopped agent ended: %s", &a.Out)
	assert.FileExists(t, filepath.Join(dir, "stopped"), "the command was stopped, not waited for")
	assert.NoFileExists(t, filepath.Join(run, "ended"), "a stopped agent did not train to the end")
}

// An elastic job's workers in a StatefulSet run their command through
// agentOnce, with its scratch volume; a container that names no command
// is left alone, with a warning.
func TestStatefulSetWorkersRunTheirAgentOnce(t *testing.T) {
	b := newJob("train").workers(2).elastic(1, 3)
	b.job.Scaling = &handoff.Bounds{Min: 1, Max: 3}
	b.job.Worker.Template = yaml.MustParse(`{spec: {containers: [{name: pytorch, image: train:1, command: [torchrun], args: [train.py]}]}}`)
	out, errs := checkAndBuild(&b.job)
	require.Empty(t, errs)
	set := statefulSet(t, out.Objects)
	c := set.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"/bin/sh", "-c", agentScript("train-worker"), agentName}, c.Command)
	assert.Equal(t, []string{"torchrun", "train.py"}, c.Args)
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: runVolume, MountPath: runDir})
	require.Len(t, set.Spec.Template.Spec.Volumes, 1)
	assert.Equal(t, runVolume, set.Spec.Template.Spec.Volumes[0].Name)
	assert.Empty(t, out.Warnings)

	b.job.Worker.Template = yaml.MustParse(`{spec: {containers: [{name: pytorch, image: train:1, args: [train.py]}]}}`)
	out, errs = checkAndBuild(&b.job)
	require.Empty(t, errs)
	c = statefulSet(t, out.Objects).Spec.Template.Spec.Containers[0]
	assert.Nil(t, c.Command)
	require.Len(t, out.Warnings, 1)
	assert.Equal(t, field.NewPath("spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers").Index(0).Child("command").String(), out.Warnings[0].Field.String())
	assert.Contains(t, out.Warnings[0].Message, "restarts an agent that succeeded, which trains again")
}

func statefulSet(t *testing.T, objects []*yaml.RNode) *appsv1.StatefulSet {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() != "StatefulSet" {
			continue
		}
		s, err := o.String()
		require.NoError(t, err)
		var set appsv1.StatefulSet
		require.NoError(t, sigsyaml.UnmarshalStrict([]byte(s), &set))
		return &set
	}
	require.Fail(t, "no StatefulSet rendered")
	return nil
}
