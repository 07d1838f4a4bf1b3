//go:build e2e

package kueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// plenty is a quota no test's job comes near.
var plenty = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("1000"),
	corev1.ResourceMemory: resource.MustParse("10Ti"),
	"nvidia.com/gpu":      resource.MustParse("1000"),
	corev1.ResourcePods:   resource.MustParse("1000"),
}

// TestKueueAdmitsEachJobAsOneWorkload renders jobs of every kind, version
// and launch mode for Kueue and applies them: Kueue must admit each as one
// Workload holding every pod of the job, launcher or master included, and
// every pod must then be placed. A job whose worker count changes at run
// time is admitted workload by workload, as its render warns.
func TestKueueAdmitsEachJobAsOneWorkload(t *testing.T) {
	for _, tt := range []struct {
		name, input string
		// config is more of trainfn's function config, under spec.
		config string
		// resized: the job's worker count changes at run time, and Kueue
		// admits each of its Jobs and StatefulSets on its own.
		resized bool
	}{
		{name: "mpijob-v1alpha1", input: "mpijob/testdata/v1alpha1/v1alpha1-launcher-command"},
		{name: "mpijob-v1alpha2", input: "mpijob/testdata/v1alpha2/v1alpha2-run-policy"},
		{name: "mpijob-v1", input: "mpijob/testdata/v1/training-operator-mpi-tensorflow-mnist"},
		{name: "mpijob-v2beta1", input: "mpijob/testdata/v2beta1/mpi-operator-pi"},
		{name: "mpijob-v2beta1-intel", input: "mpijob/testdata/v2beta1/mpi-operator-pi-intel"},
		{name: "mpijob-kubectl-exec", input: "mpijob/testdata/v2beta1/mpijob-kubectl-exec", config: "  mpi:\n    launchMode: KubectlExec\n"},
		{name: "mpijob-rsh", input: "mpijob/testdata/v2beta1/mpijob-rsh"},
		{name: "mpijob-launcher-only", input: "mpijob/testdata/v2beta1/launcher-only"},
		{name: "mpijob-launcher-as-worker", input: "mpijob/testdata/v2beta1/run-launcher-as-worker"},
		{name: "mpijob-elastic", input: "mpijob/testdata/v1/mpijob-elastic", resized: true},
		{name: "pytorchjob", input: "pytorchjob/testdata/v1/training-operator-pytorch-simple"},
		{name: "pytorchjob-workers-only", input: "pytorchjob/testdata/v1/pytorch-workers-only"},
		{name: "pytorchjob-elastic", input: "pytorchjob/testdata/v1/pytorch-elastic-with-master"},
		{name: "pytorchjob-elastic-scaled", input: "pytorchjob/testdata/v1/pytorch-elastic-scaled", resized: true},
		{name: "dijob", input: "dijob/testdata/v2alpha1/di-orchestrator-head-dijob-serial"},
		{name: "dijob-topologies", input: "dijob/testdata/v2alpha1/dijob-topologies"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			input := filepath.Join("..", "..", "render", filepath.FromSlash(tt.input), "input.yaml")
			out := render(t, input, tt.config)
			want := promised(t, out)
			if !tt.resized {
				require.Zero(t, want.labelled, "a job of a fixed size is queued as one pod group, not Job by Job")
			}
			ns := kube.Namespace(t)
			queue(t, ns, plenty)
			apply(t, ns, out)

			ctx := context.Background()
			var wls []cluster.Workload
			err := kube.Wait(ctx, "the job's Workloads to be admitted and its pods placed", time.Minute, func(ctx context.Context) error {
				var err error
				if wls, err = kube.Workloads(ctx, ns); err != nil {
					return err
				}
				if len(wls) != want.workloads() {
					return fmt.Errorf("%d Workloads, not %d: %v", len(wls), want.workloads(), wls)
				}
				var pods int64
				for _, wl := range wls {
					if !wl.Admitted {
						return fmt.Errorf("Workload %s is not admitted: %s", wl.Name, wl.Message)
					}
					if n, ok := want.groups[wl.Name]; ok && n != wl.Pods {
						return fmt.Errorf("Workload %s holds %d pods, its job runs %d", wl.Name, wl.Pods, n)
					}
					pods += wl.Pods
				}
				if pods != want.pods {
					return fmt.Errorf("the Workloads hold %d pods, the job runs %d: %v", pods, want.pods, wls)
				}
				placed, err := placedPods(ctx, ns)
				if err != nil {
					return err
				}
				if placed != want.pods {
					return fmt.Errorf("%d of the job's %d pods are placed", placed, want.pods)
				}
				return nil
			})
			require.NoError(t, err, "%s", describe(ns))
			t.Logf("Workloads: %v", wls)
		})
	}
}

