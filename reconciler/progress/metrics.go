package progress

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainfn/trainfn/reconciler/observed"
)

// Metrics are the last report of each job, as Prometheus gauges, and the
// reports answered. A job's gauges go when its workloads do (see forget).
type Metrics struct {
	Progress  *prometheus.GaugeVec
	Remaining *prometheus.GaugeVec
	Reported  *prometheus.GaugeVec
	Reports   *prometheus.CounterVec

	mu   sync.Mutex
	jobs map[observed.Key]bool
}

// NewMetrics makes the metrics and registers them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	job := []string{"namespace", "kind", "job"}
	m := &Metrics{
		Progress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trainfn_job_progress_percentage", Help: "A job's progress, in percent, as its last report said."}, job),
		Remaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trainfn_job_estimated_remaining_seconds", Help: "A job's estimated time to completion, as its last report said."}, job),
		Reported: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trainfn_job_reported_metric", Help: "A metric of a job's last report, when its value is a number."},
			append(job, "name")),
		Reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainfn_progress_reports_total", Help: "Progress reports answered, by HTTP status."}, []string{"code"}),
		jobs: map[observed.Key]bool{},
	}
	reg.MustRegister(m.Progress, m.Remaining, m.Reported, m.Reports)
	return m
}

func (m *Metrics) answered(code int) {
	m.Reports.WithLabelValues(strconv.Itoa(code)).Inc()
}

// record sets a job's gauges to its report: what the report leaves out
// goes, as Trainer's status would lose it.
func (m *Metrics) record(key observed.Key, s *TrainerStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	labels := prometheus.Labels{"namespace": key.Namespace, "kind": key.Kind, "job": key.Name}
	m.deleteLocked(labels)
	m.jobs[key] = true
	if s.ProgressPercentage != nil {
		m.Progress.With(labels).Set(float64(*s.ProgressPercentage))
	}
	if s.EstimatedRemainingSeconds != nil {
		m.Remaining.With(labels).Set(float64(*s.EstimatedRemainingSeconds))
	}
	for _, metric := range s.Metrics {
		if v, err := strconv.ParseFloat(metric.Value, 64); err == nil {
			m.Reported.WithLabelValues(key.Namespace, key.Kind, key.Name, metric.Name).Set(v)
		}
	}
}

// reporting are the jobs that have gauges.
func (m *Metrics) reporting() []observed.Key {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]observed.Key, 0, len(m.jobs))
	for k := range m.jobs {
		out = append(out, k)
	}
	return out
}

// forget removes a job's gauges.
func (m *Metrics) forget(key observed.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.jobs, key)
	m.deleteLocked(prometheus.Labels{"namespace": key.Namespace, "kind": key.Kind, "job": key.Name})
}

func (m *Metrics) deleteLocked(labels prometheus.Labels) {
	m.Progress.DeletePartialMatch(labels)
	m.Remaining.DeletePartialMatch(labels)
	m.Reported.DeletePartialMatch(labels)
}
