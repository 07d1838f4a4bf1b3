package jobphase

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/status/phase"
)

// kinds are the kinds of job spec trainfn renders, as their workloads'
// kind label names them.
var kinds = []string{"MPIJob", "PyTorchJob", "DIJob", "TrainJob"}

// counts are what one transition adds to each counter, and whether it
// observes the time to start.
type counts struct {
	created, successful, failed, restarted float64
	started                                bool
}

func summary(p phase.Phase, reason string) phase.Summary {
	return phase.Summary{Phase: p, Reason: reason, Message: string(p) + " because " + reason}
}

// TestTransitions holds each change of phase to the events it emits, in
// order, and the counters it moves, for every kind.
func TestTransitions(t *testing.T) {
	const (
		normal  = corev1.EventTypeNormal
		warning = corev1.EventTypeWarning
	)
	cases := []struct {
		name    string
		from    phase.Phase
		to      phase.Summary
		resumed bool
		want    []string // type/suffix
		counts  counts
	}{
		{"first seen, pods missing", "", summary(phase.Pending, phase.ReasonPodsMissing), false, []string{normal + "/Created"}, counts{created: 1}},
		{"first seen, suspended", "", summary(phase.Pending, phase.ReasonSuspended), false, []string{normal + "/Created", normal + "/Suspended"}, counts{created: 1}},
		{"first seen, already running", "", summary(phase.Running, phase.ReasonAllReady), false, []string{normal + "/Created", normal + "/Running"}, counts{created: 1, started: true}},
		{"first seen, resumed before", "", summary(phase.Starting, phase.ReasonPodsStarting), true, []string{normal + "/Created"}, counts{created: 1}},
		{"first seen, ended", "", summary(phase.Failed, phase.ReasonJobFailed), false, []string{normal + "/Created", warning + "/Failed"}, counts{created: 1, failed: 1}},
		{"pods placed", phase.Pending, summary(phase.Starting, phase.ReasonPodsStarting), false, nil, counts{}},
		{"a pod lost while starting", phase.Starting, summary(phase.Pending, phase.ReasonPodsMissing), false, nil, counts{}},
		{"every pod ready", phase.Starting, summary(phase.Running, phase.ReasonAllReady), false, []string{normal + "/Running"}, counts{started: true}},
		{"ready straight from pending", phase.Pending, summary(phase.Running, phase.ReasonAllReady), false, []string{normal + "/Running"}, counts{started: true}},
		{"a pod restarted", phase.Running, summary(phase.Restarting, phase.ReasonPodRestarted), false, []string{warning + "/Restarting"}, counts{restarted: 1}},
		{"running again", phase.Restarting, summary(phase.Running, phase.ReasonAllReady), false, []string{normal + "/Running"}, counts{}},
		{"suspended while running", phase.Running, summary(phase.Pending, phase.ReasonSuspended), false, []string{normal + "/Suspended"}, counts{}},
		{"resumed", phase.Pending, summary(phase.Starting, phase.ReasonPodsStarting), true, []string{normal + "/Resumed"}, counts{}},
		{"resumed and ready at once", phase.Pending, summary(phase.Running, phase.ReasonAllReady), true, []string{normal + "/Resumed", normal + "/Running"}, counts{started: true}},
		{"resumed Job, pending job restarting", phase.Pending, summary(phase.Restarting, phase.ReasonPodRestarted), true, []string{normal + "/Resumed", warning + "/Restarting"}, counts{restarted: 1}},
		{"a resumed Job does not resume a running job", phase.Running, summary(phase.Restarting, phase.ReasonWasRunning), true, []string{warning + "/Restarting"}, counts{restarted: 1}},
		{"succeeded", phase.Running, summary(phase.Succeeded, phase.ReasonEndingJobSucceeded), false, []string{normal + "/Succeeded"}, counts{successful: 1}},
		{"failed", phase.Restarting, summary(phase.Failed, phase.ReasonJobFailed), false, []string{warning + "/Failed"}, counts{failed: 1}},
		{"failed while pending, resumed Job", phase.Pending, summary(phase.Failed, phase.ReasonJobFailed), true, []string{warning + "/Failed"}, counts{failed: 1}},
		{"a new run after the end", phase.Succeeded, summary(phase.Pending, phase.ReasonWorkersNotSet), false, []string{normal + "/Created"}, counts{created: 1}},
		{"a new run, running at once", phase.Failed, summary(phase.Running, phase.ReasonAllReady), false, []string{normal + "/Created", normal + "/Running"}, counts{created: 1, started: true}},
	}
	for _, kind := range kinds {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				tr := Transition{Kind: kind, From: c.from, To: c.to, Resumed: c.resumed}
				got, want := tr.Events(), []Event(nil)
				for _, w := range c.want {
					typ, suffix, _ := strings.Cut(w, "/")
					want = append(want, Event{Type: typ, Reason: kind + suffix, Message: c.to.Message})
				}
				if len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
					t.Errorf("events\n%+v, want\n%+v", got, want)
				}

				reg := prometheus.NewRegistry()
				NewMetrics(reg).observe("ns", tr, 90*time.Second)
				families := gather(t, reg)
				counter := func(name string) float64 {
					return sample(t, families[name], "namespace", "ns", "kind", kind).GetCounter().GetValue()
				}
				gotCounts := counts{
					created:    counter("trainfn_jobs_created_total"),
					successful: counter("trainfn_jobs_successful_total"),
					failed:     counter("trainfn_jobs_failed_total"),
					restarted:  counter("trainfn_jobs_restarted_total"),
					started:    families["trainfn_job_time_to_start_seconds"] != nil,
				}
				if gotCounts != c.counts {
					t.Errorf("counts %+v, want %+v", gotCounts, c.counts)
				}
			})
		}
	}
}

