//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/status/phase"
	"github.com/trainfn/trainfn/test/cluster"
)

// statusJobs are the jobs TestStatus follows: mnist, to run, restart and
// succeed; broken, whose workers may not fail even once; held, suspended;
// rl, a DIJob of two tasks.
const statusJobs = `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist
spec:
  pytorchReplicaSpecs:
    Master: &replica
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/mnist:1
    Worker:
      <<: *replica
      replicas: 2
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: broken
spec:
  runPolicy:
    backoffLimit: 0
  pytorchReplicaSpecs:
    Master: &replica
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/mnist:1
    Worker:
      <<: *replica
      replicas: 2
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: held
spec:
  runPolicy:
    suspend: true
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/mnist:1
---
apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: rl
spec:
  tasks:
  - name: learner
    type: learner
    template:
      spec:
        containers:
        - name: di-container
          image: opendilab/ding:v0.4
          command: [ditask, --labels, learner]
  - name: collector
    type: collector
    replicas: 2
    template:
      spec:
        containers:
        - name: di-container
          image: opendilab/ding:v0.4
          command: [ditask, --labels, collector]
`

// TestStatus renders jobs with the trainfn binary, applies them, and
// follows them with `trainfn status` as a user would, no reconciler
// running: the phase comes from the live objects alone. kwok runs the pods;
// the test reports what a kubelet would (a restart, an exit) through the
// pods' status.
func TestStatus(t *testing.T) {
	t.Parallel()
	trainfn := buildTrainfn(t)
	ns := kube.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, serverSideApply(ctx, ns, renderWith(t, trainfn, statusJobs)))
	status := func(args ...string) statusRun {
		return runStatus(t, trainfn, append([]string{"status", "--kubeconfig", kube.Kubeconfig}, args...)...)
	}

	// PHASE, READY and RESTARTS of each job, as the table shows them.
	awaitStatus(t, status, ns, map[string]string{
		"mnist":  "PyTorchJob Running 3/3 0",
		"broken": "PyTorchJob Running 3/3 0",
		"held":   "PyTorchJob Pending 0/2 0",
		"rl":     "DIJob Running 3/3 0",
	})
	table := status("-n", ns)
	require.Equal(t, 0, table.code, table.stderr)
	assert.Equal(t, []string{"NAME", "KIND", "PHASE", "READY", "RESTARTS", "AGE"}, strings.Fields(strings.Split(table.stdout, "\n")[0]))
	assert.Equal(t, []string{"broken", "held", "mnist", "rl"}, tableColumn(table.stdout, 0), "in the order of their names")

	all := status("-A")
	require.Equal(t, 0, all.code, all.stderr)
	assert.True(t, strings.HasPrefix(all.stdout, "NAMESPACE "), all.stdout)
	assert.True(t, hasRow(all.stdout, ns, "mnist", "PyTorchJob", string(phase.Running)), "-A lists the job with its namespace:\n%s", all.stdout)

	// A job's document is shaped like its operator's object.
	doc := status("mnist", "-n", ns, "-o", "json")
	require.Equal(t, 0, doc.code, doc.stderr)
	mnist := decodeDoc(t, doc.stdout)
	assert.Equal(t, "kubeflow.org/v1", mnist.GetAPIVersion())
	assert.Equal(t, "PyTorchJob", mnist.GetKind())
	assert.Equal(t, ns, mnist.GetNamespace())
	assert.Equal(t, string(phase.Running), nested(mnist, "status", "phase"))
	assert.Equal(t, phase.ReasonAllReady, nested(mnist, "status", "reason"))
	workloads, _, _ := unstructured.NestedSlice(mnist.Object, "status", "workloads")
	assert.Len(t, workloads, 3, "the master's Job and a Job per worker")
	assert.WithinDuration(t, time.Now(), mnist.GetCreationTimestamp().Time, 5*time.Minute)

	doc = status("-n", ns, "-o", "yaml")
	require.Equal(t, 0, doc.code, doc.stderr)
	list := decodeDoc(t, doc.stdout)
	assert.Equal(t, "List", list.GetKind())
	items, _, _ := unstructured.NestedSlice(list.Object, "items")
	require.Len(t, items, 4)
	rl := unstructured.Unstructured{Object: items[3].(map[string]any)}
	assert.Equal(t, "DIJob", rl.GetKind())
	workloads, _, _ = unstructured.NestedSlice(rl.Object, "status", "workloads")
	assert.Len(t, workloads, 2, "a Job per task")
	held := unstructured.Unstructured{Object: items[1].(map[string]any)}
	assert.Equal(t, string(phase.Pending), nested(&held, "status", "phase"))
	assert.Equal(t, phase.ReasonSuspended, nested(&held, "status", "reason"))

	// Shell completion offers the jobs' names, from the cluster.
	completed := runStatus(t, trainfn, "__complete", "status", "--kubeconfig", kube.Kubeconfig, "-n", ns, "")
	require.Equal(t, 0, completed.code, completed.stderr)
	assert.Equal(t, []string{"broken", "held", "mnist", "rl", ":4"}, strings.Fields(completed.stdout))

	// -o name writes what status and wait take back.
	names := status("-n", ns, "-o", "name")
	require.Equal(t, 0, names.code, names.stderr)
	assert.Equal(t, "pytorchjob.kubeflow.org/broken\npytorchjob.kubeflow.org/held\npytorchjob.kubeflow.org/mnist\ndijob.diengine.opendilab.org/rl\n", names.stdout)
	phases := status("pytorchjob.kubeflow.org/mnist", "-n", ns, "-o", "jsonpath={.status.phase}")
	assert.Equal(t, statusRun{stdout: string(phase.Running)}, phases)

	// A worker's container restarts: not ready a while, then ready again.
	worker := "batch.kubernetes.io/job-name=mnist-worker-0"
	updatePodStatus(t, ns, worker, func(p *corev1.Pod) { restartContainer(p) })
	awaitStatus(t, status, ns, map[string]string{"mnist": "PyTorchJob Restarting 2/3 1"})
	updatePodStatus(t, ns, worker, func(p *corev1.Pod) { setPodReady(p, true) })
	awaitStatus(t, status, ns, map[string]string{"mnist": "PyTorchJob Running 3/3 1"})

	// The master exits with 0, which ends mnist; a worker of broken exits
	// with 1, which its Job does not retry.
	updatePodStatus(t, ns, "batch.kubernetes.io/job-name=mnist-master", func(p *corev1.Pod) { exitPod(p, 0) })
	updatePodStatus(t, ns, "batch.kubernetes.io/job-name=broken-worker-1", func(p *corev1.Pod) { exitPod(p, 1) })
	awaitStatus(t, status, ns, map[string]string{
		"mnist":  "PyTorchJob Succeeded 0/0 1",
		"broken": "PyTorchJob Failed 0/0 1",
		"held":   "PyTorchJob Pending 0/2 0",
	})
	doc = status("broken", "-n", ns, "-o", "json")
	require.Equal(t, 0, doc.code, doc.stderr)
	broken := decodeDoc(t, doc.stdout)
	assert.Equal(t, phase.ReasonJobFailed, nested(broken, "status", "reason"))
	assert.Contains(t, nested(broken, "status", "message"), "Job broken-worker-1 failed: BackoffLimitExceeded")
}

