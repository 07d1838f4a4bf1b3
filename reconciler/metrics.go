package reconciler

import (
	"encoding/json"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Metrics are what the reconciler counts, beside controller-runtime's own
// (reconcile durations, work queue depth, API client requests).
type Metrics struct {
	Reconciles       prometheus.Counter
	Writes           *prometheus.CounterVec
	DiscoveryWrites  prometheus.Counter
	DiscoveryLatency prometheus.Histogram
	Scales           *prometheus.CounterVec
	CleanUps         *prometheus.CounterVec
	SSHSecrets       prometheus.Counter
}

// NewMetrics makes the metrics and registers them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
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

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.Pod:
		return "Pod"
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *batchv1.Job:
		return "Job"
	}
	return "other"
}

// mustJSON encodes a patch built from maps, strings and numbers, which
// cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