// TestTimeToStart observes the time from the first workload's creation,
// under the job's kind.
func TestTimeToStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	NewMetrics(reg).observe("ns", Transition{Kind: "PyTorchJob", From: phase.Starting, To: summary(phase.Running, phase.ReasonAllReady)}, 90*time.Second)
	h := sample(t, gather(t, reg)["trainfn_job_time_to_start_seconds"], "kind", "PyTorchJob").GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 90 {
		t.Errorf("%d samples summing to %v, want one of 90", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 90 {
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

// gather reads a registry's metric families by name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	return byName
}

// sample is the family's sample with those labels, as name, value pairs;
// an empty one when it has none.
func sample(t *testing.T, f *dto.MetricFamily, labels ...string) *dto.Metric {
	t.Helper()
	for _, m := range f.GetMetric() {
		match := len(m.GetLabel())*2 == len(labels)
		for _, l := range m.GetLabel() {
			for i := 0; i+1 < len(labels); i += 2 {
				if l.GetName() == labels[i] && l.GetValue() != labels[i+1] {
					match = false
				}
			}
		}
		if match {
			return m
		}
	}
	return &dto.Metric{}
}

// TestMessageTruncated keeps an event's note within the API's limit, whole
// runes only, however long the phase's message (a scheduler's, say).
func TestMessageTruncated(t *testing.T) {
	long := strings.Repeat("é", noteLimit)
	events := Transition{Kind: "MPIJob", From: phase.Running, To: phase.Summary{Phase: phase.Failed, Message: long}}.Events()
	if len(events) != 1 {
		t.Fatalf("events %v", events)
	}
	note := events[0].Message
	if len(note) > noteLimit || !utf8.ValidString(note) || !strings.HasSuffix(note, "é...") {
		t.Errorf("note of %d bytes, valid UTF-8 %v, ends %q", len(note), utf8.ValidString(note), note[len(note)-8:])
	}
	short := "pod p is not scheduled"
	if got := truncate(short, noteLimit); got != short {
		t.Errorf("truncate(%q) = %q", short, got)
	}
}
