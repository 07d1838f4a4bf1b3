package status_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/phase"
)

// created is when the cluster's first object was made; the tests' clock
// reads it plus an hour.
var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// job is a Job of a trainfn job, created minutes after the first object,
// with n pods.
func job(namespace, jobName, name, role string, n int32, minutes int, annotations ...string) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: workloadMeta(namespace, jobName, name, role, minutes, annotations),
		Spec:       batchv1.JobSpec{Parallelism: ptr.To(n), Completions: ptr.To(n), CompletionMode: ptr.To(batchv1.IndexedCompletion)},
	}
	return j
}

func statefulSet(namespace, jobName, name, role string, n int32, minutes int, annotations ...string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: workloadMeta(namespace, jobName, name, role, minutes, annotations),
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(n)},
	}
}

func workloadMeta(namespace, jobName, name, role string, minutes int, annotations []string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Namespace: namespace, Name: name, UID: types.UID(namespace + "/" + name),
		Labels:            handoff.RoleLabels(jobName, role),
		CreationTimestamp: metav1.NewTime(created.Add(time.Duration(minutes) * time.Minute)),
		Annotations:       map[string]string{},
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		m.Annotations[annotations[i]] = annotations[i+1]
	}
	return m
}

// ofKind labels workloads with the kind of the job they belong to, as the
// render does.
func ofKind(kind string, workloads ...client.Object) {
	for _, w := range workloads {
		w.GetLabels()[handoff.KindLabel] = kind
	}
}

// pod is pod i of a workload, running, ready or not.
func pod(owner client.Object, kind string, i int, ready bool) *corev1.Pod {
	apiVersion := "batch/v1"
	if kind == "StatefulSet" {
		apiVersion = "apps/v1"
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: owner.GetNamespace(), Name: owner.GetName() + "-" + string(rune('0'+i)),
			Labels: owner.GetLabels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner.GetName(),
				UID: owner.GetUID(), Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "main", Image: "trainer"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: status}}},
	}
}

// cluster holds, besides objects trainfn did not render:
//   - in "research": pi, an MPIJob, running; sac, a preemptible DIJob
//     that had been running (the reconciler recorded it) and lost
//     readiness;
//   - in "team-a": dqn, a task-shaped DIJob just started, and leftover, a
//     job of which only a pod is left;
//   - in "team-b": sac too, another job of the same name.
func cluster() status.Lister {
	launcher := job("research", "pi", "pi-launcher", handoff.RoleLauncher, 1, 10)
	workers := job("research", "pi", "pi-worker", handoff.RoleWorker, 2, 10, handoff.EndsWith, handoff.EndsWithJob("pi-launcher"))
	sac := statefulSet("research", "sac", "sac-worker", handoff.RoleWorker, 2, 0,
		handoff.DIJobGeneration, "1", handoff.FirstRank, "0", handoff.Phase, string(phase.Running))
	learner := job("team-a", "dqn", "dqn-learner", "learner", 1, 50, handoff.DIJobGeneration, "1", handoff.FirstRank, "0")
	collector := job("team-a", "dqn", "dqn-collector", "collector", 2, 50, handoff.DIJobGeneration, "1", handoff.FirstRank, "1")
	otherSac := statefulSet("team-b", "sac", "sac-worker", handoff.RoleWorker, 1, 59, handoff.DIJobGeneration, "1")
	leftover := pod(job("team-a", "leftover", "leftover-worker", handoff.RoleWorker, 1, 0), "Job", 0, true)
	notOurs := job("research", "other", "other", handoff.RoleWorker, 1, 0)
	notOurs.Labels = map[string]string{handoff.JobNameLabel: "other"}
	ofKind("MPIJob", launcher, workers)
	ofKind("DIJob", sac, learner, collector, otherSac)

	objs := []client.Object{launcher, workers, sac, learner, collector, otherSac, leftover, notOurs,
		pod(launcher, "Job", 0, true), pod(workers, "Job", 0, true), pod(workers, "Job", 1, true),
		pod(sac, "StatefulSet", 0, true), pod(sac, "StatefulSet", 1, false),
		pod(otherSac, "StatefulSet", 0, true),
	}
	for i := range objs {
		// The fake client drops what it is given of these.
		objs[i].SetResourceVersion("")
	}
	return lister{fake.NewClientBuilder().WithObjects(objs...).Build()}
}

// lister is what jobstatus lists through, backed by a controller-runtime
// client: the fake one holds the tests' objects.
type lister struct{ client.Reader }

func (l lister) ListJobs(ctx context.Context, namespace string, selector map[string]string) ([]batchv1.Job, error) {
	var list batchv1.JobList
	err := l.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(selector))
	return list.Items, err
}

func (l lister) ListStatefulSets(ctx context.Context, namespace string, selector map[string]string) ([]appsv1.StatefulSet, error) {
	var list appsv1.StatefulSetList
	err := l.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(selector))
	return list.Items, err
}

func (l lister) ListPods(ctx context.Context, namespace string, selector map[string]string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := l.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(selector))
	return list.Items, err
}

// row is what a test checks of a listed job.
type row struct {
	Namespace, Name, Kind string
	Phase                 phase.Phase
	Ready, Expected       int32
}

