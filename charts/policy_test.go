package charts

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/render/handoff"
)

// The admission policies' behaviour is tested on a real API server, acting
// as the reconciler and as a launcher (test/reconcile, test/e2e); these
// tests hold what the templates fill in to what the rest of trainfn says.

// reconcilerPolicy is the rendered admission policy that confines the
// reconciler, and its binding.
func reconcilerPolicy(t *testing.T, objs []*unstructured.Unstructured, name string) (admissionv1.ValidatingAdmissionPolicy, admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	for _, p := range ofKind[admissionv1.ValidatingAdmissionPolicy](t, objs, "ValidatingAdmissionPolicy") {
		if p.Name == name {
			policy = p
		}
	}
	for _, b := range ofKind[admissionv1.ValidatingAdmissionPolicyBinding](t, objs, "ValidatingAdmissionPolicyBinding") {
		if b.Name == name {
			binding = b
		}
	}
	require.Equal(t, name, policy.Name, "no ValidatingAdmissionPolicy %s", name)
	require.Equal(t, name, binding.Name, "no ValidatingAdmissionPolicyBinding %s", name)
	return policy, binding
}

func variable(t *testing.T, p admissionv1.ValidatingAdmissionPolicy, name string) string {
	t.Helper()
	for _, v := range p.Spec.Variables {
		if v.Name == name {
			return v.Expression
		}
	}
	t.Fatalf("policy %s has no variable %s", p.Name, name)
	return ""
}

// TestReconcilerPolicyIsItsServiceAccounts: the policy applies to the
// ServiceAccount the chart binds the roles to, whichever it is, and denies.
func TestReconcilerPolicyIsItsServiceAccounts(t *testing.T) {
	for account, args := range map[string][]string{
		release:      nil,
		"reconciler": {"--set", "serviceAccount.create=false,serviceAccount.name=reconciler"},
	} {
		policy, binding := reconcilerPolicy(t, render(t, args...), release)
		require.Len(t, policy.Spec.MatchConditions, 1)
		assert.Equal(t, `request.userInfo.username == "system:serviceaccount:`+releaseNamespace+`:`+account+`"`,
			policy.Spec.MatchConditions[0].Expression)
		assert.Equal(t, new(admissionv1.Fail), policy.Spec.FailurePolicy, "a policy that cannot be evaluated refuses")
		assert.Equal(t, release, binding.Spec.PolicyName)
		assert.Equal(t, []admissionv1.ValidationAction{admissionv1.Deny}, binding.Spec.ValidationActions)
		assert.Nil(t, binding.Spec.MatchResources, "every namespace, every object")
	}
}

// TestReconcilerPolicyOwnsTheReconcilersAnnotations: the annotations the
// policy lets the reconciler change are those handoff says it writes.
func TestReconcilerPolicyOwnsTheReconcilersAnnotations(t *testing.T) {
	policy, _ := reconcilerPolicy(t, render(t), release)
	var owned []string
	for _, m := range regexp.MustCompile(`'([^']+)'`).FindAllStringSubmatch(variable(t, policy, "owned"), -1) {
		owned = append(owned, m[1])
	}
	// The progress server's annotation joins handoff's list where the
	// status reader declares it; until then, package progress holds it.
	assert.ElementsMatch(t, handoff.ReconcilerAnnotations, owned)
	assert.Contains(t, policy.Spec.Validations[len(policy.Spec.Validations)-1].Expression, "'"+release+"'",
		"the Lease the reconciler may write is the release's")
}

// TestLauncherExecPolicy: on by default; it takes trainfn's Roles of the
// request's namespace as its parameters, and lets a namespace without one
// be.
func TestLauncherExecPolicy(t *testing.T) {
	name := release + "-launcher-exec"
	policy, binding := reconcilerPolicy(t, render(t), name)
	assert.Equal(t, &admissionv1.ParamKind{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, policy.Spec.ParamKind)
	require.NotNil(t, binding.Spec.ParamRef)
	assert.Empty(t, binding.Spec.ParamRef.Namespace, "the request's namespace")
	assert.Equal(t, map[string]string{handoff.OperatorNameLabel: handoff.Operator}, binding.Spec.ParamRef.Selector.MatchLabels)
	assert.Equal(t, new(admissionv1.AllowAction), binding.Spec.ParamRef.ParameterNotFoundAction)
	assert.Contains(t, variable(t, policy, "pods"), "'"+handoff.ExecPods+"'")

	for _, p := range ofKind[admissionv1.ValidatingAdmissionPolicy](t, render(t, "--set", "launcherExecPolicy.enabled=false"), "ValidatingAdmissionPolicy") {
		assert.NotEqual(t, name, p.Name, "launcherExecPolicy.enabled=false renders no launcher policy")
	}
}
