// Package oracle holds Kubeflow Trainer v2.3.0 up as the oracle of trainfn's
// TrainJob render: for every case, Trainer's own runtime framework (its
// plugins, driven with a fake client as its unit tests drive them) builds
// the JobSet of the TrainJob and its runtime, and each of its replicated
// jobs' pod templates is compared with the Jobs trainfn renders from the
// same documents. It is a module of its own: nothing of Trainer is linked
// into trainfn, nor anything of trainfn into this test, which runs the
// trainfn binary as users do.
package oracle

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/runtime/core"
	testingutil "github.com/kubeflow/trainer/v2/pkg/util/testing"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"
)

var trainfn string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "trainer-oracle-")
	if err != nil {
		panic(err)
	}
	trainfn = filepath.Join(dir, "trainfn")
	build := exec.Command("go", "build", "-o", trainfn, "./cmd/trainfn")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// cases are the golden cases of trainfn's TrainJob render, and this
// module's own: each input holds one TrainJob and its runtime.
func cases(t *testing.T) []string {
	var out []string
	for _, pattern := range []string{"../../render/trainjob/testdata/v1alpha1/*/input.yaml", "testdata/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			// Error cases render nothing; Trainer refuses what trainfn
			// renders beyond it (MPICH, Intel MPI), or has no such thing
			// (trainfn's launch modes other than SSH).
			if !strings.Contains(f, "error-") && !strings.Contains(f, "beyond-trainer-") {
				out = append(out, f)
			}
		}
	}
	return out
}

func TestTrainerAgrees(t *testing.T) {
	files := cases(t)
	if len(files) < 10 {
		t.Fatalf("only %d cases", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		if name == "input" {
			name = filepath.Base(filepath.Dir(file))
		}
		t.Run(name, func(t *testing.T) {
			job, rt := read(t, file)
			want := trainerJobSet(t, job, rt)
			got := trainfnJobs(t, file)
			for _, d := range compare(job.Name, want, got) {
				t.Error(d)
			}
		})
	}
}

// read splits a case into its TrainJob and its runtime, with the defaults
// the API server fills in from Trainer's and JobSet's CRDs, which Go
// leaves to it.
func read(t *testing.T, file string) (*trainer.TrainJob, *trainer.ClusterTrainingRuntime) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var job *trainer.TrainJob
	var rt *trainer.ClusterTrainingRuntime
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "TrainJob":
			job = &trainer.TrainJob{}
			if err := yaml.UnmarshalStrict([]byte(doc), job); err != nil {
				t.Fatal(err)
			}
		case "ClusterTrainingRuntime", "TrainingRuntime":
			rt = &trainer.ClusterTrainingRuntime{}
			if err := yaml.Unmarshal([]byte(doc), rt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if job == nil || rt == nil {
		t.Fatalf("%s holds no TrainJob and runtime", file)
	}
	// Resolved as a cluster-scoped runtime: how a runtime is found is
	// trainfn's own test's; what it expands to is this one's.
	rt.Namespace = ""
	group, kind := "trainer.kubeflow.org", "ClusterTrainingRuntime"
	job.Spec.RuntimeRef.APIGroup, job.Spec.RuntimeRef.Kind = &group, &kind
	if job.Namespace == "" {
		job.Namespace = "default"
	}
	if p := rt.Spec.MLPolicy; p != nil && p.MPI != nil {
		if p.MPI.NumProcPerNode == nil {
			p.MPI.NumProcPerNode = new(int32(1))
		}
		if p.MPI.MPIImplementation == nil || *p.MPI.MPIImplementation == "" {
			p.MPI.MPIImplementation = new(trainer.MPIImplementationOpenMPI)
		}
		if p.MPI.SSHAuthMountPath == nil {
			p.MPI.SSHAuthMountPath = new("/root/.ssh")
		}
		if p.MPI.RunLauncherAsNode == nil {
			p.MPI.RunLauncherAsNode = new(false)
		}
	}
	if p := rt.Spec.PodGroupPolicy; p != nil && p.Coscheduling != nil && p.Coscheduling.ScheduleTimeoutSeconds == nil {
		p.Coscheduling.ScheduleTimeoutSeconds = new(int32(60))
	}
	for i := range rt.Spec.Template.Spec.ReplicatedJobs {
		r := &rt.Spec.Template.Spec.ReplicatedJobs[i]
		if r.Replicas == 0 {
			r.Replicas = 1
		}
		if r.GroupName == "" {
			r.GroupName = "default"
		}
	}
	return job, rt
}

// trainerJobSet is the JobSet Trainer builds, and its other objects.
func trainerJobSet(t *testing.T, job *trainer.TrainJob, rt *trainer.ClusterTrainingRuntime) built {
	ctx := context.Background()
	b := testingutil.NewClientBuilder().WithObjects(rt)
	c := b.Build()
	if _, err := core.NewTrainingRuntime(ctx, c, testingutil.AsIndex(b), nil); err != nil {
		t.Fatal(err)
	}
	crt, err := core.NewClusterTrainingRuntime(ctx, c, testingutil.AsIndex(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := crt.NewObjects(ctx, job.DeepCopy())
	if err != nil {
		t.Fatalf("Trainer refuses the case: %v", err)
	}
	typed, err := testingutil.ToObject(c.Scheme(), objs...)
	if err != nil {
		t.Fatal(err)
	}
	out := built{jobs: map[string]*batchv1.Job{}, configMaps: map[string]*corev1.ConfigMap{}}
	for _, o := range typed {
		switch o := o.(type) {
		case *jobsetv1alpha2.JobSet:
			for _, r := range o.Spec.ReplicatedJobs {
				for idx := range max(r.Replicas, 1) {
					out.jobs[fmt.Sprintf("%s-%s-%d", job.Name, r.Name, idx)] = &batchv1.Job{ObjectMeta: r.Template.ObjectMeta, Spec: r.Template.Spec}
				}
			}
		case *corev1.ConfigMap:
			out.configMaps[o.Name] = o
		}
	}
	return out
}

type built struct {
	jobs       map[string]*batchv1.Job
	configMaps map[string]*corev1.ConfigMap
}

// trainfnJobs are trainfn's Jobs and ConfigMaps of a case.
func trainfnJobs(t *testing.T, file string) built {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(trainfn, "render", file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("trainfn render: %v\n%s", err, stderr.String())
	}
	out := built{jobs: map[string]*batchv1.Job{}, configMaps: map[string]*corev1.ConfigMap{}}
	for _, doc := range strings.Split(stdout.String(), "\n---\n") {
		// The separator's newline ends the document's last line.
		doc += "\n"
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &j); err != nil {
				t.Fatal(err)
			}
			out.jobs[j.Name] = &j
		case "ConfigMap":
			var c corev1.ConfigMap
			if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
				t.Fatal(err)
			}
			out.configMaps[c.Name] = &c
		}
	}
	return out
}

