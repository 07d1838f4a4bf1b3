package jobphase

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/status/phase"
)

// recordedPhases are the phases Record writes, each reported for every
// namespace and kind that has a job, at 0 when no job is in it, so that
// a query for one phase finds a value.
var recordedPhases = []phase.Phase{phase.Pending, phase.Starting, phase.Running, phase.Restarting, phase.Succeeded, phase.Failed}

// listTimeout bounds a scrape's reads of the cache, which only wait while
// it has not synced.
const listTimeout = 10 * time.Second

// Collector reports how many jobs are in each recorded phase, counted at
// scrape time from the workloads in the cache: what Record wrote, read
// with no API call.
type Collector struct {
	Cache client.Reader
	// Elected closes once this replica leads: only the leader reports,
	// so that a sum over the replicas counts each job once.
	Elected <-chan struct{}
	desc    *prometheus.Desc
}

// NewCollector reports the jobs of the workloads in cache.
func NewCollector(cache client.Reader, elected <-chan struct{}) *Collector {
	return &Collector{Cache: cache, Elected: elected, desc: prometheus.NewDesc(
		"trainfn_jobs", "Jobs by the phase the reconciler last recorded on their first workload.",
		[]string{"namespace", "kind", "phase"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	select {
	case <-c.Elected:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for group, byPhase := range counts {
		for p, n := range byPhase {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), group.namespace, group.kind, string(p))
		}
	}
}

type group struct{ namespace, kind string }

// count groups the cache's workloads by job and counts the jobs by the
// phase phase.Recorded reads on them. A job with no phase recorded yet
// counts nowhere.
func (c *Collector) count(ctx context.Context) (map[group]map[phase.Phase]int, error) {
	var jobs batchv1.JobList
	var sets appsv1.StatefulSetList
	for _, list := range []client.ObjectList{&jobs, &sets} {
		// Read, never changed: the cache's own objects, not copies.
		if err := c.Cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
	}
	byJob := map[observed.Key]*phase.Objects{}
	objectsOf := func(key observed.Key) *phase.Objects {
		if byJob[key] == nil {
			byJob[key] = &phase.Objects{}
		}
		return byJob[key]
	}
	for _, j := range jobs.Items {
		if key, ok := observed.KeyOf(&j); ok && key.Kind != "" {
			objs := objectsOf(key)
			objs.Jobs = append(objs.Jobs, j)
		}
	}
	for _, s := range sets.Items {
		if key, ok := observed.KeyOf(&s); ok && key.Kind != "" {
			objs := objectsOf(key)
			objs.StatefulSets = append(objs.StatefulSets, s)
		}
	}
	counts := map[group]map[phase.Phase]int{}
	for key, objs := range byJob {
		p := phase.Recorded(*objs)
		if p == "" {
			continue
		}
		g := group{key.Namespace, key.Kind}
		if counts[g] == nil {
			counts[g] = map[phase.Phase]int{}
			for _, p := range recordedPhases {
				counts[g][p] = 0
			}
		}
		counts[g][p]++
	}
	return counts, nil
}
