package observed

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

func workersEndingWith(endsWith string, extra ...string) *appsv1.StatefulSet {
	a := map[string]string{handoff.EndsWith: endsWith}
	for i := 0; i+1 < len(extra); i += 2 {
		a[extra[i]] = extra[i+1]
	}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "j-worker", Annotations: a,
		Labels: handoff.RoleLabels("j", handoff.RoleWorker)}}
}

func jobWith(name string, conditions ...batchv1.JobConditionType) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range conditions {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return j
}

func TestEnded(t *testing.T) {
	exited := func(code int32, last bool) corev1.Pod {
		s := corev1.ContainerStatus{Name: "pytorch"}
		term := &corev1.ContainerStateTerminated{ExitCode: code}
		if last {
			s.LastTerminationState.Terminated = term
			s.State.Running = &corev1.ContainerStateRunning{}
		} else {
			s.State.Terminated = term
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: handoff.RoleLabels("j", handoff.RoleWorker)},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{s}}}
	}
	for name, tc := range map[string]struct {
		job     Job
		workers *appsv1.StatefulSet
		want    phase.Phase
	}{
		"launcher running": {
			job:     Job{Jobs: []batchv1.Job{jobWith("j-launcher")}},
			workers: workersEndingWith("job/j-launcher"), want: ""},
		"launcher complete": {
			job:     Job{Jobs: []batchv1.Job{jobWith("j-launcher", batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)}},
			workers: workersEndingWith("job/j-launcher"), want: phase.Succeeded},
		"launcher failing, its pods not yet gone": {
			job:     Job{Jobs: []batchv1.Job{jobWith("j-launcher", batchv1.JobFailureTarget)}},
			workers: workersEndingWith("job/j-launcher"), want: phase.Failed},
		"another job's completion does not count": {
			job:     Job{Jobs: []batchv1.Job{jobWith("other-launcher", batchv1.JobComplete)}},
			workers: workersEndingWith("job/j-launcher"), want: ""},
		"an agent exited cleanly before its restart": {
			job:     Job{Pods: []corev1.Pod{exited(0, true)}},
			workers: workersEndingWith("container/pytorch"), want: phase.Succeeded},
		"an agent failed": {
			job:     Job{Pods: []corev1.Pod{exited(1, false)}},
			workers: workersEndingWith("container/pytorch"), want: ""},
		"a worker scaled away exited cleanly, as on SIGTERM": {
			job:     Job{Pods: []corev1.Pod{indexed(exited(0, false), 3)}},
			workers: scaledTo(workersEndingWith("container/pytorch"), 2), want: ""},
		"a worker below the count exited cleanly": {
			job:     Job{Pods: []corev1.Pod{indexed(exited(0, false), 1)}},
			workers: scaledTo(workersEndingWith("container/pytorch"), 2), want: phase.Succeeded},
		"a worker being deleted exited cleanly": {
			job:     Job{Pods: []corev1.Pod{deleting(exited(0, false))}},
			workers: workersEndingWith("container/pytorch"), want: ""},
		"recorded before": {
			job:     Job{},
			workers: workersEndingWith("job/j-launcher", handoff.Ended, "Failed"), want: phase.Failed},
		"nothing names the end": {
			job:     Job{Jobs: []batchv1.Job{jobWith("j-launcher", batchv1.JobComplete)}},
			workers: workersEndingWith(""), want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.job.Ended(tc.workers))
		})
	}
}

func indexed(p corev1.Pod, i int) corev1.Pod {
	p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(i)
	return p
}

func deleting(p corev1.Pod) corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{}
	return p
}

func scaledTo(s *appsv1.StatefulSet, n int32) *appsv1.StatefulSet {
	s.Spec.Replicas = &n
	return s
}