// decodeDoc reads a document `trainfn status` wrote, in JSON or YAML.
func decodeDoc(t *testing.T, data string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(data), &obj), data)
	return &unstructured.Unstructured{Object: obj}
}

// nested is a string field of a document, "" when it has none.
func nested(obj *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj.Object, fields...)
	return s
}

// TestStatusErrors: what a user gets wrong is said on standard error, in a
// line, with a non-zero exit status and nothing on standard output.
func TestStatusErrors(t *testing.T) {
	t.Parallel()
	trainfn := buildTrainfn(t)
	ns := kube.Namespace(t)
	status := func(args ...string) statusRun { return runStatus(t, trainfn, append([]string{"status"}, args...)...) }

	for name, tc := range map[string]struct {
		args   []string
		code   int
		stderr string
	}{
		"no such job": {[]string{"--kubeconfig", kube.Kubeconfig, "-n", ns, "nosuch"}, 1,
			fmt.Sprintf(`trainfn: job "nosuch" not found in namespace %q`, ns)},
		"no such kubeconfig": {[]string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1,
			"trainfn: reading the kubeconfig"},
		"a name across namespaces": {[]string{"--kubeconfig", kube.Kubeconfig, "-A", "mnist"}, 2,
			"trainfn: a job is found by name in one namespace"},
		"an unknown format": {[]string{"--kubeconfig", kube.Kubeconfig, "-o", "table"}, 2,
			`trainfn: unknown output format "table"`},
		"a bad selector": {[]string{"--kubeconfig", kube.Kubeconfig, "-l", "team in (a"}, 2,
			`trainfn: -l "team in (a"`},
		"an unknown context": {[]string{"--kubeconfig", kube.Kubeconfig, "--context", "nosuch"}, 1,
			`trainfn: reading the kubeconfig`},
	} {
		t.Run(name, func(t *testing.T) {
			r := status(tc.args...)
			assert.Equal(t, tc.code, r.code, r.stderr)
			assert.Empty(t, r.stdout)
			assert.True(t, strings.HasPrefix(r.stderr, tc.stderr), "stderr: %s", r.stderr)
			assert.NotContains(t, r.stderr, "goroutine", "no stack trace")
		})
	}

	// An empty namespace is no error: the table says so on standard
	// error, as kubectl does, and a document lists nothing.
	r := status("--kubeconfig", kube.Kubeconfig, "-n", ns)
	assert.Equal(t, statusRun{stderr: fmt.Sprintf("No trainfn jobs found in %s namespace.\n", ns)}, r)
	r = status("--kubeconfig", kube.Kubeconfig, "-n", ns, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, `{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": []}`, r.stdout)
}

