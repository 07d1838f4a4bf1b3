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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/trainfn/trainfn/render/handoff"
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

	// Pods a launcher held to a name prefix would reach: another job's
	// worker, and the pods of a job named as this one's workers,
	// noshd-worker-b.
	worker, stranger := "noshd-worker-1-x7k2p", "database-0"
	others := []string{stranger, "other-worker-0-x7k2p", "noshd-worker-b-launcher-x7k2p", "noshd-worker-b-worker-0-x7k2p"}
	for _, name := range append([]string{worker}, others...) {
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

	for _, name := range others {
		err := execInto(ctx, launcher, ns, name)
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "exec into %s: %v", name, err)
		assert.Contains(t, err.Error(), "may exec only into its workers", "exec into %s", name)
	}
	err = execInto(ctx, launcher, ns, worker)
	require.Error(t, err, "the pod has no node to run the command on")
	assert.False(t, apierrors.IsForbidden(err), "exec into its own worker %s was refused: %v", worker, err)
	t.Logf("exec into its own worker %s passed admission: %v", worker, err)

	// A launcher's Role of trainfn's that grants exec on every pod and
	// says nothing of its workers, as trainfn rendered before it did: the
	// policy cannot tell its workers, and refuses it every exec.
	old := unstructuredRole(ns, "old-launcher")
	require.NoError(t, serverSideApply(ctx, ns, old))
	oldLauncher := launcherClient(t, ns, "old-launcher")
	err = waitUntil("the old launcher's Role in force", func(ctx context.Context) error {
		err := execInto(ctx, oldLauncher, ns, worker)
		if !strings.Contains(err.Error(), "render the job again") {
			return fmt.Errorf("exec as the old launcher: %v", err)
		}
		return nil
	})
	require.NoError(t, err)
}

// unstructuredRole is a KubectlExec launcher's ServiceAccount, Role and
// RoleBinding as trainfn rendered them before its Roles said what their
// workers' pods are named.
func unstructuredRole(ns, name string) []*unstructured.Unstructured {
	labels := map[string]any{handoff.OperatorNameLabel: handoff.Operator, handoff.JobNameLabel: strings.TrimSuffix(name, "-launcher")}
	meta := func() map[string]any { return map[string]any{"name": name, "namespace": ns, "labels": labels} }
	return []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta()}},
		{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(), "rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get", "list"}},
			map[string]any{"apiGroups": []any{""}, "resources": []any{"pods/exec"}, "verbs": []any{"create", "get"}},
		}}},
		{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": name}}}},
	}
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
