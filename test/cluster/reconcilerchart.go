package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ReconcilerInstall is trainfn's reconciler chart as `helm template`
// renders it and a user applies it, but for its Deployment: kwok runs no
// container, so the tests run the reconciler's binary themselves, signed
// in as the chart's ServiceAccount.
type ReconcilerInstall struct {
	// Release and Namespace are the release's.
	Release, Namespace string
	// ServiceAccount is the one the chart binds its roles to, and User the
	// name the API server knows its tokens by.
	ServiceAccount, User string
	// Kubeconfig signs in with a token of the ServiceAccount, and Config
	// is the same as a rest.Config.
	Kubeconfig string
	Config     *rest.Config
	// Args are the reconciler's, as the chart's Deployment runs it.
	Args []string
	// Objects are what the chart rendered.
	Objects []*unstructured.Unstructured
}

// Arg is the value of the reconciler's flag of that name, as the chart
// gives it; "" when it gives none.
func (in *ReconcilerInstall) Arg(name string) string {
	for _, arg := range in.Args {
		if v, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// InstallReconcilerChart renders the chart in chartDir with helm as
// release in namespace, with more helm arguments (--set ...), applies
// every object but the Deployment, and waits until the ServiceAccount's
// rights are in force. The namespace must exist.
func (c *Cluster) InstallReconcilerChart(ctx context.Context, helm, chartDir, release, namespace string, args ...string) (*ReconcilerInstall, error) {
	cmd := exec.CommandContext(ctx, helm, append([]string{"template", release, chartDir, "--namespace", namespace}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm template %s: %w: %s", release, err, stderr.String())
	}
	objs, err := DecodeObjects(stdout.Bytes())
	if err != nil {
		return nil, err
	}
	in := &ReconcilerInstall{Release: release, Namespace: namespace, Objects: objs}
	var kept []*unstructured.Unstructured
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			if len(containers) > 0 {
				in.Args, _, _ = unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			}
			continue
		case "ServiceAccount":
			in.ServiceAccount = obj.GetName()
		}
		kept = append(kept, obj)
	}
	if in.ServiceAccount == "" {
		return nil, fmt.Errorf("the chart rendered no ServiceAccount: %v", args)
	}
	in.User = "system:serviceaccount:" + namespace + ":" + in.ServiceAccount
	if err := c.Apply(ctx, namespace, kept); err != nil {
		return nil, err
	}
	if err := in.signIn(ctx, c); err != nil {
		return nil, err
	}
	// The authorizer and the admission plugin learn of new roles and
	// policies from watches, a moment after they are written.
	return in, c.Wait(ctx, "the reconciler's rights in force", time.Minute, func(ctx context.Context) error {
		review, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: in.User, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "secrets"}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if !review.Status.Allowed {
			return errors.New("the reconciler may not create Secrets yet")
		}
		return c.policiesInForce(ctx, in)
	})
}

// signIn makes a kubeconfig with a token of the ServiceAccount, as the
// kubelet projects one into the reconciler's pod.
func (in *ReconcilerInstall) signIn(ctx context.Context, c *Cluster) error {
	hours := int64(3 * 3600)
	token, err := c.Client.CoreV1().ServiceAccounts(in.Namespace).CreateToken(ctx, in.ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hours},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a token of ServiceAccount %s/%s: %w", in.Namespace, in.ServiceAccount, err)
	}
	in.Config = rest.AnonymousClientConfig(c.Config)
	in.Config.BearerToken = token.Status.Token
	config := clientcmdapi.NewConfig()
	config.Clusters["trainfn-e2e"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData, CertificateAuthority: c.Config.CAFile}
	config.AuthInfos["reconciler"] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["trainfn-e2e"] = &clientcmdapi.Context{Cluster: "trainfn-e2e", AuthInfo: "reconciler"}
	config.CurrentContext = "trainfn-e2e"
	in.Kubeconfig = filepath.Join(c.Dir, "reconciler-"+in.Namespace+"-"+in.Release+".kubeconfig")
	return clientcmd.WriteToFile(*config, in.Kubeconfig)
}

// policiesInForce tells whether the admission plugin enforces the chart's
// policies yet: a server-side dry run of a write the reconciler's policy
// refuses (a plain Secret) is refused, not by RBAC.
func (c *Cluster) policiesInForce(ctx context.Context, in *ReconcilerInstall) error {
	client, err := kubernetes.NewForConfig(in.Config)
	if err != nil {
		return err
	}
	probe := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "policy-probe"}, "type": "Opaque"}
	body, _ := json.Marshal(probe)
	err = client.CoreV1().RESTClient().Post().Namespace(in.Namespace).Resource("secrets").
		Param("dryRun", "All").Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	if err == nil {
		return errors.New("the admission policy does not refuse the reconciler a plain Secret yet")
	}
	if !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
		return fmt.Errorf("the probe was refused, but not by the admission policy: %w", err)
	}
	return nil
}
