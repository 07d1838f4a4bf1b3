// Package metrics holds what the reconciler counts, beside
// controller-runtime's own (reconcile durations, work queue depth, API
// client requests); each concern counts its own part.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the reconciler's own metrics.
type Metrics struct {
	Reconciles       prometheus.Counter
	Writes           *prometheus.CounterVec
	DiscoveryWrites  prometheus.Counter
	DiscoveryLatency prometheus.Histogram
	Scales           *prometheus.CounterVec
	CleanUps         *prometheus.CounterVec
	SSHSecrets       prometheus.Counter
}

// New makes the metrics and registers them.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Reconciles: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trainfn_reconciles_total", Help: "Jobs reconciled."}),
		Writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainfn_writes_total", Help: "Writes to the API server, by kind of object."}, []string{"kind"}),
		DiscoveryWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trainfn_discovery_writes_total", Help: "Discovery scripts written."}),
		DiscoveryLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trainfn_discovery_latency_seconds",
			Help:    "From a worker pod becoming ready (to the second the API keeps) to the discovery script that lists it being written.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60},
		}),
		Scales: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainfn_scales_total", Help: "Worker replicas set: at start, or back within the job's bounds."}, []string{"reason"}),
		CleanUps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainfn_cleanups_total", Help: "Ended jobs whose workers were stopped, by cleanPodPolicy."}, []string{"policy"}),
		SSHSecrets: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trainfn_ssh_secrets_created_total", Help: "SSH Secrets created for jobs given none."}),
	}
	reg.MustRegister(m.Reconciles, m.Writes, m.DiscoveryWrites, m.DiscoveryLatency, m.Scales, m.CleanUps, m.SSHSecrets)
	return m
}
