package jobphase

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainfn/trainfn/status/phase"
)

// Metrics count the transitions Record writes, named after
// training-operator's (training_operator_jobs_*_total) and mpi-operator's
// (mpi_operator_jobs_*_total). Each transition is written once in the
// cluster, so it is counted once: by the replica that wrote it.
type Metrics struct {
	Created, Successful, Failed, Restarted *prometheus.CounterVec
	TimeToStart                            *prometheus.HistogramVec
}

// NewMetrics makes the counters and registers them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"namespace", "kind"})
	}
	m := &Metrics{
		Created:    counter("trainfn_jobs_created_total", "Runs of jobs begun: jobs the reconciler saw for the first time, or saw run again after they ended."),
		Successful: counter("trainfn_jobs_successful_total", "Jobs that reached Succeeded."),
		Failed:     counter("trainfn_jobs_failed_total", "Jobs that reached Failed."),
		Restarted:  counter("trainfn_jobs_restarted_total", "Jobs that reached Restarting: a pod restarted or replaced, or one lost after the job ran."),
		TimeToStart: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "trainfn_job_time_to_start_seconds",
			Help:    "From the job's first workload's creation to the job's reaching Running, not from Restarting.",
			Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600},
		}, []string{"kind"}),
	}
	reg.MustRegister(m.Created, m.Successful, m.Failed, m.Restarted, m.TimeToStart)
	return m
}

// observe counts a transition Record wrote. sinceCreation is how long ago
// the job's first workload was created.
func (m *Metrics) observe(namespace string, t Transition, sinceCreation time.Duration) {
	if t.Starts() {
		m.Created.WithLabelValues(namespace, t.Kind).Inc()
	}
	switch t.To.Phase {
	case phase.Succeeded:
		m.Successful.WithLabelValues(namespace, t.Kind).Inc()
	case phase.Failed:
		m.Failed.WithLabelValues(namespace, t.Kind).Inc()
	case phase.Restarting:
		m.Restarted.WithLabelValues(namespace, t.Kind).Inc()
	}
	if t.FirstRun() {
		m.TimeToStart.WithLabelValues(t.Kind).Observe(max(sinceCreation, 0).Seconds())
	}
}