// TestKueueHoldsAJobWholeBehindAnother submits two PyTorchJobs together
// behind a ClusterQueue with room for the pods of exactly one: the second
// waits whole, none of its pods placed, while the first runs; when the
// first is deleted its quota is released, and the second is admitted.
func TestKueueHoldsAJobWholeBehindAnother(t *testing.T) {
	t.Parallel()
	input := filepath.Join("..", "..", "render", "pytorchjob", "testdata", "v1", "training-operator-pytorch-simple", "input.yaml")
	ns := kube.Namespace(t)
	// A master and a worker: two pods.
	clusterQueue := queue(t, ns, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")})
	jobs := []string{"first", "second"}
	for _, job := range jobs {
		data, err := os.ReadFile(input)
		require.NoError(t, err)
		renamed := filepath.Join(t.TempDir(), job+".yaml")
		require.NoError(t, os.WriteFile(renamed, bytes.Replace(data, []byte("name: pytorch-simple\n"), []byte("name: "+job+"\n"), 1), 0o644))
		apply(t, ns, render(t, renamed, ""))
	}

	ctx := context.Background()
	var admitted, waiting string
	err := kube.Wait(ctx, "one job admitted and placed", time.Minute, func(ctx context.Context) error {
		admitted, waiting = "", ""
		wls, err := kube.Workloads(ctx, ns)
		if err != nil {
			return err
		}
		if len(wls) != len(jobs) {
			return fmt.Errorf("%d Workloads, not one per job: %v", len(wls), wls)
		}
		for _, wl := range wls {
			if wl.Admitted {
				admitted = wl.Name
			} else {
				waiting = wl.Name
			}
		}
		if admitted == "" || waiting == "" {
			return fmt.Errorf("not one job admitted and one waiting: %v", wls)
		}
		byJob, err := placedByJob(ctx, ns)
		if err != nil {
			return err
		}
		if byJob[jobOf(admitted)] != 2 {
			return fmt.Errorf("%s's pods are not both placed: %v", admitted, byJob)
		}
		return nil
	})
	require.NoError(t, err, "%s", describe(ns))

	// The waiting job stays whole: not one pod placed, for a while.
	first, second := jobOf(admitted), jobOf(waiting)
	for range 10 {
		byJob, err := placedByJob(ctx, ns)
		require.NoError(t, err)
		require.Zero(t, byJob[second], "%s has pods placed while %s holds the quota:\n%s", second, first, describe(ns))
		time.Sleep(500 * time.Millisecond)
	}

	// The first job ends, as kubectl delete ends it: its quota is
	// released and the second is admitted, whole.
	policy := metav1.DeletePropagationForeground
	require.NoError(t, kube.Client.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy},
		metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=" + first}))
	err = kube.Wait(ctx, "the second job admitted and placed", time.Minute, func(ctx context.Context) error {
		byJob, err := placedByJob(ctx, ns)
		if err != nil {
			return err
		}
		if byJob[second] != 2 {
			return fmt.Errorf("%d of %s's pods are placed", byJob[second], second)
		}
		if n, err := kube.ReservingWorkloads(ctx, clusterQueue); err != nil || n != 1 {
			return fmt.Errorf("ClusterQueue %s reserves quota for %d Workloads, not the second's alone (%v)", clusterQueue, n, err)
		}
		return nil
	})
	require.NoError(t, err, "%s", describe(ns))
}

// writeInput writes a manifest to a file of the test's own.
func writeInput(t *testing.T, manifest string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.yaml")
	require.NoError(t, os.WriteFile(path, []byte(manifest), 0o644))
	return path
}

// render runs trainfn render over an input with a function config that
// queues every job on the LocalQueue "jobs", spec adding to the config.
func render(t *testing.T, input, spec string) []byte {
	t.Helper()
	config := filepath.Join(t.TempDir(), "trainfn.yaml")
	require.NoError(t, os.WriteFile(config, []byte(cluster.KueueFunctionConfig("jobs", spec)), 0o644))
	return testtool.Render(t, trainfn, input, config)
}

// queue makes a ClusterQueue of the test's own with the quota given, and
// the LocalQueue "jobs" in the namespace for it; it returns the
// ClusterQueue's name.
func queue(t *testing.T, ns string, quota corev1.ResourceList) string {
	t.Helper()
	remove, err := kube.ClusterQueue(context.Background(), ns, quota, cluster.Flavor{})
	require.NoError(t, err)
	t.Cleanup(remove)
	apply(t, ns, []byte(cluster.LocalQueue("jobs", ns)))
	return ns
}

// apply applies a YAML stream into the namespace with kubectl, every
// object placed there, as kustomize's namespace field places it: the
// upstream manifests name namespaces of their own.
func apply(t *testing.T, ns string, stream []byte) {
	t.Helper()
	var placed bytes.Buffer
	for _, obj := range decode(t, stream) {
		obj.SetNamespace(ns)
		doc, err := yaml.Marshal(obj.Object)
		require.NoError(t, err)
		placed.WriteString("---\n")
		placed.Write(doc)
	}
	testtool.Apply(t, kubectl, kube.Kubeconfig, ns, placed.Bytes())
}

// decode reads a rendered stream into objects, as the GitOps tools do.
func decode(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		require.NoError(t, err)
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
}

// want is what an output promises Kueue admits: the pods of each pod
// group, a Workload each, by the group's name; the Workloads of the Jobs
// and StatefulSets labelled for Kueue themselves; and the pods in all.
type want struct {
	groups   map[string]int64
	labelled int
	pods     int64
}

func (w want) workloads() int { return len(w.groups) + w.labelled }

// promised reads what an output promises.
func promised(t *testing.T, stream []byte) want {
	t.Helper()
	w := want{groups: map[string]int64{}}
	for _, obj := range decode(t, stream) {
		var meta, podMeta metav1.ObjectMeta
		var pods int64
		switch obj.GetKind() {
		case "Job":
			var job batchv1.Job
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &job))
			pods, meta, podMeta = int64(ptrOr(job.Spec.Parallelism, 1)), job.ObjectMeta, job.Spec.Template.ObjectMeta
		case "StatefulSet":
			var sts appsv1.StatefulSet
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &sts))
			pods, meta, podMeta = int64(ptrOr(sts.Spec.Replicas, 1)), sts.ObjectMeta, sts.Spec.Template.ObjectMeta
		default:
			continue
		}
		w.pods += pods
		switch group := podMeta.Labels["kueue.x-k8s.io/pod-group-name"]; {
		case meta.Labels["kueue.x-k8s.io/queue-name"] != "":
			w.labelled++
		case group != "":
			w.groups[group] += pods
		default:
			t.Fatalf("%s %s is queued neither as a workload nor as a pod group", obj.GetKind(), meta.Name)
		}
	}
	return w
}

