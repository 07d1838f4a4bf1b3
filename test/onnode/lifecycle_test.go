//go:build e2e

package onnode

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/reconciler/sshkey"
)

// TestJobsEndWithoutTheReconciler runs jobs with the reconciler stopped:
// whether the launcher succeeds or fails, in every launch mode, the
// workers stop by themselves once it has ended, unless cleanPodPolicy is
// None; and the same output applied again starts no worker. Not parallel
// with the other tests, whose jobs need the reconciler: its subtests run
// side by side, and the reconciler is started again after them.
func TestJobsEndWithoutTheReconciler(t *testing.T) {
	require.NoError(t, kube.ScaleReconciler(context.Background(), 0))
	t.Cleanup(func() { require.NoError(t, kube.ScaleReconciler(context.Background(), 1)) })
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
