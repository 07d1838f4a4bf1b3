//go:build e2e

package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// TestSSHSecretGenerated: a job given no SSH Secret gets one, made in the
// cluster so that no key ever is in Git, and it goes
// with the workloads that mount it.
func TestSSHSecretGenerated(t *testing.T) {
	t.Parallel()
	j, r := startElastic(t)
	ctx, cancel := timeout()
	defer cancel()
	secret, err := kube.Client.CoreV1().Secrets(j.ns).Get(ctx, j.name+"-ssh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeSSHAuth || secret.Immutable == nil || !*secret.Immutable {
		t.Errorf("Secret %s is of type %s, immutable %v; want %s, immutable", secret.Name, secret.Type, secret.Immutable, corev1.SecretTypeSSHAuth)
	}
	for k, v := range handoff.JobLabels(j.name) {
		if secret.Labels[k] != v {
			t.Errorf("Secret %s: label %s is %q, want %q", secret.Name, k, secret.Labels[k], v)
		}
	}
	if secret.Labels[handoff.GeneratedSSH] != "ssh" {
		t.Errorf("Secret %s: label %s is %q, want ssh", secret.Name, handoff.GeneratedSSH, secret.Labels[handoff.GeneratedSSH])
	}
	checkKeyPair(t, secret.Data)
	var owners []string
	for _, o := range secret.OwnerReferences {
		owners = append(owners, o.Kind+"/"+o.Name)
	}
	slices.Sort(owners)
	if want := []string{"Job/elastic-launcher", "StatefulSet/elastic-worker"}; !slices.Equal(owners, want) {
		t.Errorf("Secret %s is owned by %v, want %v: the workloads that mount it", secret.Name, owners, want)
	}
	if strings.Contains(r.stderr.String(), "PRIVATE KEY") {
		t.Error("the reconciler logged the private key")
	}

	// The job is removed, as GitOps prunes it: its workloads first.
	// The garbage collector takes the Secret once its owners are all gone.
	background := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &background}
	if err := kube.Client.BatchV1().Jobs(j.ns).Delete(ctx, j.name+"-launcher", del); err != nil {
		t.Fatal(err)
	}
	if err := kube.Client.AppsV1().StatefulSets(j.ns).Delete(ctx, j.name+"-worker", del); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Secret "+secret.Name+" collected", func(ctx context.Context) error {
		s, err := kube.Client.CoreV1().Secrets(j.ns).Get(ctx, secret.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("Secret %s (UID %s) is still there, owned by %v", s.Name, s.UID, s.OwnerReferences)
	})
}

// checkKeyPair checks that a Secret holds an OpenSSH key pair that ssh and
// sshd read: the private key, and its public half for authorized_keys.
func checkKeyPair(t *testing.T, data map[string][]byte) {
	t.Helper()
	private := data[corev1.SSHAuthPrivateKey]
	if !bytes.HasPrefix(private, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n")) {
		t.Fatalf("%s is not an OpenSSH private key", corev1.SSHAuthPrivateKey)
	}
	signer, err := ssh.ParsePrivateKey(private)
	if err != nil {
		t.Fatalf("%s: %v", corev1.SSHAuthPrivateKey, err)
	}
	public, _, _, _, err := ssh.ParseAuthorizedKey(data["ssh-publickey"])
	if err != nil {
		t.Fatalf("ssh-publickey: %v", err)
	}
	if !bytes.Equal(public.Marshal(), signer.PublicKey().Marshal()) {
		t.Error("ssh-publickey is not the public half of ssh-privatekey")
	}
}

// TestSSHSecretSupplied: a job whose user supplied its SSH Secret (with a
// secretGenerator, SOPS, sealed-secrets...) keeps it untouched, whatever
// happens to the job.
func TestSSHSecretSupplied(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	ctx, cancel := timeout()
	defer cancel()
	supplied, err := kube.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: elasticMPIJob.Name + "-ssh"},
		Type:       corev1.SecretTypeSSHAuth,
		Data: map[string][]byte{
			// Not a working key: what matters is that it is never read
			// back, rewritten or logged.
			corev1.SSHAuthPrivateKey: []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nsupplied by the user\n-----END OPENSSH PRIVATE KEY-----\n"),
			"ssh-publickey":          []byte("ssh-ed25519 AAAA supplied-by-the-user\n"),
		},
	}, metav1.CreateOptions{FieldManager: "sealed-secrets"})
	if err != nil {
		t.Fatal(err)
	}
	j := deploy(t, ns, elasticMPIJob)
	j.secrets = append(j.secrets, supplied)
	r := startReconciler(t, ns)
	j.waitDiscovery(t, 0, 1)
	j.keep(t, 2)
	j.scale(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	j.checkInvariants(t)
	n, err := r.metric(ctx, "trainfn_ssh_secrets_created_total")
	if err != nil || n != 0 {
		t.Errorf("trainfn_ssh_secrets_created_total is %v (%v), want 0", n, err)
	}
	if strings.Contains(r.stderr.String(), "PRIVATE KEY") {
		t.Error("the reconciler logged the user's key")
	}
}

// TestSSHSecretRefused: where the API server refuses the job's SSH Secret
// (here a cluster's own admission policy against SSH keys in Secrets;
// elsewhere a quota or a webhook), the reconciler says so once, on the
// launcher's Job, and does not send the Secret again at every event of the
// job; its other work goes on.
func TestSSHSecretRefused(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	refuseSSHSecrets(t, ns)
	j := deploy(t, ns, elasticMPIJob)
	r := startReconciler(t, ns)
	j.waitDiscovery(t, 0, 1)
	j.keep(t, 2)
	j.scale(t, 3)
	j.waitDiscovery(t, 0, 1, 2)
	eventually(t, "a warning that the Secret was refused", func(ctx context.Context) error {
		events, err := kube.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=SSHSecretRefused"})
		if err != nil {
			return err
		}
		if len(events.Items) == 0 {
			return fmt.Errorf("no SSHSecretRefused event")
		}
		if e := events.Items[0]; e.Regarding.Name != j.name+"-launcher" || e.Type != corev1.EventTypeWarning {
			return giveUp(fmt.Errorf("the event is a %s on %s %s", e.Type, e.Regarding.Kind, e.Regarding.Name))
		}
		return nil
	})
	ctx, cancel := timeout()
	defer cancel()
	n, err := r.metric(ctx, "trainfn_writes_total", "kind", "Secret")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the reconciler sent the Secret %v times through the job's events, want once", n)
	}
}

// refuseSSHSecrets has the API server refuse every kubernetes.io/ssh-auth
// Secret in ns, as a cluster's own admission policy may, from the moment
// it returns.
func refuseSSHSecrets(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	name := "no-ssh-keys-" + ns
	admission := kube.Client.AdmissionregistrationV1()
	_, err := admission.ValidatingAdmissionPolicies().Create(ctx, &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "object.type != 'kubernetes.io/ssh-auth'", Message: "no SSH keys in Secrets here"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admission.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admission.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = admission.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Type: corev1.SecretTypeSSHAuth,
		Data: map[string][]byte{corev1.SSHAuthPrivateKey: []byte("key")}}
	eventually(t, "the policy against SSH keys in force", func(ctx context.Context) error {
		_, err := kube.Client.CoreV1().Secrets(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsInvalid(err) {
			return fmt.Errorf("an SSH Secret was not refused as the policy refuses it: %v", err)
		}
		return nil
	})
}
