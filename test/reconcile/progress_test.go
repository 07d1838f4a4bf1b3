//go:build e2e

package reconcile

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/reconciler/progress"
	"github.com/trainfn/trainfn/render/handoff"
)

// progressJob is a PyTorchJob's objects as a progress job renders them:
// its workers' Job, of first rank 0, and its CA ConfigMap, with no data.
type progressJob struct {
	ns, name string
}

func (j progressJob) url() string {
	return "/apis/kubeflow.org/v1/namespaces/" + j.ns + "/pytorchjobs/" + j.name + "/status"
}

func (j progressJob) labels() map[string]string {
	l := handoff.RoleLabels(j.name, handoff.RoleWorker)
	l[handoff.KindLabel] = handoff.PyTorchJobKind
	return l
}

// caName is the job's CA ConfigMap's name, as the render gives it.
func (j progressJob) caName() string { return handoff.ProgressCAName(handoff.PyTorchJobKind, j.name) }

// create creates the job's workers' Job and its CA ConfigMap.
func (j progressJob) create(t *testing.T) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	workers := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: j.ns, Name: j.name + "-worker", Labels: j.labels(),
			Annotations: map[string]string{handoff.FirstRank: "0"}},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: j.labels()},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "train", Image: "trainer"}}},
			},
		},
	}
	if _, err := kube.Client.BatchV1().Jobs(j.ns).Create(ctx, workers, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j.createCA(t)
}

// createCA creates the job's CA ConfigMap, with no data.
func (j progressJob) createCA(t *testing.T) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: j.ns, Name: j.caName(),
		Labels: handoff.JobLabels(j.name), Annotations: map[string]string{progress.CAAnnotation: "true"}}}
	if _, err := kube.Client.CoreV1().ConfigMaps(j.ns).Create(ctx, ca, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pod is the job's running worker.
func (j progressJob) pod(t *testing.T) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	eventually(t, "a worker of "+j.name, func(ctx context.Context) error {
		pods, err := kube.Client.CoreV1().Pods(j.ns).List(ctx, metav1.ListOptions{LabelSelector: handoff.JobNameLabel + "=" + j.name})
		if err != nil || len(pods.Items) == 0 {
			return fmt.Errorf("none yet: %v", err)
		}
		found = &pods.Items[0]
		return nil
	})
	return found
}

// podToken is a token of the namespace's default ServiceAccount for
// audiences, bound to pod as the kubelet binds a projected one.
func podToken(t *testing.T, pod *corev1.Pod, audiences ...string) string {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	got, err := kube.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: ptr.To[int64](3600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token bound to pod %s: %v", pod.Name, err)
	}
	return got.Status.Token
}

// ca is the CA the reconciler filled into the job's ConfigMap.
func (j progressJob) ca(t *testing.T) string {
	t.Helper()
	var ca string
	eventually(t, "the CA in "+j.caName(), func(ctx context.Context) error {
		cm, err := kube.Client.CoreV1().ConfigMaps(j.ns).Get(ctx, j.caName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ca = cm.Data[progress.CAKey]; ca == "" {
			return fmt.Errorf("no %s yet", progress.CAKey)
		}
		return nil
	})
	return ca
}

// progressClient trusts only the CA the reconciler filled into the job's
// ConfigMap, and checks the server's name as a pod would.
func progressClient(t *testing.T, j progressJob, in interface{ Arg(string) string }) *http.Client {
	t.Helper()
	ca := j.ca(t)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(ca)) {
		t.Fatalf("%s: %s is no PEM certificate:\n%s", j.caName(), progress.CAKey, ca)
	}
	host, _, _ := strings.Cut(in.Arg("progress-dns-names"), ",")
	for _, name := range strings.Split(in.Arg("progress-dns-names"), ",") {
		if strings.HasSuffix(name, ".svc") {
			host = name
		}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: host}}}
}