// compare lists what trainfn renders otherwise than Trainer builds, but
// for the differences trainfn makes on purpose (deliberate, below).
func compare(job string, want, got built) []string {
	var diffs []string
	for _, name := range sortedKeys(want.jobs) {
		w, g := want.jobs[name], got.jobs[name]
		if g == nil {
			diffs = append(diffs, "trainfn renders no Job "+name)
			continue
		}
		if d := cmp(name+" parallelism", deref(w.Spec.Parallelism), deref(g.Spec.Parallelism)); d != "" {
			diffs = append(diffs, d)
		}
		for k, v := range w.Spec.Template.Labels {
			if g.Spec.Template.Labels[k] != v {
				diffs = append(diffs, fmt.Sprintf("%s: pod label %s is %q, Trainer's %q", name, k, g.Spec.Template.Labels[k], v))
			}
		}
		for k, v := range w.Labels {
			if g.Labels[k] != v {
				diffs = append(diffs, fmt.Sprintf("%s: Job label %s is %q, Trainer's %q", name, k, g.Labels[k], v))
			}
		}
		ws, gs := w.Spec.Template.Spec, g.Spec.Template.Spec
		if d := cmp(name+" volumes", sortedJSON(ws.Volumes, volumeName), sortedJSON(deliberateVolumes(gs.Volumes, ws.Volumes), volumeName)); d != "" {
			diffs = append(diffs, d)
		}
		for _, pair := range [][2][]corev1.Container{{ws.InitContainers, gs.InitContainers}, {ws.Containers, gs.Containers}} {
			for _, wc := range pair[0] {
				i := slices.IndexFunc(pair[1], func(c corev1.Container) bool { return c.Name == wc.Name })
				if i < 0 {
					diffs = append(diffs, fmt.Sprintf("%s: no container %s", name, wc.Name))
					continue
				}
				diffs = append(diffs, compareContainer(name+" container "+wc.Name, wc, pair[1][i], deliberateEnv(job, name, w, g))...)
			}
		}
	}
	for _, name := range sortedKeys(want.configMaps) {
		if g := got.configMaps[name]; g == nil {
			diffs = append(diffs, "trainfn renders no ConfigMap "+name)
		} else if d := cmp(name+" data", jsonOf(want.configMaps[name].Data), jsonOf(g.Data)); d != "" {
			diffs = append(diffs, d)
		}
	}
	for _, name := range sortedKeys(got.jobs) {
		if want.jobs[name] == nil {
			diffs = append(diffs, "trainfn renders a Job Trainer's JobSet has not: "+name)
		}
	}
	return diffs
}

