//go:build e2e

package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// diJob is a preemptible DIJob in v1.0's shape, as DI-engine users
// write it.
type diJob struct {
	Name, Topology string
	Min, Max       int
	// CPU is what each worker requests, in cores; none when zero.
	CPU int
	// Node, when set, is the only node the workers may run on.
	Node string
}

var diJobTemplate = template.Must(template.New("").Parse(`apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: {{.Name}}
spec:
  preemptible: true
  minReplicas: {{.Min}}
  maxReplicas: {{.Max}}
  engineFields:
    topology: {{.Topology}}
    parallelWorkers: 2
  template:
    spec:
{{- with .Node}}
      nodeSelector:
        kubernetes.io/hostname: {{.}}
{{- end}}
      containers:
      - name: di-container
        image: opendilab/ding:v0.4
        command: ["/bin/bash", "-c"]
        args: ["ditask --main main $DI_PARALLEL_WORKERS_ARG $DI_PORTS_ARG $DI_NODE_IDS_ARG $DI_ATTACHED_NODES_ARG"]
{{- if .CPU}}
        resources:
          requests:
            cpu: "{{.CPU}}"
{{- end}}
`))

func (j diJob) String() string {
	var b strings.Builder
	if err := diJobTemplate.Execute(&b, j); err != nil {
		panic(err)
	}
	return b.String()
}

// diServer is the DI server API of one reconciler, as a DI-engine worker
// calls it: from the address of one of its job's pods, which the server
// requires (the cluster's pods take loopback addresses, see TestMain).
type diServer struct {
	base  string
	jobID string
	// from is the job whose pod the requests come from.
	from *job
}

func (j *job) diServer(r *replica) diServer {
	return diServer{base: "http://" + r.diServer, jobID: j.ns + "." + j.name + ".1", from: j}
}

// envelope is the DI server's answer.
type envelope struct {
	Success bool            `json:"success"`
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// caller is the address of the caller's running pod of the lowest index,
// which a scale-down keeps, once it has one.
func (d diServer) caller(t *testing.T) string {
	t.Helper()
	var ip string
	eventually(t, d.from.name+" has a running pod with an address", func(ctx context.Context) error {
		pods, err := d.from.pods(ctx, handoff.RoleWorker)
		if err != nil {
			return err
		}
		lowest := -1
		for _, p := range pods {
			if running(&p) && p.Status.PodIP != "" && (lowest < 0 || podIndex(p) < lowest) {
				ip, lowest = p.Status.PodIP, podIndex(p)
			}
		}
		if lowest < 0 {
			return fmt.Errorf("none: %s", describe(pods))
		}
		return nil
	})
	return ip
}

// call sends a request to the DI server and returns the HTTP status and
// the envelope.
func (d diServer) call(t *testing.T, method, path, body string) (int, envelope) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(d.caller(t))}}
	c := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s %s: %s is not the API's envelope: %v", method, path, raw, err)
	}
	return resp.StatusCode, e
}

func (d diServer) replicas() string   { return "/v2alpha1/" + d.jobID + "/replicas" }
func (d diServer) profilings() string { return "/v2alpha1/" + d.jobID + "/profilings" }

// resize asks the DI server for n more (n > 0) or fewer workers.
func (d diServer) resize(t *testing.T, n int) {
	t.Helper()
	method, count := http.MethodPost, n
	if n < 0 {
		method, count = http.MethodDelete, -n
	}
	if status, e := d.call(t, method, d.replicas(), fmt.Sprintf(`{"replicas": %d}`, count)); status != http.StatusOK || !e.Success {
		t.Fatalf("%s %d workers: %d %+v", method, count, status, e)
	}
}

