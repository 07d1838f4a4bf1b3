package allocation

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// The fixtures are a cluster of 64-core nodes and preemptible DIJobs of two
// 32-core workers, so that two workers fill a node.
const testNamespace = "ns"

func readyNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// startedSet is a started preemptible DIJob's StatefulSet whose allocation
// records nodes, one worker each.
func startedSet(job string, nodes ...string) *appsv1.StatefulSet {
	replicas := int32(len(nodes))
	selector := handoff.RoleLabels(job, handoff.RoleWorker)
	labels := handoff.RoleLabels(job, handoff.RoleWorker)
	labels[handoff.KindLabel] = handoff.DIJobKind
	count := fmt.Sprint(len(nodes))
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace, Name: handoff.WorkersName(job), Labels: labels,
			Annotations: map[string]string{
				handoff.ElasticWorkers: count + ":" + count,
				handoff.Workers:        count,
				handoff.ScaledFrom:     count,
				handoff.Allocation:     string(write.MustJSON(nodes)),
			},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				// The render labels the pods with their job's kind too.
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "worker", Image: "registry.example/di:1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")}},
				}}},
			},
		},
	}
}

// gatedWorker is worker i of s as the StatefulSet makes it: at the
// allocation gate.
func gatedWorker(s *appsv1.StatefulSet, i int) *corev1.Pod {
	labels := map[string]string{appsv1.PodIndexLabel: fmt.Sprint(i)}
	for k, v := range s.Spec.Template.Labels {
		labels[k] = v
	}
	spec := *s.Spec.Template.Spec.DeepCopy()
	spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: handoff.AllocationGate}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: fmt.Sprintf("%s-%d", s.Name, i), Labels: labels},
		Spec:       spec,
	}
}

// pinnedWorker is worker i of s with its gate lifted and pinned to node,
// not bound yet.
func pinnedWorker(s *appsv1.StatefulSet, i int, node string) *corev1.Pod {
	p := gatedWorker(s, i)
	p.Spec.SchedulingGates = nil
	pin := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{pin}}},
	}}}
	p.Status.Phase = corev1.PodPending
	return p
}

// boundWorker is worker i of s pinned to node and bound there.
func boundWorker(s *appsv1.StatefulSet, i int, node string) *corev1.Pod {
	p := pinnedWorker(s, i, node)
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return p
}

// fieldFiltering answers lists as the API server does: the fake client
// filters by exact field matches only, and the allocator asks for pods
// whose fields are not empty.
type fieldFiltering struct{ client.Client }

func (f fieldFiltering) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	selector := o.FieldSelector
	o.FieldSelector, o.Limit, o.Continue = nil, 0, ""
	if err := f.Client.List(ctx, list, o); err != nil || selector == nil {
		return err
	}
	pods, ok := list.(*corev1.PodList)
	if !ok {
		return fmt.Errorf("a field selector on %T", list)
	}
	var kept []corev1.Pod
	for _, p := range pods.Items {
		if selector.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName, "status.phase": string(p.Status.Phase)}) {
			kept = append(kept, p)
		}
	}
	pods.Items = kept
	return nil
}

// allocating is an allocator, and the gates it pins pods for, over a
// cluster that holds objs, read through the cache and live alike.
func allocating(objs ...client.Object) (*Allocation, *gates.Pinner, client.Client) {
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	writer := write.Writer{Client: c, Writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "writes"}, []string{"kind"})}
	a := &Allocation{
		Client: c, Writer: writer, Live: fieldFiltering{c}, Policy: allocator.MarginalThroughput{},
		Period: time.Second, Recorder: events.NewFakeRecorder(100),
		Scales: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scales"}, []string{"reason"}), Now: time.Now,
	}
	return a, &gates.Pinner{Writer: writer, Live: c, Allocator: a, Now: time.Now}, c
}

// recordedAllocation is the allocation the API holds for s.
func recordedAllocation(t *testing.T, c client.Client, s *appsv1.StatefulSet) allocator.NodeList {
	t.Helper()
	var live appsv1.StatefulSet
	require.NoError(t, c.Get(context.Background(), client.ObjectKeyFromObject(s), &live))
	list, err := observed.Allocation(&live)
	require.NoError(t, err)
	return list
}

// A reconcile that reads a stale copy of a worker, still gated, when the
// worker is bound already: its reservation went when the pod was counted
// bound, and placing it anew would record a node it does not run on, here
// the only one with room left.
func TestLiftingAStaleGateRecordsTheNodeTheWorkerIsBoundTo(t *testing.T) {
	a, b := startedSet("a", "n0", "n1"), startedSet("b", "n0", "n1")
	objs := []client.Object{readyNode("n0"), readyNode("n1"), readyNode("n2"), a, b}
	for i, node := range []string{"n0", "n1"} {
		objs = append(objs, boundWorker(a, i, node), boundWorker(b, i, node))
	}
	_, pinner, c := allocating(objs...)
	ctx := context.Background()
	stale := gatedWorker(a, 1)
	stale.ResourceVersion = "1"
	j := &observed.Job{Namespace: testNamespace, Name: "a", Pods: []corev1.Pod{*boundWorker(a, 0, "n0"), *stale}}
	// The pod's own patch fails on its stale resourceVersion; what is
	// checked is the allocation recorded before it.
	_ = pinner.Lift(ctx, j, a.DeepCopy())
	require.Equal(t, allocator.NodeList{"n0", "n1"}, recordedAllocation(t, c, a))
}

// A period that finds one job's worker pinned to a node and another job
// recorded on the same node's room without a pod there: the pinned worker
// keeps its node, and the unpinned one is placed anew, though it comes
// first in the policy's order.
func TestOptimizeKeepsAPinnedWorkersNode(t *testing.T) {
	a, b := startedSet("a", "n0", "n0"), startedSet("b", "n0", "n1")
	alloc, _, c := allocating(readyNode("n0"), readyNode("n1"), a, b,
		gatedWorker(a, 0), gatedWorker(a, 1), pinnedWorker(b, 0, "n0"), boundWorker(b, 1, "n1"))
	require.NoError(t, alloc.Optimize(context.Background()))
	require.Equal(t, allocator.NodeList{"n0", "n1"}, recordedAllocation(t, c, b), "b-worker-0 is pinned to n0, b-worker-1 bound to n1")
	require.Equal(t, allocator.NodeList{"n0", "n1"}, recordedAllocation(t, c, a))
}

// A period between a gated pod's placement and its pin, which the cache
// does not show yet: the node handed out is final, though another job,
// served first, was recorded on the same room (its reservations were
// dropped before its count was raised).
func TestOptimizeKeepsTheNodeHandedOutForAGatedPod(t *testing.T) {
	a, b := startedSet("a", "n0", "n0"), startedSet("b", "")
	alloc, _, c := allocating(readyNode("n0"), readyNode("n1"), a, b, gatedWorker(a, 0), gatedWorker(a, 1), gatedWorker(b, 0))
	ctx := context.Background()
	require.Equal(t, map[int]string{0: "n0"}, alloc.PlaceGated(ctx, b, []int{0}))
	require.NoError(t, alloc.Optimize(ctx))
	require.Equal(t, allocator.NodeList{"n0"}, recordedAllocation(t, c, b), "b-worker-0 is being pinned to n0")
	require.Equal(t, allocator.NodeList{"n0", "n1"}, recordedAllocation(t, c, a))
}
