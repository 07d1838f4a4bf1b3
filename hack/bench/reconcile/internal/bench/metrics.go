package bench

import (
	"github.com/trainfn/trainfn/test/scrape"
)

// The reconciler's metrics the benchmark reads.
const (
	// requestsTotal counts every request of the reconciler's API clients,
	// by method and code: controller-runtime registers client-go's.
	requestsTotal = "rest_client_requests_total"
	// writesTotal and discoveryWrites are the reconciler's own: every
	// patch it sends, and those of a discovery script.
	writesTotal     = "trainfn_writes_total"
	discoveryWrites = "trainfn_discovery_writes_total"
	cpuSeconds      = "process_cpu_seconds_total"
)

// metrics are one scrape of the reconciler's /metrics.
type metrics = scrape.Samples

// delta is what a counter grew by from before to after, by label value.
func delta(before, after metrics, name, label string) map[string]float64 {
	out := after.ByLabel(name, label)
	for k, v := range before.ByLabel(name, label) {
		out[k] -= v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}