// waitAddresses waits until the DI server lists the running workers'
// pod IPs, port 22270, in rank order.
func (j *job) waitAddresses(t *testing.T, d diServer, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("the DI server lists %d workers", n), func(ctx context.Context) error {
		pods, err := j.pods(ctx, handoff.RoleWorker)
		if err != nil {
			return err
		}
		slices.SortFunc(pods, func(a, b corev1.Pod) int { return podIndex(a) - podIndex(b) })
		var want []string
		for _, p := range pods {
			if running(&p) && p.DeletionTimestamp == nil && p.Status.PodIP != "" && podIndex(p) < n {
				want = append(want, fmt.Sprintf("%s:%d", p.Status.PodIP, handoff.DIPort))
			}
		}
		if len(want) != n {
			return fmt.Errorf("%d workers running: %s", len(want), describe(pods))
		}
		status, e := d.call(t, http.MethodGet, d.replicas(), "")
		var got []string
		if status != http.StatusOK || json.Unmarshal(e.Data, &got) != nil {
			return fmt.Errorf("GET: %d %+v", status, e)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("GET lists %v, want %v", got, want)
		}
		return nil
	})
}

// checkPinned checks that every worker runs on the node the allocator
// recorded for its index, that no pod still waits at the gate, and that
// the workers of indexes from on were pinned to their node: those below
// started before an allocator ran.
func (j *job) checkPinned(t *testing.T, from int) {
	t.Helper()
	s := j.liveStatefulSet(t)
	ctx, cancel := timeout()
	defer cancel()
	var allocation []string
	if err := json.Unmarshal([]byte(s.Annotations[handoff.Allocation]), &allocation); err != nil {
		t.Fatalf("annotation %s %q: %v", handoff.Allocation, s.Annotations[handoff.Allocation], err)
	}
	t.Logf("%s: allocated %v", j.name, allocation)
	pods, err := j.pods(ctx, handoff.RoleWorker)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		i := podIndex(p)
		if len(p.Spec.SchedulingGates) > 0 {
			t.Errorf("pod %s is still gated: %v", p.Name, p.Spec.SchedulingGates)
		}
		switch {
		case i >= len(allocation) || allocation[i] == "":
			t.Errorf("pod %s has no node allocated: %v", p.Name, allocation)
		case i >= from && pinnedNode(&p) != allocation[i]:
			t.Errorf("pod %s is pinned to %q, allocated %s", p.Name, pinnedNode(&p), allocation[i])
		case p.Spec.NodeName != "" && p.Spec.NodeName != allocation[i]:
			t.Errorf("pod %s runs on %s, allocated %s", p.Name, p.Spec.NodeName, allocation[i])
		}
	}
}

// pinnedNode is the node a pod's required node affinity names by field.
func pinnedNode(p *corev1.Pod) string {
	if p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil || p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// waitPhase waits until the reconciler records the job's phase.
func (j *job) waitPhase(t *testing.T, want string) {
	t.Helper()
	eventually(t, "phase "+want, func(ctx context.Context) error {
		s, err := j.statefulSet(ctx)
		if err != nil {
			return err
		}
		if got := s.Annotations[handoff.Phase]; got != want {
			return fmt.Errorf("phase %q", got)
		}
		return nil
	})
}

// TestDIJobScalesThroughTheDIServer starts a star and a mesh job, grows and
// shrinks each through the DI server as DI-engine would, and replaces the
// reconciler midway: the new one finds the counts the old one left.
func TestDIJobScalesThroughTheDIServer(t *testing.T) {
	t.Parallel()
	for _, topology := range []string{"star", "mesh"} {
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			ns := kube.Namespace(t)
			j := deploy(t, ns, diJob{Name: topology, Topology: topology, Min: 2, Max: 5})
			// No allocator: the DI server alone changes the count.
			r := startReconciler(t, ns, "--scheduling-period=0")
			d := j.diServer(r)
			j.waitReplicas(t, 2)
			j.waitAddresses(t, d, 2)
			j.waitPhase(t, "Running")
			j.keep(t, 2)

			d.resize(t, 2)
			j.waitReplicas(t, 4)
			j.waitAddresses(t, d, 4)
			d.resize(t, -1)
			j.waitReplicas(t, 3)
			j.waitAddresses(t, d, 3)

			r.kill()
			r = startReconciler(t, ns, "--scheduling-period=0")
			d = j.diServer(r)
			j.waitAddresses(t, d, 3)
			d.resize(t, 1)
			j.waitReplicas(t, 4)
			j.waitAddresses(t, d, 4)
			j.waitPhase(t, "Running")
			j.checkInvariants(t)
		})
	}
}