// buildTrainfn builds the binary under test into the test's folder.
func buildTrainfn(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "trainfn")
	out, err := exec.Command("go", "build", "-o", path, "github.com/trainfn/trainfn/cmd/trainfn").CombinedOutput()
	require.NoError(t, err, "building trainfn:\n%s", out)
	return path
}

// renderWith renders job specs with the trainfn binary, as a user would
// before applying them.
func renderWith(t *testing.T, trainfn, specs string) []*unstructured.Unstructured {
	dir := t.TempDir()
	in := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(in, []byte(specs), 0o644))
	r := runStatus(t, trainfn, "render", in)
	require.Equal(t, 0, r.code, r.stderr)
	out := filepath.Join(dir, "rendered.yaml")
	require.NoError(t, os.WriteFile(out, []byte(r.stdout), 0o644))
	objs, err := cluster.ReadObjects(out)
	require.NoError(t, err)
	return objs
}

// statusRun is how a run of the binary ended.
type statusRun struct {
	code           int
	stdout, stderr string
}

func runStatus(t *testing.T, trainfn string, args ...string) statusRun {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, trainfn, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running trainfn %s: %v", strings.Join(args, " "), err)
	}
	return statusRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// awaitStatus polls `trainfn status -n ns` until each job named shows the
// KIND, PHASE, READY and RESTARTS given.
func awaitStatus(t *testing.T, status func(...string) statusRun, ns string, want map[string]string) {
	t.Helper()
	var last statusRun
	err := waitUntil("trainfn status to show "+fmt.Sprint(want), func(context.Context) error {
		last = status("-n", ns)
		if last.code != 0 {
			return fmt.Errorf("exit status %d: %s", last.code, last.stderr)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(last.stdout), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) == 6 {
				got[f[0]] = strings.Join(f[1:5], " ")
			}
		}
		for name, w := range want {
			if got[name] != w {
				return fmt.Errorf("%s is %q, not %q", name, got[name], w)
			}
		}
		return nil
	})
	require.NoError(t, err, "last table:\n%s", last.stdout)
	t.Logf("trainfn status -n %s:\n%s", ns, strings.TrimSpace(last.stdout))
}

// tableColumn is one column of a table's rows.
func tableColumn(table string, i int) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		out = append(out, strings.Fields(line)[i])
	}
	return out
}

// hasRow tells whether a row of the table starts with the fields given.
func hasRow(table string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && strings.Join(f[:len(fields)], " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// updatePodStatus writes the status of the one pod the selector matches,
// as its kubelet would: kwok made it run and left it alone since.
func updatePodStatus(t *testing.T, ns, selector string, change func(*corev1.Pod)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods := kube.Client.CoreV1().Pods(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d pods match %s, not 1", len(list.Items), selector)
		}
		p := &list.Items[0]
		change(p)
		_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "kubelet"})
		return err
	})
	require.NoError(t, err, "writing the status of the pod %s", selector)
}

// restartContainer reports that the pod's container exited and was started
// again, and is not ready yet.
func restartContainer(p *corev1.Pod) {
	for i := range p.Status.ContainerStatuses {
		s := &p.Status.ContainerStatuses[i]
		s.RestartCount++
		s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", FinishedAt: metav1.Now()}}
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	}
	setPodReady(p, false)
}

func setPodReady(p *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			p.Status.Conditions[i].Status = status
			p.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Ready = ready
	}
}

// exitPod reports that the pod's containers exited with a code, which ends
// the pod: Succeeded for 0, Failed otherwise.
func exitPod(p *corev1.Pod, code int32) {
	reason := "Completed"
	p.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		p.Status.Phase, reason = corev1.PodFailed, "Error"
	}
	setPodReady(p, false)
	for i := range p.Status.ContainerStatuses {
		s := &p.Status.ContainerStatuses[i]
		started := metav1.Now()
		if s.State.Running != nil {
			started = s.State.Running.StartedAt
		}
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: metav1.Now()}}
	}
}
