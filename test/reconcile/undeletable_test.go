//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// undeletableLabel marks the pods of a namespace that an admission policy
// keeps anyone from deleting, the StatefulSet controller included.
const undeletableLabel = "e2e.trainfn.dev/undeletable"

// undeletable keeps pods from being deleted until the test lets them go
// with deletable: a worker scaled away then stays running and ready, not
// even terminating, which shows that discovery drops it for its index
// alone. A real pod may linger as long: a slow preStop hook, a node that
// stopped answering.
func undeletable(t *testing.T, ns string, pods ...string) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	name := "e2e-undeletable-" + ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("!has(oldObject.metadata.labels) || !(%q in oldObject.metadata.labels)", undeletableLabel),
				Message:    "the test keeps this pod",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	admission := kube.Client.AdmissionregistrationV1()
	if _, err := admission.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admission.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := timeout()
		defer cancel()
		_ = admission.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = admission.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
	})
	for _, pod := range pods {
		labelPod(t, ns, pod, true)
		t.Cleanup(func() { labelPod(t, ns, pod, false) })
		// The API server takes up a new policy a moment later.
		eventually(t, "pod "+pod+" undeletable", func(ctx context.Context) error {
			err := kube.Client.CoreV1().Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil {
				return fmt.Errorf("pod %s may still be deleted", pod)
			}
			return nil
		})
	}
}

// deletable lets an undeletable pod go.
func deletable(t *testing.T, ns, pod string) {
	t.Helper()
	labelPod(t, ns, pod, false)
}

func labelPod(t *testing.T, ns, pod string, on bool) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	value := "null"
	if on {
		value = `"yes"`
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, undeletableLabel, value)
	_, err := kube.Client.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil && on {
		t.Fatalf("labelling pod %s: %v", pod, err)
	}
}