func rows(jobs []status.Job) []row {
	var out []row
	for _, j := range jobs {
		out = append(out, row{j.Namespace, j.Name, j.Kind, j.Phase, j.Ready, j.Expected})
	}
	return out
}

func TestList(t *testing.T) {
	c := cluster()
	all, err := status.List(context.Background(), c, "")
	require.NoError(t, err)
	assert.Equal(t, []row{
		{"research", "pi", "MPIJob", phase.Running, 3, 3},
		// Not ready and never restarted, but the recorded Running makes it
		// a restart.
		{"research", "sac", "DIJob", phase.Restarting, 1, 2},
		{"team-a", "dqn", "DIJob", phase.Pending, 0, 3},
		{"team-b", "sac", "DIJob", phase.Running, 1, 1},
	}, rows(all))
	assert.Equal(t, phase.Running, all[1].Recorded)
	assert.Equal(t, created, all[1].Created.UTC(), "the job's age is its first workload's")

	research, err := status.List(context.Background(), c, "research")
	require.NoError(t, err)
	assert.Equal(t, all[:2], research)

	none, err := status.List(context.Background(), c, "elsewhere")
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestGet(t *testing.T) {
	c := cluster()
	got, err := status.Get(context.Background(), c, "team-b", "sac")
	require.NoError(t, err)
	assert.Equal(t, row{"team-b", "sac", "DIJob", phase.Running, 1, 1}, rows([]status.Job{got})[0])
	assert.Equal(t, []phase.Workload{{Kind: "StatefulSet", Name: "sac-worker", Role: handoff.RoleWorker, Expected: 1, Pods: 1, Ready: 1}}, got.Workloads)

	for _, missing := range [][2]string{{"team-b", "pi"}, {"team-a", "leftover"}, {"research", "other"}} {
		_, err = status.Get(context.Background(), c, missing[0], missing[1])
		var notFound *status.NotFoundError
		require.True(t, errors.As(err, &notFound), "%s/%s: %v", missing[0], missing[1], err)
		assert.Contains(t, err.Error(), `job "`+missing[1]+`" not found in namespace "`+missing[0]+`"`)
	}
}

// TestListFails: an API error says what was being listed.
func TestListFails(t *testing.T) {
	c := lister{fake.NewClientBuilder().WithInterceptorFuncs(refuseLists()).Build()}
	_, err := status.List(context.Background(), c, "research")
	assert.ErrorContains(t, err, `listing Jobs in namespace "research": jobs.batch is forbidden`)
}

// interceptor refuses every list, as the API server refuses a user without
// the right to list Jobs.
func refuseLists() interceptor.Funcs {
	return interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "", errors.New(`User "alice" cannot list resource "jobs"`))
	}}
}

// TestSameNameJobsOfTwoKinds: a PyTorchJob and the TrainJob it moves to,
// which keeps its name, are two jobs, each with its own pods (one of them
// without the kind label, as pods were rendered before), and a bare name
// that is both asks which one is meant.
func TestSameNameJobsOfTwoKinds(t *testing.T) {
	master := job("team-c", "train", "train-master", handoff.RoleMaster, 1, 0)
	workers := job("team-c", "train", "train-worker", handoff.RoleWorker, 2, 0)
	node := job("team-c", "train", "train-node-0", "node", 4, 30)
	ofKind("PyTorchJob", master, workers)
	ofKind("TrainJob", node)
	// Rendered before pods carried their job's kind: it is its Job's.
	before := pod(workers, "Job", 1, true)
	before.Labels = handoff.RoleLabels("train", handoff.RoleWorker)
	objs := []client.Object{master, workers, node,
		pod(master, "Job", 0, true), pod(workers, "Job", 0, true), before,
		pod(node, "Job", 0, true),
	}
	for i := range objs {
		objs[i].SetResourceVersion("")
	}
	c := lister{fake.NewClientBuilder().WithObjects(objs...).Build()}

	all, err := status.List(context.Background(), c, "team-c")
	require.NoError(t, err)
	assert.Equal(t, []row{
		{"team-c", "train", "PyTorchJob", phase.Running, 3, 3},
		{"team-c", "train", "TrainJob", phase.Pending, 1, 4},
	}, rows(all))

	_, err = status.Get(context.Background(), c, "team-c", "train")
	var ambiguous *status.AmbiguousError
	require.True(t, errors.As(err, &ambiguous), "%v", err)
	assert.EqualError(t, err, `2 jobs are named "train" in namespace "team-c", of the kinds PyTorchJob, TrainJob: name one as pytorchjob/train or trainjob/train`)

	for ref, want := range map[string]row{
		"trainjob/train":   {"team-c", "train", "TrainJob", phase.Pending, 1, 4},
		"PyTorchJob/train": {"team-c", "train", "PyTorchJob", phase.Running, 3, 3},
	} {
		got, err := status.Get(context.Background(), c, "team-c", ref)
		require.NoError(t, err, ref)
		assert.Equal(t, want, rows([]status.Job{got})[0], ref)
	}
	_, err = status.Get(context.Background(), c, "team-c", "tfjob/train")
	var notFound *status.NotFoundError
	require.True(t, errors.As(err, &notFound), "%v", err)
	assert.ErrorContains(t, err, `job "tfjob/train" not found`)
}
