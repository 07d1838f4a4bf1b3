//go:build e2e

package onnode

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/reconciler/sshkey"
	"github.com/trainfn/trainfn/render/mpi"
)

// TestJobsEndWithoutTheReconciler runs jobs with the reconciler stopped:
// whether the launcher succeeds or fails, in every launch mode, the
// workers stop by themselves once it has ended, unless cleanPodPolicy is
// None; and the same output applied again starts no worker. Not parallel
// with the other tests, whose jobs need the reconciler: its subtests run
// side by side, and the reconciler is started again after them.
func TestJobsEndWithoutTheReconciler(t *testing.T) {
	withoutTheReconciler(t)
	v1alpha1 := []string{"spec"} // cleanPodPolicy Running, always
	for _, tt := range []struct {
		name, manifest string
		// policy is the cleanPodPolicy, and policies the path of the
		// manifest's run policy.
		policy   string
		policies []string
		config   string
		// uid is the ranks' user.
		uid int
		// fails makes mpirun fail at every attempt, of backoffLimit+1.
		fails bool
	}{
		{name: "pi", manifest: "../../examples/jobs/pi.yaml", policy: "Running", policies: runPolicy, uid: 1000},
		{name: "pi", manifest: "../../examples/jobs/pi.yaml", policy: "Running", policies: runPolicy, fails: true},
		{name: "pi", manifest: "../../examples/jobs/pi.yaml", policy: "None", policies: runPolicy, uid: 1000},
		{name: "pi-rsh", manifest: "testdata/pi-rsh.yaml", policy: "All", policies: runPolicy},
		{name: "pi-v1alpha1-exec", manifest: "testdata/pi-v1alpha1-exec.yaml", policy: "Running", policies: v1alpha1, config: deliveryConfig()},
		{name: "pi-v1alpha1-exec", manifest: "testdata/pi-v1alpha1-exec.yaml", policy: "Running", policies: v1alpha1, config: deliveryConfig(), fails: true},
	} {
		label := tt.name + "/" + tt.policy
		if tt.fails {
			label += "/failing"
		}
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			manifests := []string{edited(t, tt.manifest, tt.policies, tt.policy, tt.fails)}
			if tt.config != "" {
				manifests = append(manifests, writeFile(t, "trainfn.yaml", tt.config))
			}
			// With no reconciler to create it, the SSH Secret is the
			// user's, applied with the job.
			s := submit(t, append(manifests, sshSecret(t, tt.name)), nil)
			launcher := tt.name + "-launcher"
			succeeded, took := s.finish(launcher, jobTimeout)
			out := s.logs("batch.kubernetes.io/job-name="+launcher, "")
			require.Equal(t, !tt.fails, succeeded, "the launcher's Job, %s after kubectl apply:\n%s", took, out)
			if !tt.fails {
				checkPi(t, out, tt.name, 2, 2, tt.uid)
			}
			if tt.policy == "None" {
				time.Sleep(10 * time.Second)
				assert.Equal(t, 2, s.runningWorkers(tt.name), "cleanPodPolicy None: the workers run on")
				return
			}
			s.workersStop(tt.name, 30*time.Second)
			assert.Contains(t, s.logs("training.kubeflow.org/job-name="+tt.name+",training.kubeflow.org/job-role=worker", ""),
				"trainfn: the job ended: this worker stops")
			// A GitOps tool applying the same output again, as Flux and
			// Argo CD do (server-side), starts no worker.
			s.kubectl(bytes.NewReader(s.applied), "apply", "--server-side", "--force-conflicts", "-f", "-")
			time.Sleep(5 * time.Second)
			assert.Zero(t, s.runningWorkers(tt.name), "applying the output again brought workers back")
		})
	}
}

var runPolicy = []string{"spec", "runPolicy"}

// edited is the manifest with the cleanPodPolicy of its run policy (at
// policies) set, unless its apiVersion has none, with no
// ttlSecondsAfterFinished, and with its launcher's mpirun failing when
// fails, at every attempt of backoffLimit 1: the ranks run a program that
// is not there.
func edited(t *testing.T, manifest string, policies []string, policy string, fails bool) string {
	t.Helper()
	in, err := os.ReadFile(manifest)
	require.NoError(t, err)
	job, err := yaml.Parse(string(in))
	require.NoError(t, err)
	set := func(name string, value *yaml.RNode) {
		require.NoError(t, job.PipeE(yaml.LookupCreate(yaml.MappingNode, policies...), yaml.SetField(name, value)))
	}
	if len(policies) > 1 {
		set("cleanPodPolicy", yaml.NewStringRNode(policy))
	}
	// Kubernetes deletes finished Jobs after ttlSecondsAfterFinished, and a
	// re-apply after that makes them again, by design (docs/changing-jobs.md):
	// the re-apply this test makes is about trainfn's own end, so the Jobs
	// stay.
	require.NoError(t, job.PipeE(yaml.Lookup(policies...), yaml.Clear("ttlSecondsAfterFinished")))
	text := job.MustString()
	if fails {
		set("backoffLimit", yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "1"}))
		text = strings.ReplaceAll(job.MustString(), "/home/mpiuser/pi", "/home/mpiuser/no-such-program")
		require.NotEqual(t, job.MustString(), text, "the manifest runs /home/mpiuser/pi")
	}
	return writeFile(t, filepath.Base(manifest), text)
}