// TestDIServerRefusesBadRequests sends what a confused client might, and
// checks each gets its status and changes nothing.
func TestDIServerRefusesBadRequests(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	j := deploy(t, ns, diJob{Name: "refused", Topology: "star", Min: 2, Max: 3})
	fixed := deploy(t, ns, specString(`apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: fixed
spec:
  minReplicas: 2
  template:
    spec:
      containers:
      - name: di-container
        image: opendilab/ding:v0.4
        command: [ditask]
`))
	r := startReconciler(t, ns, "--scheduling-period=0")
	d, fromFixed := j.diServer(r), fixed.diServer(r)
	j.waitReplicas(t, 2)
	j.waitAddresses(t, d, 2)
	// The StatefulSet's status and phase change as its pods do; its spec
	// (generation) and profilings are what a request could change.
	before := j.liveStatefulSet(t)

	for _, c := range []struct {
		name               string
		d                  diServer
		method, path, body string
		status             int
	}{
		{"above the maximum", d, http.MethodPost, d.replicas(), `{"replicas": 2}`, http.StatusUnprocessableEntity},
		{"below the minimum", d, http.MethodDelete, d.replicas(), `{"replicas": 1}`, http.StatusUnprocessableEntity},
		{"malformed body", d, http.MethodPost, d.replicas(), `{"replicas": "two"}`, http.StatusBadRequest},
		{"no body", d, http.MethodPost, d.replicas(), ``, http.StatusBadRequest},
		{"unknown field", d, http.MethodPost, d.replicas(), `{"replica": 1}`, http.StatusBadRequest},
		{"zero", d, http.MethodPost, d.replicas(), `{"replicas": 0}`, http.StatusBadRequest},
		// Only a job's own pods may call about it: one that does not
		// exist has none, and the fixed job's may not resize this one.
		{"unknown job", d, http.MethodGet, "/v2alpha1/" + ns + ".nosuch.1/replicas", ``, http.StatusForbidden},
		{"another job's pod", fromFixed, http.MethodPost, d.replicas(), `{"replicas": 1}`, http.StatusForbidden},
		{"other generation", d, http.MethodGet, "/v2alpha1/" + ns + ".refused.2/replicas", ``, http.StatusNotFound},
		{"malformed job id", d, http.MethodGet, "/v2alpha1/refused/replicas", ``, http.StatusBadRequest},
		{"not preemptible", fromFixed, http.MethodPost, fromFixed.replicas(), `{"replicas": 1}`, http.StatusConflict},
		{"profilings not an object", d, http.MethodPost, d.profilings(), `{"data": [1, 2]}`, http.StatusBadRequest},
		{"method", d, http.MethodPut, d.replicas(), `{"replicas": 1}`, http.StatusMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, e := c.d.call(t, c.method, c.path, c.body)
			if status != c.status || e.Success || e.Message == "" {
				t.Errorf("%d %+v, want %d with a message", status, e, c.status)
			}
		})
	}
	after := j.liveStatefulSet(t)
	if after.Generation != before.Generation || after.Annotations[handoff.Profilings] != before.Annotations[handoff.Profilings] {
		t.Errorf("a refused request changed the StatefulSet: generation %d, was %d; profilings %q, were %q",
			after.Generation, before.Generation, after.Annotations[handoff.Profilings], before.Annotations[handoff.Profilings])
	}
	ctx, cancel := timeout()
	defer cancel()
	w, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, fixed.name+"-worker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *w.Spec.Parallelism != 2 {
		t.Errorf("the fixed job's Job runs %d workers, want 2", *w.Spec.Parallelism)
	}
}

