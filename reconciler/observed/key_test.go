package observed_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
)

// meta is a rendered object's: of the job train, of kind (none when ""),
// in role.
func meta(name, kind, role string) metav1.ObjectMeta {
	l := handoff.RoleLabels("train", role)
	if kind != "" {
		l[handoff.KindLabel] = kind
	}
	return metav1.ObjectMeta{Namespace: "team", Name: name, Labels: l}
}

// sameName is a namespace holding a PyTorchJob and the TrainJob it moves
// to, both named train (Trainer's migration guide keeps the name), and
// objects of a job named train labelled by hand, with no kind. A pod of
// the PyTorchJob's master was rendered before pods carried their job's
// kind.
func sameName() client.Client {
	master := meta("train-master", handoff.PyTorchJobKind, handoff.RoleMaster)
	master.UID = "master-uid"
	before := meta("train-master-before", "", handoff.RoleMaster)
	before.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "train-master", UID: master.UID, Controller: ptr.To(true)}}
	return fake.NewClientBuilder().WithObjects(
		&batchv1.Job{ObjectMeta: master},
		&corev1.Pod{ObjectMeta: before},
		&batchv1.Job{ObjectMeta: meta("train-worker", handoff.PyTorchJobKind, handoff.RoleWorker)},
		&corev1.Pod{ObjectMeta: meta("train-master-0", handoff.PyTorchJobKind, handoff.RoleMaster)},
		&batchv1.Job{ObjectMeta: meta("train-node-0", "TrainJob", "node")},
		&corev1.Pod{ObjectMeta: meta("train-node-0-0", "TrainJob", "node")},
		&appsv1.StatefulSet{ObjectMeta: meta("train-by-hand", "", handoff.RoleWorker)},
		&corev1.ConfigMap{ObjectMeta: meta(handoff.ConfigMapName("train"), "", "")},
	).Build()
}

func names[T client.Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

// TestJobsOfTwoKindsShareAName: each kind's job holds its own workloads
// and pods only, so that one's end cannot stop the other's workers.
func TestJobsOfTwoKindsShareAName(t *testing.T) {
	c := sameName()
	for _, tc := range []struct {
		kind             string
		jobs, sets, pods []string
	}{
		{kind: handoff.PyTorchJobKind, jobs: []string{"train-master", "train-worker"}, pods: []string{"train-master-0", "train-master-before"}},
		{kind: "TrainJob", jobs: []string{"train-node-0"}, pods: []string{"train-node-0-0"}},
		{kind: "", sets: []string{"train-by-hand"}},
	} {
		j, err := observed.Load(context.Background(), c, observed.Key{Namespace: "team", Kind: tc.kind, Name: "train"})
		require.NoError(t, err)
		var jobs []*batchv1.Job
		for i := range j.Jobs {
			jobs = append(jobs, &j.Jobs[i])
		}
		var sets []*appsv1.StatefulSet
		for i := range j.StatefulSets {
			sets = append(sets, &j.StatefulSets[i])
		}
		var pods []*corev1.Pod
		for i := range j.Pods {
			pods = append(pods, &j.Pods[i])
		}
		assert.ElementsMatch(t, tc.jobs, names(jobs), "%q's Jobs", tc.kind)
		assert.ElementsMatch(t, tc.sets, names(sets), "%q's StatefulSets", tc.kind)
		assert.ElementsMatch(t, tc.pods, names(pods), "%q's pods", tc.kind)
	}
}

// TestKeysOf: a workload or a pod is its own kind's job's; a ConfigMap,
// or a pod, that names no kind, each job's of its name.
func TestKeysOf(t *testing.T) {
	c := sameName()
	key := func(kind string) observed.Key { return observed.Key{Namespace: "team", Kind: kind, Name: "train"} }
	for _, tc := range []struct {
		obj  client.Object
		want []observed.Key
	}{
		{&corev1.Pod{ObjectMeta: meta("train-node-0-0", "TrainJob", "node")}, []observed.Key{key("TrainJob")}},
		{&batchv1.Job{ObjectMeta: meta("train-master", handoff.PyTorchJobKind, handoff.RoleMaster)}, []observed.Key{key(handoff.PyTorchJobKind)}},
		{&corev1.ConfigMap{ObjectMeta: meta(handoff.ConfigMapName("train"), "", "")}, []observed.Key{key(handoff.PyTorchJobKind), key("TrainJob"), key("")}},
		{&corev1.Pod{ObjectMeta: meta("train-master-before", "", handoff.RoleMaster)}, []observed.Key{key(handoff.PyTorchJobKind), key("TrainJob"), key("")}},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "unlabelled"}}, nil},
	} {
		got, err := observed.KeysOf(context.Background(), c, tc.obj)
		require.NoError(t, err)
		assert.ElementsMatch(t, tc.want, got, "%T %s", tc.obj, tc.obj.GetName())
	}
}