func compareContainer(at string, w, g corev1.Container, extraEnv map[string]bool) []string {
	var diffs []string
	for _, d := range []string{
		cmp(at+" image", w.Image, g.Image),
		cmp(at+" command", jsonOf(w.Command), jsonOf(g.Command)),
		cmp(at+" args", jsonOf(w.Args), jsonOf(g.Args)),
		cmp(at+" ports", sortedJSON(w.Ports, func(p corev1.ContainerPort) string { return fmt.Sprint(p.ContainerPort) }),
			sortedJSON(g.Ports, func(p corev1.ContainerPort) string { return fmt.Sprint(p.ContainerPort) })),
		cmp(at+" volumeMounts", sortedJSON(w.VolumeMounts, func(m corev1.VolumeMount) string { return m.Name }),
			sortedJSON(g.VolumeMounts, func(m corev1.VolumeMount) string { return m.Name })),
		cmp(at+" envFrom", jsonOf(w.EnvFrom), jsonOf(g.EnvFrom)),
		cmp(at+" resources", jsonOf(w.Resources), jsonOf(g.Resources)),
	} {
		if d != "" {
			diffs = append(diffs, d)
		}
	}
	// Plugins run in Go's map order in Trainer, so the order of
	// variables is not Trainer's to keep: they are compared by name.
	env := slices.DeleteFunc(slices.Clone(g.Env), func(e corev1.EnvVar) bool {
		return extraEnv[e.Name] && !slices.ContainsFunc(w.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name })
	})
	if d := cmp(at+" env", sortedJSON(w.Env, envName), sortedJSON(env, envName)); d != "" {
		diffs = append(diffs, d)
	}
	return diffs
}

// deliberateEnv are the variables trainfn sets where Trainer does not, on
// purpose: trainer.env on every MPI node, so that it reaches every rank
// (Trainer sets it on the launcher only).
func deliberateEnv(job, name string, w, g *batchv1.Job) map[string]bool {
	out := map[string]bool{}
	if strings.HasPrefix(name, job+"-node-") && g.Labels["training.kubeflow.org/job-role"] == "worker" {
		for _, c := range g.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				out[e.Name] = true
			}
		}
	}
	return out
}

// deliberateVolumes drops the claims of volumeClaimPolicies, which JobSet,
// not Trainer, adds to the pods.
func deliberateVolumes(got, want []corev1.Volume) []corev1.Volume {
	return slices.DeleteFunc(slices.Clone(got), func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil && !slices.ContainsFunc(want, func(w corev1.Volume) bool { return w.Name == v.Name })
	})
}

func volumeName(v corev1.Volume) string { return v.Name }
func envName(e corev1.EnvVar) string    { return e.Name }

func sortedJSON[T any](items []T, key func(T) string) string {
	if len(items) == 0 {
		return "none"
	}
	s := slices.Clone(items)
	sort.SliceStable(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
	return jsonOf(s)
}

func jsonOf(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func cmp(what, want, got any) string {
	if fmt.Sprint(want) == fmt.Sprint(got) {
		return ""
	}
	return fmt.Sprintf("%s differs:\nTrainer: %v\ntrainfn: %v", what, want, got)
}

func deref(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