func ptrOr(p *int32, or int32) int32 {
	if p == nil {
		return or
	}
	return *p
}

// placedPods is how many pods of the namespace are bound to a node.
func placedPods(ctx context.Context, ns string) (int64, error) {
	byJob, err := placedByJob(ctx, ns)
	var n int64
	for _, c := range byJob {
		n += int64(c)
	}
	return n, err
}

// placedByJob is how many pods of each job of the namespace are bound to
// a node, by the job's name.
func placedByJob(ctx context.Context, ns string) (map[string]int, error) {
	pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	byJob := map[string]int{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			byJob[p.Labels["training.kubeflow.org/job-name"]]++
		}
	}
	return byJob, nil
}

// jobOf is the job a pod group's Workload admits: Kueue names it after
// the group, the job's name, with a suffix of its own.
func jobOf(workload string) string {
	for _, job := range []string{"first", "second"} {
		if strings.HasPrefix(workload, job) {
			return job
		}
	}
	return workload
}

// describe is every pod of the namespace with its phase, node and
// scheduling gates, and the namespace's Workloads: what a failing test
// shows.
func describe(ns string) string {
	ctx := context.Background()
	var b strings.Builder
	pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		var gates []string
		for _, g := range p.Spec.SchedulingGates {
			gates = append(gates, g.Name)
		}
		fmt.Fprintf(&b, "pod %s %s node=%q gates=%v\n", p.Name, p.Status.Phase, p.Spec.NodeName, gates)
	}
	wls, err := kube.Workloads(ctx, ns)
	if err != nil {
		return b.String() + err.Error()
	}
	for _, wl := range wls {
		fmt.Fprintf(&b, "workload %+v\n", wl)
	}
	events, err := kube.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning || e.Source.Component == "" {
				fmt.Fprintf(&b, "event %s %s: %s\n", e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	}
	return b.String()
}