// TestDIJobEnds checks a DIJob of tasks ends as DI-orchestrator's did:
// failed when a task's Job failed, succeeded when all of them did.
func TestDIJobEnds(t *testing.T) {
	task := func(name string, conditions ...batchv1.JobConditionType) batchv1.Job {
		j := jobWith(name, conditions...)
		j.Labels = map[string]string{handoff.KindLabel: handoff.DIJobKind}
		j.Annotations = map[string]string{handoff.DIJobGeneration: "1"}
		return j
	}
	for name, tc := range map[string]struct {
		jobs []batchv1.Job
		want phase.Phase
	}{
		"running":           {[]batchv1.Job{task("j-learner"), task("j-collector")}, ""},
		"one task complete": {[]batchv1.Job{task("j-learner", batchv1.JobComplete), task("j-collector")}, ""},
		"all complete":      {[]batchv1.Job{task("j-learner", batchv1.JobComplete), task("j-collector", batchv1.JobComplete)}, phase.Succeeded},
		"one failed":        {[]batchv1.Job{task("j-learner"), task("j-collector", batchv1.JobFailed)}, phase.Failed},
	} {
		t.Run(name, func(t *testing.T) {
			j := Job{Jobs: tc.jobs}
			require.Len(t, j.Workers(), len(tc.jobs), "every task's Job is a workers' workload")
			require.Equal(t, tc.want, j.Ended(&j.Jobs[0]))
		})
	}
}

func TestBoundsRefusesWhatTheRenderWouldNotWrite(t *testing.T) {
	s := workersEndingWith("", handoff.ElasticWorkers, "2:8", handoff.Workers, "4")
	b, first, err := Bounds(s)
	require.NoError(t, err)
	require.Equal(t, int32(2), b.Min)
	require.Equal(t, int32(8), b.Max)
	require.Equal(t, int32(4), first)

	for _, bad := range [][2]string{{"2:8", "9"}, {"8:2", "4"}, {"2-8", "4"}, {"2:8", "x"}} {
		_, _, err := Bounds(workersEndingWith("", handoff.ElasticWorkers, bad[0], handoff.Workers, bad[1]))
		require.Error(t, err, "%v", bad)
	}
}

// The launcher's pod is found by its role whichever operator's labels it
// carries: mpi-operator's job-role launcher, or training-operator's
// replica-type launcher beside job-role master (a v1 MPIJob's).
func TestLauncherPodByItsRole(t *testing.T) {
	pod := func(name string, l map[string]string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	v1Launcher := handoff.RoleLabels("j", handoff.RoleMaster)
	v1Launcher[handoff.ReplicaTypeLabel] = handoff.RoleLauncher
	pytorchMaster := handoff.RoleLabels("j", handoff.RoleMaster)
	pytorchMaster[handoff.ReplicaTypeLabel] = handoff.RoleMaster
	for name, tc := range map[string]struct {
		pods []corev1.Pod
		want string
	}{
		"v2beta1":                    {[]corev1.Pod{pod("w", handoff.RoleLabels("j", handoff.RoleWorker)), pod("l", handoff.RoleLabels("j", handoff.RoleLauncher))}, "l"},
		"v1":                         {[]corev1.Pod{pod("w", handoff.RoleLabels("j", handoff.RoleWorker)), pod("l", v1Launcher)}, "l"},
		"a PyTorchJob's master":      {[]corev1.Pod{pod("m", pytorchMaster)}, ""},
		"workers without a launcher": {[]corev1.Pod{pod("w", handoff.RoleLabels("j", handoff.RoleWorker))}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			j := Job{Pods: tc.pods}
			got := ""
			if l := j.Launcher(); l != nil {
				got = l.Name
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// The grace the workers have to end by themselves runs from the launcher's
// end; a launcher Job already deleted (its ttlSecondsAfterFinished) leaves
// none, or the grace would start again at every look.
func TestEndedFor(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	done := jobWith("j-launcher", batchv1.JobComplete)
	done.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-10 * time.Second))
	for name, tc := range map[string]struct {
		jobs []batchv1.Job
		want time.Duration
	}{
		"ended 10 s ago":  {jobs: []batchv1.Job{done}, want: 10 * time.Second},
		"still running":   {jobs: []batchv1.Job{jobWith("j-launcher")}, want: 0},
		"gone since":      {jobs: nil, want: math.MaxInt64},
		"another's ended": {jobs: []batchv1.Job{jobWith("other-launcher", batchv1.JobComplete)}, want: math.MaxInt64},
	} {
		j := Job{Jobs: tc.jobs}
		require.Equal(t, tc.want, j.EndedFor("j-launcher", now), name)
	}
}