// TestAllocatorRebalances runs two preemptible jobs that share the
// cluster's room: 4 nodes of 64 cores, workers of 32, so 8 workers in all.
// Profiled through the DI server, one job scales linearly and the other
// not past 2 workers: the allocator gives the first the room the second
// cannot use, and pins every new worker to the node it chose. The test
// runs alone, since the room it counts is every node's.
func TestAllocatorRebalances(t *testing.T) {
	ns := kube.Namespace(t)
	t.Cleanup(func() { drain(t, ns) })
	linear := deploy(t, ns, diJob{Name: "linear", Topology: "mesh", Min: 1, Max: 8, CPU: 32})
	flat := deploy(t, ns, diJob{Name: "flat", Topology: "star", Min: 1, Max: 8, CPU: 32})

	// First without the allocator: the DI server sets the counts that
	// the jobs report their throughput at.
	r := startReconciler(t, ns, "--scheduling-period=0")
	dl, df := linear.diServer(r), flat.diServer(r)
	linear.waitAddresses(t, dl, 1)
	flat.waitAddresses(t, df, 1)
	profile := func(d diServer, throughput float64) {
		t.Helper()
		body := fmt.Sprintf(`{"data": {"throughput": %g, "step": 100}}`, throughput)
		if status, e := d.call(t, http.MethodPost, d.profilings(), body); status != http.StatusOK {
			t.Fatalf("POST profilings: %d %+v", status, e)
		}
	}
	profile(dl, 10)
	profile(df, 9)
	dl.resize(t, 1)
	df.resize(t, 3)
	linear.waitAddresses(t, dl, 2)
	flat.waitAddresses(t, df, 4)
	profile(dl, 20)
	profile(df, 10)
	linear.keep(t, 1)
	flat.keep(t, 1)

	r.stop()
	startReconciler(t, ns, "--scheduling-period=1s")
	eventually(t, "the allocator's rebalance", func(ctx context.Context) error {
		l, err := linear.statefulSet(ctx)
		if err != nil {
			return err
		}
		f, err := flat.statefulSet(ctx)
		if err != nil {
			return err
		}
		nl, nf := *l.Spec.Replicas, *f.Spec.Replicas
		if nl+nf > 8 {
			return giveUp(fmt.Errorf("%d + %d workers allocated on room for 8", nl, nf))
		}
		if nl <= 4 || nf >= 4 {
			return fmt.Errorf("linear %d, flat %d workers", nl, nf)
		}
		return nil
	})
	started := map[*job]int{linear: 2, flat: 4}
	for _, j := range []*job{linear, flat} {
		l := j.liveStatefulSet(t)
		t.Logf("%s: %d workers on %s", j.name, *l.Spec.Replicas, l.Annotations[handoff.Allocation])
		j.waitRunning(t, handoff.RoleWorker, int(*l.Spec.Replicas))
		j.checkPinned(t, started[j])
		j.checkInvariants(t)
	}
	checkRoom(t, ns)
}

// TestAllocatorPlacesJobsAppliedTogether applies four jobs at once, as a
// GitOps sync does, that fill the cluster's room exactly: 4 nodes of 64
// cores, 2 workers of 32 cores each. Placed one after the other, each
// must count the room the others were given before their pods are bound.
func TestAllocatorPlacesJobsAppliedTogether(t *testing.T) {
	ns := kube.Namespace(t)
	t.Cleanup(func() { drain(t, ns) })
	var jobs []*job
	for _, name := range []string{"c0", "c1", "c2", "c3"} {
		jobs = append(jobs, deploy(t, ns, diJob{Name: name, Topology: "star", Min: 2, Max: 2, CPU: 32}))
	}
	startReconciler(t, ns, "--scheduling-period=1s")
	for _, j := range jobs {
		j.waitRunning(t, handoff.RoleWorker, 2)
		j.checkPinned(t, 0)
	}
	checkRoom(t, "")
	checkNoneReplaced(t, ns)
}

// checkNoneReplaced checks that the allocator replaced no pod stuck on its
// node: each was pinned to room that was free.
func checkNoneReplaced(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	events, err := kube.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "Replaced" {
			t.Errorf("%s %s: %s", e.Regarding.Kind, e.Regarding.Name, e.Note)
		}
	}
}