// post sends a report as Kubeflow's SDK does and returns the status code
// and body.
func post(t *testing.T, c *http.Client, r *replica, path, token, body string) (int, string) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+r.progress+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProgressReports: a job's pod reports its progress with a token bound
// to it, over TLS it checks with the CA in the job's ConfigMap; the last
// report is recorded on the job's first workload and as metrics. Others
// (another job's pod, a token for another audience, another kind's path)
// are refused, and so are bad reports and too many. Everything runs under
// the chart's roles and admission policy. The jobs are created after the
// reconciler's first fill of every CA ConfigMap, so that theirs are filled
// as the reconciler reconciles each job.
func TestProgressReports(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	in := installFor(t, ns)
	// A CA ConfigMap of no job with workloads is filled by the fill of
	// every one only: once it is, that fill has listed them all.
	early := progressJob{ns: ns, name: "early"}
	early.createCA(t)
	r := startReconciler(t, ns)
	early.ca(t)
	pi, other := progressJob{ns: ns, name: "pi"}, progressJob{ns: ns, name: "other"}
	pi.create(t)
	other.create(t)
	c := progressClient(t, pi, in)
	pod := pi.pod(t)
	token := podToken(t, pod, progress.Audience)

	report := `{"trainerStatus":{"progressPercentage":45,"estimatedRemainingSeconds":795,"metrics":[{"name":"loss","value":"0.23"},{"name":"phase","value":"warmup"}],"lastUpdatedTime":"2026-01-02T03:04:05Z"}}`
	code, body := post(t, c, r, pi.url(), token, report)
	if code != http.StatusOK {
		t.Fatalf("the job's own pod: %d %s", code, body)
	}
	var echoed, sent map[string]any
	if json.Unmarshal([]byte(body), &echoed) != nil || json.Unmarshal([]byte(report), &sent) != nil || fmt.Sprint(echoed) != fmt.Sprint(sent) {
		t.Errorf("200 echoes the report: got %s", body)
	}
	want := `{"progressPercentage":45,"estimatedRemainingSeconds":795,"metrics":[{"name":"loss","value":"0.23"},{"name":"phase","value":"warmup"}],"lastUpdatedTime":"2026-01-02T03:04:05Z"}`
	eventually(t, "the report on "+pi.name+"-worker", func(ctx context.Context) error {
		w, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, pi.name+"-worker", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := w.Annotations[handoff.TrainerStatus]; got != want {
			return fmt.Errorf("%s is %q", handoff.TrainerStatus, got)
		}
		return nil
	})
	eventually(t, "the report's metrics", func(ctx context.Context) error {
		for name, want := range map[string]float64{"trainfn_job_progress_percentage": 45, "trainfn_job_estimated_remaining_seconds": 795, "trainfn_job_reported_metric": 0.23} {
			got, err := r.metric(ctx, name, "namespace", ns, "kind", handoff.PyTorchJobKind, "job", pi.name)
			if err != nil || got != want {
				return fmt.Errorf("%s is %v, want %v (%v)", name, got, want, err)
			}
		}
		return nil
	})

	otherPod := other.pod(t)
	for name, c2 := range map[string]struct {
		path, token string
		code        int
	}{
		"another job's pod":            {pi.url(), podToken(t, otherPod, progress.Audience), http.StatusForbidden},
		"a token for the API server":   {pi.url(), podToken(t, pod), http.StatusForbidden},
		"a token for another audience": {pi.url(), podToken(t, pod, "trainfn-di-server"), http.StatusForbidden},
		"no token":                     {pi.url(), "", http.StatusForbidden},
		"another kind of the same name": {strings.Replace(pi.url(), "kubeflow.org/v1/namespaces/"+ns+"/pytorchjobs",
			"trainer.kubeflow.org/v1alpha1/namespaces/"+ns+"/trainjobs", 1), token, http.StatusForbidden},
		"another namespace": {strings.Replace(pi.url(), "/namespaces/"+ns+"/", "/namespaces/default/", 1), token, http.StatusNotFound},
		"an unknown path":   {"/apis/kubeflow.org/v1/namespaces/" + ns + "/tfjobs/pi/status", token, http.StatusNotFound},
	} {
		code, body := post(t, c, r, c2.path, c2.token, report)
		var s metav1.Status
		if code != c2.code || json.Unmarshal([]byte(body), &s) != nil || s.Kind != "Status" {
			t.Errorf("%s: got %d %s, want %d with a Status", name, code, body, c2.code)
		}
	}
	code, body = post(t, c, r, pi.url(), token, `{"trainerStatus":{"progressPercentage":101,"lastUpdatedTime":"2026-01-02T03:04:06Z"}}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "trainerStatus.progressPercentage") {
		t.Errorf("a progress over 100: got %d %s, want 422 naming the field", code, body)
	}
	code, body = post(t, c, r, pi.url(), token, `{"trainerStatus":{"lastUpdatedTime":"2026-01-02T03:04:06Z"},"pad":"`+string(bytes.Repeat([]byte("x"), progress.MaxBody))+`"}`)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 64 KiB: got %d %s", code, body)
	}
	// Past the job's burst, 429 with Retry-After; the one review of the
	// token served every report.
	throttled := 0
	for range progress.JobBurst + 2 {
		if code, _ := post(t, c, r, pi.url(), token, `{}`); code == http.StatusTooManyRequests {
			throttled++
		}
	}
	if throttled == 0 {
		t.Errorf("%d reports at once: none answered 429", progress.JobBurst+2)
	}
	ctx, cancel := timeout()
	defer cancel()
	for code, least := range map[string]float64{"200": 1, "403": 5, "404": 2, "413": 1, "422": 1, "429": 1} {
		if got, err := r.metric(ctx, "trainfn_progress_reports_total", "code", code); err != nil || got < least {
			t.Errorf("trainfn_progress_reports_total{code=%q} is %v, want at least %v (%v)", code, got, least, err)
		}
	}
}