// sshSecret is a file with the job's SSH Secret, as a user supplies it
// when no reconciler creates it.
func sshSecret(t *testing.T, job string) string {
	t.Helper()
	data, err := sshkey.Generate()
	require.NoError(t, err)
	secret, err := sigsyaml.Marshal(corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: job + "-ssh"}, Type: corev1.SecretTypeSSHAuth, Data: data})
	require.NoError(t, err)
	return writeFile(t, "secret.yaml", string(secret))
}

// runningWorkers counts the job's worker pods that have not ended.
func (s *submission) runningWorkers(job string) int {
	s.t.Helper()
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: "training.kubeflow.org/job-name=" + job + ",training.kubeflow.org/job-role=worker"})
	require.NoError(s.t, err)
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// workersStop requires every worker pod of the job to end (or be gone)
// within the time given, and says how long after the launcher's end.
func (s *submission) workersStop(job string, within time.Duration) {
	s.t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return s.runningWorkers(job) == 0, nil
	})
	require.NoError(s.t, err, "%d worker pods of %s still run %s after the launcher ended; the launcher and the workers printed:\n%s",
		s.runningWorkers(job), job, within, s.logs("training.kubeflow.org/job-name="+job, ""))
	s.t.Logf("the workers of %s ended %s after the launcher's Job did", job, time.Since(began).Round(10*time.Millisecond))
}

// withoutTheReconciler stops the reconciler for the test, and starts it
// again after. A test that calls it is not parallel with the others, whose
// jobs need the reconciler; its own subtests may be.
func withoutTheReconciler(t *testing.T) {
	t.Helper()
	require.NoError(t, kube.ScaleReconciler(context.Background(), 0))
	t.Cleanup(func() { require.NoError(t, kube.ScaleReconciler(context.Background(), 1)) })
}

// TestElasticAgentsRunOnceWithoutTheReconciler runs an elastic
// PyTorchJob, whose workers are a StatefulSet, with no reconciler to scale
// it to zero when its agents succeed: the StatefulSet restarts the agent
// that exited 0, which used to train again at every restart, forever,
// saying nothing. Its restart must train no more, and say why on stderr.
func TestElasticAgentsRunOnceWithoutTheReconciler(t *testing.T) {
	withoutTheReconciler(t)
	s := submit(t, []string{"testdata/torch-elastic-once.yaml"}, nil)
	const pod = "torch-once-worker-0"
	// The first run trains and exits 0; the restart after it says why it
	// runs nothing.
	var status corev1.ContainerStatus
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := kube.Client.CoreV1().Pods(s.ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		status = p.Status.ContainerStatuses[0]
		return status.RestartCount >= 1 && status.State.Running != nil, nil
	})
	require.NoError(t, err, "the agent did not end and restart: %+v\n%s", status, s.describe())
	last := status.LastTerminationState.Terminated
	require.NotNil(t, last, "%+v", status)
	assert.Equal(t, int32(0), last.ExitCode, "the agent trained to its end: %+v", last)
	trained := s.previousLogs(pod, "pytorch")
	checkAllReduce(t, trained, 1, 1)

	// Long enough for two restarts of a container that keeps exiting: the
	// kubelet waits 10 s, then 20 s.
	time.Sleep(45 * time.Second)
	p, err := kube.Client.CoreV1().Pods(s.ns).Get(context.Background(), pod, metav1.GetOptions{})
	require.NoError(t, err)
	now := p.Status.ContainerStatuses[0]
	assert.Equal(t, int32(1), now.RestartCount, "the agent was restarted again: %+v", now)
	assert.NotNil(t, now.State.Running, "the restarted container waits to be stopped: %+v", now)
	said := s.logs("statefulset.kubernetes.io/pod-name="+pod, "pytorch")
	assert.Contains(t, said, "trainfn: training ended: this worker's command (torchrun) exited with status 0 before its StatefulSet restarted it")
	assert.NotRegexp(t, reduceLine, said, "the restart trained again")
	t.Logf("the agent trained once, then its restart said:\n%s", said)
}

// TestLauncherEndsWhenItsWorkersJobFailed runs pi with workers whose
// command fails at once, and whose Job allows no failure: the workers'
// Job fails while the launcher waits for them. A worker gone before the
// launcher saw it resolve left it waiting forever, as if for room; the
// failed worker now stays a while, its name resolving, and the attempt
// that sees it gives up on it once it is gone, saying so.
//   - restartPolicy OnFailure (pi's): the attempts after it, in the same
//     pod, remember that the workers were placed, give up too, and the
//     launcher's Job fails at its backoffLimit;
//   - Never: a new pod would not remember, and wait as for room; the
//     wait's word that the workers are gone fails the Job at once, by its
//     podFailurePolicy, with the word in the Job's condition.
func TestLauncherEndsWhenItsWorkersJobFailed(t *testing.T) {
	for _, restartPolicy := range []string{"OnFailure", "Never"} {
		t.Run(restartPolicy, func(t *testing.T) { launcherEndsWhenItsWorkersJobFailed(t, restartPolicy) })
	}
}

