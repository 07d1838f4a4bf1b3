package progress

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

var testJob = observed.Key{Namespace: "team", Kind: handoff.PyTorchJobKind, Name: "pi"}

// workerJob is testJob's workers' Job, of first rank 0, with annotations.
func workerJob(annotations map[string]string) *batchv1.Job {
	l := handoff.RoleLabels(testJob.Name, handoff.RoleWorker)
	l[handoff.KindLabel] = testJob.Kind
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[handoff.FirstRank] = "0"
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: testJob.Namespace, Name: testJob.Name + "-worker", Labels: l, Annotations: annotations}}
}

// fakeCluster stands in for the API server in unit tests of what the
// server decides to write; the e2e test (test/reconcile) runs the same
// writes against a real API server, under the chart's roles.
func fakeCluster(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithObjects(objs...).Build()
}

func report(percent int32, at time.Time) *TrainerStatus {
	return &TrainerStatus{ProgressPercentage: ptr.To(percent), LastUpdatedTime: metav1.NewTime(at)}
}

func recorded(t *testing.T, c client.Client) string {
	t.Helper()
	var j batchv1.Job
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: testJob.Namespace, Name: testJob.Name + "-worker"}, &j))
	return j.Annotations[handoff.TrainerStatus]
}

// A report dated by a clock running ahead does not keep later reports
// out: the one accepted last is written, whatever the pods' clocks say.
func TestRecorderWritesTheReportAcceptedLast(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ahead := string(mustJSON(t, report(10, now.Add(24*time.Hour))))
	c := fakeCluster(workerJob(map[string]string{handoff.TrainerStatus: ahead}))
	r := newRecorder(c, write.Writer{Client: c, Writes: writes()}, WriteInterval, logr.Discard(), func() time.Time { return now })
	later := report(20, now)
	require.NoError(t, r.write(context.Background(), testJob, later))
	assert.JSONEq(t, string(mustJSON(t, later)), recorded(t, c))
}

// Two reports inside one interval cost one write, of the later; the next
// report waits for the end of the interval.
func TestRecorderCoalescesReportsOfAnInterval(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	c := fakeCluster(workerJob(nil))
	w := writes()
	r := newRecorder(c, write.Writer{Client: c, Writes: w}, WriteInterval, logr.Discard(), func() time.Time { return now })
	var delays []time.Duration
	var flushes []func()
	r.after = func(d time.Duration, f func()) { delays, flushes = append(delays, d), append(flushes, f) }
	r.start(context.Background())

	first, second := report(10, now), report(20, now)
	r.record(testJob, first)
	r.record(testJob, second)
	require.Len(t, flushes, 1, "two reports before a write schedule one")
	assert.Equal(t, time.Duration(0), delays[0], "a job's first report is written at once")
	flushes[0]()
	assert.JSONEq(t, string(mustJSON(t, second)), recorded(t, c))
	assert.Equal(t, 1.0, value(w.WithLabelValues("Job")))

	r.record(testJob, report(30, now))
	require.Len(t, flushes, 2)
	assert.Equal(t, WriteInterval, delays[1], "the next report waits an interval from the last write")
}

// A job's gauges follow its last report, and go with its workloads.
func TestMetricsCleanUp(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	gone := observed.Key{Namespace: "team", Kind: handoff.PyTorchJobKind, Name: "gone"}
	m.record(testJob, &TrainerStatus{ProgressPercentage: ptr.To[int32](45), EstimatedRemainingSeconds: ptr.To[int32](795),
		Metrics: []Metric{{Name: "loss", Value: "0.23"}, {Name: "phase", Value: "warmup"}}})
	m.record(gone, report(5, time.Now()))
	assert.Equal(t, 1, count(m.Reported), "only numeric metrics are gauges")
	assert.Equal(t, 2, count(m.Progress))

	// What a later report leaves out goes.
	m.record(testJob, &TrainerStatus{ProgressPercentage: ptr.To[int32](50)})
	assert.Equal(t, 0, count(m.Remaining))
	assert.Equal(t, 0, count(m.Reported))

	sweepOnce(context.Background(), m, fakeCluster(workerJob(nil)))
	assert.Equal(t, 1, count(m.Progress), "the job without workloads lost its gauges")
	assert.Equal(t, 50.0, value(m.Progress.WithLabelValues(testJob.Namespace, testJob.Kind, testJob.Name)))
	assert.Equal(t, []observed.Key{testJob}, m.reporting())
}

func writes() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trainfn_writes_total"}, []string{"kind"})
}

// count is how many series c has.
func count(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

// value is a gauge's or a counter's value.
func value(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		panic(err)
	}
	if out.Gauge != nil {
		return out.Gauge.GetValue()
	}
	return out.Counter.GetValue()
}

// The recorder writes a report on the workload phase.FirstWorkload names,
// which is where `trainfn status` reads it (phase.RecordedAnnotation),
// whatever the others carry.
func TestRecorderWritesWhereStatusReads(t *testing.T) {
	labels := func() map[string]string {
		l := handoff.JobLabels(testJob.Name)
		l[handoff.KindLabel] = testJob.Kind
		return l
	}
	meta := func(name, rank string) metav1.ObjectMeta {
		a := map[string]string{handoff.TrainerStatus: `{"progressPercentage":1,"lastUpdatedTime":"2026-01-01T00:00:00Z"}`}
		if rank != "" {
			a[handoff.FirstRank] = rank
		}
		return metav1.ObjectMeta{Namespace: testJob.Namespace, Name: name, Labels: labels(), Annotations: a}
	}
	for name, objs := range map[string][]client.Object{
		"the launcher before the workers":        {&batchv1.Job{ObjectMeta: meta("pi-worker", "")}, &batchv1.Job{ObjectMeta: meta("pi-launcher", "")}},
		"a Job before a StatefulSet of its name": {&appsv1.StatefulSet{ObjectMeta: meta("pi-worker", "")}, &batchv1.Job{ObjectMeta: meta("pi-worker", "")}},
		"rank 0, whatever its name":              {&batchv1.Job{ObjectMeta: meta("pi-a", "1")}, &appsv1.StatefulSet{ObjectMeta: meta("pi-b", "0")}},
		"of two of rank 0, the first by name":    {&batchv1.Job{ObjectMeta: meta("pi-b", "0")}, &batchv1.Job{ObjectMeta: meta("pi-a", "0")}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fakeCluster(objs...)
			now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
			r := newRecorder(c, write.Writer{Client: c, Writes: writes()}, WriteInterval, logr.Discard(), func() time.Time { return now })
			s := report(77, now)
			require.NoError(t, r.write(context.Background(), testJob, s))

			var objs phase.Objects
			var jobs batchv1.JobList
			var sets appsv1.StatefulSetList
			require.NoError(t, c.List(context.Background(), &jobs))
			require.NoError(t, c.List(context.Background(), &sets))
			objs.Jobs, objs.StatefulSets = jobs.Items, sets.Items
			want := string(mustJSON(t, s))
			assert.Equal(t, want, phase.FirstWorkload(objs).GetAnnotations()[handoff.TrainerStatus])
			assert.Equal(t, want, phase.RecordedAnnotation(objs, handoff.TrainerStatus, func(string) bool { return true }))
		})
	}
}
