//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// TestLauncherExecPolicy applies what an MPIJob in the KubectlExec launch
// mode renders to, with the reconciler's chart installed as its defaults
// have it, and execs as the launcher's ServiceAccount, with a token the API
// server issued: into a pod named as the job's workers the Job controller
// names them, the request passes admission (and fails further on, the pod
// having no node here); into any other pod of the namespace, its Role
// notwithstanding, the chart's admission policy refuses it.
func TestLauncherExecPolicy(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	installChart(t, ns)
	objs, err := cluster.ReadObjects(filepath.Join(testtool.GoldenDir(t, "mpijob-kubectl-exec"), "expected.yaml"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, serverSideApply(ctx, ns, objs))

	worker, stranger, namesake := "noshd-worker-1-x7k2p", "database-0", "other-worker-0-x7k2p"
	for _, name := range []string{worker, stranger, namesake} {
		_, err := kube.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	launcher := launcherClient(t, ns, "noshd-launcher")

	err = waitUntil("the launcher exec policy to be enforced", func(ctx context.Context) error {
		err := execInto(ctx, launcher, ns, stranger)
		if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			return fmt.Errorf("exec into %s was not refused by the policy: %v", stranger, err)
		}
		return nil
	})
	require.NoError(t, err)

	for _, name := range []string{stranger, namesake} {
		err := execInto(ctx, launcher, ns, name)
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "exec into %s: %v", name, err)
		assert.Contains(t, err.Error(), "may exec only into its workers", "exec into %s", name)
	}
	err = execInto(ctx, launcher, ns, worker)
	require.Error(t, err, "the pod has no node to run the command on")
	assert.False(t, apierrors.IsForbidden(err), "exec into its own worker %s was refused: %v", worker, err)
	t.Logf("exec into its own worker %s passed admission: %v", worker, err)
}

// launcherClient signs in as a ServiceAccount of ns with a token the API
// server issues, as the launcher's pod is given one.
func launcherClient(t *testing.T, ns, name string) kubernetes.Interface {
	t.Helper()
	var token *authenticationv1.TokenRequest
	err := waitUntil("ServiceAccount "+name, func(ctx context.Context) error {
		var err error
		token, err = kube.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		return err
	})
	require.NoError(t, err)
	config := rest.AnonymousClientConfig(kube.Config)
	config.BearerToken = token.Status.Token
	c, err := kubernetes.NewForConfig(config)
	require.NoError(t, err)
	return c
}

// execInto asks to run true in a pod, as kubectl exec does, without the
// stream upgrade: authorization and admission answer it all the same.
func execInto(ctx context.Context, c kubernetes.Interface, ns, pod string) error {
	err := c.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("exec").
		Param("command", "true").Param("stdout", "true").Do(ctx).Error()
	if err == nil {
		return errors.New("exec answered with no error")
	}
	return err
}