// goneTimeout is the launcher's bound on its wait in
// TestLauncherEndsWhenItsWorkersJobFailed. Under Never one attempt must
// say the workers are gone, which it does only if their names stopped
// resolving before the bound: 15 s, less the 5 s the failed workers
// linger, was too little for the endpoints of a loaded node (found in CI:
// the names still resolved, the wait took it for a stall, exited 1, and
// the next pod waited as for room). Under OnFailure a stale attempt is one
// failure more, and the next remembers the workers were placed.
func goneTimeout(restartPolicy string) string {
	if restartPolicy == "Never" {
		return "45"
	}
	return waitTimeout
}

func launcherEndsWhenItsWorkersJobFailed(t *testing.T, restartPolicy string) {
	withoutTheReconciler(t)
	in, err := os.ReadFile("../../examples/jobs/pi.yaml")
	require.NoError(t, err)
	job, err := yaml.Parse(string(in))
	require.NoError(t, err)
	require.NoError(t, job.PipeE(yaml.Lookup(runPolicy...), yaml.Clear("ttlSecondsAfterFinished")))
	require.NoError(t, job.PipeE(yaml.Lookup(runPolicy...), yaml.SetField("backoffLimit", yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "3"}))))
	require.NoError(t, job.PipeE(yaml.Lookup("spec", "mpiReplicaSpecs", "Launcher"), yaml.SetField("restartPolicy", yaml.NewStringRNode(restartPolicy))))
	s := submit(t, []string{writeFile(t, "pi.yaml", job.MustString()), sshSecret(t, "pi")}, func(obj map[string]any) {
		switch {
		case obj["kind"] != "Job":
		case name(obj) == "pi-launcher":
			waitFor(obj, goneTimeout(restartPolicy))
		case name(obj) == "pi-worker":
			obj["spec"].(map[string]any)["backoffLimit"] = 0
			// work.sh runs this in place of sshd: the worker fails at
			// once, refusing SSH while its name resolves, for less than
			// the launcher's bound, as by default (15 s against 600 s).
			worker := list(podSpec(obj), "containers")[0].(map[string]any)
			worker["args"] = []any{"/bin/sh", "-c", "exit 1"}
			worker["env"] = append(worker["env"].([]any), map[string]any{"name": mpi.FailedWorkerLingerEnv, "value": "5"})
		}
	})
	const (
		remembers = "trainfn: an earlier attempt found the workers placed"
		says      = "their pods are gone, as when the workers' Job has failed or was deleted"
	)
	// The launcher's pods are deleted once its Job fails: what its
	// attempts said is read while they run.
	var said, seen string
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=pi-launcher"})
		if err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		logs := []string{s.logs("batch.kubernetes.io/job-name=pi-launcher", "")}
		if restartPolicy == "OnFailure" {
			logs = append(logs, s.previousLogs(pods.Items[0].Name, ""))
		}
		seen = strings.Join(logs, "\n")
		for _, l := range logs {
			if strings.Contains(l, says) && (restartPolicy == "Never" || strings.Contains(l, remembers)) {
				said = l
			}
		}
		return said != "", nil
	})
	require.Contains(t, said, says, "no attempt of the launcher said its workers were gone; it said:\n%s\nits pods:\n%s", seen, s.describe())
	succeeded, took := s.finish("pi-launcher", jobTimeout)
	assert.False(t, succeeded)
	assert.Equal(t, "Degraded", argoHealth(t, s, "pi"), "a failed MPIJob, in Argo CD")
	workers, err := kube.Client.BatchV1().Jobs(s.ns).Get(context.Background(), "pi-worker", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(workers.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue
	}), "the workers' Job failed: %+v", workers.Status.Conditions)
	launcher, err := kube.Client.BatchV1().Jobs(s.ns).Get(context.Background(), "pi-launcher", metav1.GetOptions{})
	require.NoError(t, err)
	failed := launcher.Status.Conditions[slices.IndexFunc(launcher.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue
	})]
	if restartPolicy == "Never" {
		assert.Equal(t, batchv1.JobReasonPodFailurePolicy, failed.Reason, "%+v", failed)
		assert.Contains(t, failed.Message, "exit code 69", "%+v", failed)
	} else {
		assert.Equal(t, batchv1.JobReasonBackoffLimitExceeded, failed.Reason, "%+v", failed)
	}
	t.Logf("the launcher's Job failed %s after kubectl apply (%s: %s); an attempt said:\n%s", took.Round(10*time.Millisecond), failed.Reason, failed.Message, said)
}

// previousLogs is what the container printed before its last restart.
func (s *submission) previousLogs(pod, container string) string {
	opts := &corev1.PodLogOptions{Container: container, Previous: true}
	data, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(pod, opts).DoRaw(context.Background())
	if err != nil {
		return err.Error()
	}
	return string(data)
}
