package diserver

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count the DI server's work, for the reconciler's /metrics.
type Metrics struct {
	// Requests are answered requests, by route and HTTP status.
	Requests *prometheus.CounterVec
	// Workers are workers added or removed through the API.
	Workers *prometheus.CounterVec
}

// NewMetrics makes the metrics and registers them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainfn_diserver_requests_total", Help: "DI server requests answered, by route and HTTP status."},
			[]string{"route", "code"}),
		Workers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainfn_diserver_workers_total", Help: "Workers added or removed through the DI server."},
			[]string{"change"}),
	}
	reg.MustRegister(m.Requests, m.Workers)
	return m
}

// The values of the Workers counter's label.
const (
	workersAdded   = "added"
	workersRemoved = "removed"
)

func (m *Metrics) answered(route string, status int) {
	if m != nil {
		m.Requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	}
}

func (m *Metrics) changed(change string, n int32) {
	if m != nil && n > 0 {
		m.Workers.WithLabelValues(change).Add(float64(n))
	}
}
