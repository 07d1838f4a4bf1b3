//go:build e2e

package onnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/trainfn/trainfn/test/node"
	"github.com/trainfn/trainfn/test/testtool"
)

// submission is a job applied to the node, in a namespace of its own.
type submission struct {
	t  *testing.T
	ns string
	// began is when kubectl apply was run.
	began time.Time
	// applied is what kubectl applied.
	applied []byte
}

// submit renders manifests with trainfn, fits them to the node's CPU (see
// node.Fit), lets edit change the objects (for a test that breaks the
// render on purpose) and applies them with kubectl in a fresh namespace.
func submit(t *testing.T, manifests []string, edit func(obj map[string]any)) *submission {
	t.Helper()
	return submitTo(t, kube.Namespace(t), manifests, edit)
}

// submitTo submits into a namespace made already.
func submitTo(t *testing.T, ns string, manifests []string, edit func(obj map[string]any)) *submission {
	t.Helper()
	out, err := exec.Command(trainfn, append([]string{"render"}, manifests...)...).Output()
	require.NoError(t, err, "trainfn render %s: %s", manifests, stderrOf(err))
	fitted, err := node.Fit(out, edit)
	require.NoError(t, err)
	s := &submission{t: t, ns: ns, applied: fitted}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the pods of %s:\n%s", s.ns, s.describe())
		}
	})
	s.began = time.Now()
	s.kubectl(bytes.NewReader(fitted), "apply", "-f", "-")
	return s
}

// exec runs a command in a pod's container, and says whether it could.
func (s *submission) exec(pod, container string, command ...string) error {
	return s.tryKubectl(nil, append([]string{"exec", pod, "--container", container, "--"}, command...)...)
}

// abandon deletes the submission's namespace, and with it the job, now
// rather than when the test ends.
func (s *submission) abandon() {
	s.t.Helper()
	err := kube.Client.CoreV1().Namespaces().Delete(context.Background(), s.ns, metav1.DeleteOptions{})
	require.NoError(s.t, err, "deleting the namespace %s", s.ns)
}

// kubectl runs kubectl in the submission's namespace, and requires it to
// succeed.
func (s *submission) kubectl(stdin io.Reader, args ...string) {
	s.t.Helper()
	require.NoError(s.t, s.tryKubectl(stdin, args...))
}

// tryKubectl runs kubectl in the submission's namespace, and says whether
// it succeeded.
func (s *submission) tryKubectl(stdin io.Reader, args ...string) error {
	_, err := s.kubectlOutput(stdin, args...)
	return err
}

// kubectlOutput runs kubectl in the submission's namespace, and returns
// what it printed. It may be called from any goroutine.
func (s *submission) kubectlOutput(stdin io.Reader, args ...string) (string, error) {
	kubectl, ok := testtool.Built("kubectl")
	if !ok {
		return "", errors.New("kubectl is not built: run hack/cluster-tools.sh")
	}
	cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kube.Kubeconfig, "--namespace", s.ns}, args...)...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// finish waits until the Job ends and reports whether it succeeded, and
// how long after the submission it ended.
func (s *submission) finish(job string, within time.Duration) (succeeded bool, took time.Duration) {
	s.t.Helper()
	ended, succeeded, took := s.ends(job, within)
	require.True(s.t, ended, "Job %s did not end within %s; its pods printed:\n%s", job, within, s.logs("batch.kubernetes.io/job-name="+job, ""))
	return succeeded, took
}

// ends waits up to the time given for the Job to end, and reports whether
// it ended, whether it succeeded, and how long after the submission.
func (s *submission) ends(job string, within time.Duration) (ended, succeeded bool, took time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		j, err := kube.Client.BatchV1().Jobs(s.ns).Get(ctx, job, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range j.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case batchv1.JobComplete:
				succeeded = true
				return true, nil
			case batchv1.JobFailed:
				return true, nil
			}
		}
		return false, nil
	})
	return err == nil, succeeded, time.Since(s.began)
}

// succeed requires the Job to succeed within the time given.
func (s *submission) succeed(job string, within time.Duration) {
	s.t.Helper()
	ok, took := s.finish(job, within)
	require.True(s.t, ok, "Job %s failed:\n%s", job, s.logs("batch.kubernetes.io/job-name="+job, ""))
	s.t.Logf("Job %s succeeded %s after kubectl apply", job, took.Round(10*time.Millisecond))
}

// logs is what the containers of the pods the selector picks printed, by
// pod, each under a header; the main container's unless one is named. It
// may be called from any goroutine: an error is what it returns.
func (s *submission) logs(selector, container string) string {
	ctx := context.Background()
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "listing the pods " + selector + ": " + err.Error()
	}
	var b strings.Builder
	for _, pod := range pods.Items {
		c := container
		if c == "" {
			c = pod.Spec.Containers[0].Name
		}
		data, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: c}).DoRaw(ctx)
		if err != nil {
			data = []byte(err.Error())
		}
		fmt.Fprintf(&b, "==> %s/%s (%s) <==\n%s\n", pod.Name, c, pod.Status.Phase, data)
	}
	return b.String()
}

// describe is every pod's phase and each container's state, and the
// namespace's events: what a failing test shows.
func (s *submission) describe() string {
	ctx := context.Background()
	var b strings.Builder
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, pod := range pods.Items {
		fmt.Fprintf(&b, "%s %s\n", pod.Name, pod.Status.Phase)
		for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "  %s: %+v\n", cs.Name, cs.State)
		}
	}
	events, err := kube.Client.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			if e.Type != corev1.EventTypeNormal {
				fmt.Fprintf(&b, "event %s %s: %s\n", e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	}
	return b.String()
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}

// name is an object's name.
func name(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	return n
}

// podSpec is a workload's pod template's spec, or an empty map.
func podSpec(obj map[string]any) map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if pod, ok := template["spec"].(map[string]any); ok {
		return pod
	}
	return map[string]any{}
}

func list(m map[string]any, key string) []any {
	l, _ := m[key].([]any)
	return l
}