// TestAllocatorKeepsToTheTemplatesNodes places a job whose template
// allows one node only, beside another namespace's pod that fills another
// node: the allocator pins workers where the scheduler may put them, and
// counts every pod of the cluster, not only the namespaces it watches.
func TestAllocatorKeepsToTheTemplatesNodes(t *testing.T) {
	ns, other := kube.Namespace(t), kube.Namespace(t)
	t.Cleanup(func() { drain(t, ns); drain(t, other) })
	ctx, cancel := timeout()
	defer cancel()
	big := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec: corev1.PodSpec{NodeName: "kwok-node-0", Containers: []corev1.Container{{
			Name: "c", Image: "registry.example/big:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}},
		}}},
	}
	if _, err := kube.Client.CoreV1().Pods(other).Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The job that may run on one node only comes first: the best fit on
	// the room alone would be the first node with room, kwok-node-1.
	pinned := deploy(t, ns, diJob{Name: "pinned", Topology: "star", Min: 2, Max: 2, CPU: 32, Node: "kwok-node-3"})
	// The chart installed to watch every namespace, as by default, so
	// that the allocator may count another namespace's pod; the
	// reconciler itself kept to this test's namespace.
	everywhere := install(t, "a-"+ns, ns, "--set", "diJobs.enabled=true")
	startReconcilerAs(t, everywhere, ns, "--scheduling-period=1s")
	pinned.waitReplicas(t, 2)
	spread := deploy(t, ns, diJob{Name: "spread", Topology: "star", Min: 3, Max: 3, CPU: 32})
	for j, n := range map[*job]int{pinned: 2, spread: 3} {
		for _, p := range j.waitRunning(t, handoff.RoleWorker, n) {
			if j == pinned && p.Spec.NodeName != "kwok-node-3" {
				t.Errorf("pod %s runs on %s, not on the only node its template allows", p.Name, p.Spec.NodeName)
			}
			if p.Spec.NodeName == "kwok-node-0" {
				t.Errorf("pod %s runs on kwok-node-0, which another namespace's pod fills", p.Name)
			}
		}
		j.checkPinned(t, 0)
	}
	checkRoom(t, "")
}

// TestAllocatorPlacesWorkersAddedAfterAScaleDown shrinks a job through the
// DI server, lets another job take the room, and grows the first again:
// its new worker goes where there is room now, not where its old one ran.
func TestAllocatorPlacesWorkersAddedAfterAScaleDown(t *testing.T) {
	ns := kube.Namespace(t)
	t.Cleanup(func() { drain(t, ns) })
	a := deploy(t, ns, diJob{Name: "a", Topology: "star", Min: 1, Max: 4, CPU: 32})
	// A long period: the placements of new workers are under test, not
	// the periods' rebalancing.
	r := startReconciler(t, ns, "--scheduling-period=1h")
	d := a.diServer(r)
	a.waitAddresses(t, d, 1)
	d.resize(t, 2)
	a.waitRunning(t, handoff.RoleWorker, 3)
	d.resize(t, -2)
	a.waitPods(t, handoff.RoleWorker, "a-worker-0(Running,ready)")
	b := deploy(t, ns, diJob{Name: "b", Topology: "star", Min: 6, Max: 6, CPU: 32})
	b.waitRunning(t, handoff.RoleWorker, 6)
	d.resize(t, 1)
	a.waitRunning(t, handoff.RoleWorker, 2)
	for _, j := range []*job{a, b} {
		j.checkPinned(t, 0)
	}
	checkRoom(t, "")
}

// drain deletes a namespace's StatefulSets and bare pods and waits until
// their pods are gone, so that the room they took is free for the next
// test: the namespace itself goes later, and slowly.
func drain(t *testing.T, ns string) {
	ctx, cancel := timeout()
	defer cancel()
	policy := metav1.DeletePropagationForeground
	_ = kube.Client.AppsV1().StatefulSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy}, metav1.ListOptions{})
	_ = kube.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	eventually(t, "the pods of "+ns+" gone", func(ctx context.Context) error {
		pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("pods %s", describe(pods.Items))
		}
		return nil
	})
}

// checkRoom checks that no node runs more cores than it has, counting the
// pods of a namespace, or all namespaces for "".
func checkRoom(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int64{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !finished(&p) {
			for _, c := range p.Spec.Containers {
				used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
			}
		}
	}
	for node, m := range used {
		if m > 64000 {
			t.Errorf("node %s runs %d millicores of workers, more than its 64 cores", node, m)
		}
	}
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
