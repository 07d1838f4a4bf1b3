package progress

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// WriteInterval is how often a job's report is written at most: reports
// that come faster are gathered, and the last one is written.
const WriteInterval = 5 * time.Second

// recorder writes each job's last report on its first workload, at most
// once an interval per job: a job's reports cost the API server a bounded
// number of writes however many ranks report, and however often.
type recorder struct {
	cache    client.Reader
	writer   write.Writer
	interval time.Duration
	log      logr.Logger
	now      func() time.Time
	// after runs a flush later: time.AfterFunc, but for tests.
	after func(time.Duration, func())

	mu   sync.Mutex
	ctx  context.Context
	jobs map[observed.Key]*pending
}

// pending is a job's report to write, and when it last wrote one.
type pending struct {
	status    *TrainerStatus
	scheduled bool
	lastWrite time.Time
	// writing counts the job's writes under way, which take turns
	// (writes): each takes the report to write once the one before is
	// done, so that the job's reports land in the order they were
	// accepted even when a write outlasts an interval.
	writing int
	writes  sync.Mutex
}

// maxRecordedJobs bounds the jobs remembered between writes.
const maxRecordedJobs = 4096

func newRecorder(cache client.Reader, writer write.Writer, interval time.Duration, log logr.Logger, now func() time.Time) *recorder {
	return &recorder{cache: cache, writer: writer, interval: interval, log: log, now: now, jobs: map[observed.Key]*pending{},
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// start lets the recorder write, until ctx ends.
func (r *recorder) start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctx = ctx
}

// record keeps a job's report to write: now, if the job's last write was
// an interval ago, else at the end of the interval.
func (r *recorder) record(key observed.Key, s *TrainerStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	p, ok := r.jobs[key]
	if !ok {
		if len(r.jobs) >= maxRecordedJobs {
			r.forgetIdle(now)
		}
		p = &pending{}
		r.jobs[key] = p
	}
	p.status = s
	if p.scheduled {
		return
	}
	p.scheduled = true
	r.after(max(p.lastWrite.Add(r.interval).Sub(now), 0), func() { r.flush(key) })
}

// forgetIdle forgets the jobs with nothing to write whose last write is
// an interval old: their next report is written at once anyway.
func (r *recorder) forgetIdle(now time.Time) {
	for k, p := range r.jobs {
		if !p.scheduled && p.writing == 0 && now.Sub(p.lastWrite) >= r.interval {
			delete(r.jobs, k)
		}
	}
}

func (r *recorder) flush(key observed.Key) {
	r.mu.Lock()
	p := r.jobs[key]
	p.writing++
	r.mu.Unlock()
	p.writes.Lock()
	defer p.writes.Unlock()
	r.mu.Lock()
	ctx, s := r.ctx, p.status
	p.scheduled, p.status, p.lastWrite = false, nil, r.now()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		p.writing--
		r.mu.Unlock()
	}()
	if ctx == nil || ctx.Err() != nil || s == nil {
		return
	}
	if err := r.write(ctx, key, s); err != nil {
		r.log.Error(err, "recording a job's progress", "namespace", key.Namespace, "kind", key.Kind, "job", key.Name)
	}
}

// write merge-patches the annotation on the job's first workload, unless
// it holds this report already. The report's own lastUpdatedTime does not
// order it: that is the pod's clock, and one report from a clock running
// ahead would keep every later one out. The last report this replica
// accepted is written; across replicas the last write wins, as in
// Trainer's status server, and a replica's next write follows within an
// interval.
func (r *recorder) write(ctx context.Context, key observed.Key, s *TrainerStatus) error {
	first, err := firstWorkload(ctx, r.cache, key)
	if err != nil || first == nil {
		return err
	}
	value, err := json.Marshal(s)
	if err != nil {
		return err
	}
	old := first.GetAnnotations()[handoff.TrainerStatus]
	if old == string(value) {
		return nil
	}
	err = r.writer.MergePatch(ctx, first, map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.TrainerStatus: string(value)}}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// firstWorkload is the job's first workload (phase.FirstWorkload), of its
// Jobs and StatefulSets in the cache: where the reconciler records a job's
// phase and progress. nil when the job has none.
func firstWorkload(ctx context.Context, c client.Reader, key observed.Key) (client.Object, error) {
	selector, err := key.Selector()
	if err != nil {
		return nil, err
	}
	in := []client.ListOption{client.InNamespace(key.Namespace), client.MatchingLabelsSelector{Selector: selector}}
	var jobs batchv1.JobList
	var sets appsv1.StatefulSetList
	for _, list := range []client.ObjectList{&jobs, &sets} {
		if err := c.List(ctx, list, in...); err != nil {
			return nil, err
		}
	}
	return phase.FirstWorkload(phase.Objects{Jobs: jobs.Items, StatefulSets: sets.Items}), nil
}
