package diserver

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// diJob is one generation of a DIJob as it lives in the cluster: the
// workloads that carry its name and that generation, by first rank.
type diJob struct {
	id        JobID
	workloads []workload
}

// workload is a Job or StatefulSet a DIJob rendered into.
type workload struct {
	// object is an *appsv1.StatefulSet or a *batchv1.Job.
	object     client.Object
	generation int64
	firstRank  int32
}

// diWorkloads are the workloads of the DIJob named, of every generation, as
// r holds them. The same name may also be another kind's job (an MPIJob's
// launcher, say), whose workloads are left out.
func diWorkloads(ctx context.Context, r client.Reader, namespace, name string) ([]client.Object, error) {
	in := []client.ListOption{client.InNamespace(namespace), client.MatchingLabels(handoff.JobLabels(name))}
	var sets appsv1.StatefulSetList
	var jobs batchv1.JobList
	if err := r.List(ctx, &sets, in...); err != nil {
		return nil, fromAPIServer(err, "listing the job's StatefulSets")
	}
	if err := r.List(ctx, &jobs, in...); err != nil {
		return nil, fromAPIServer(err, "listing the job's Jobs")
	}
	var out []client.Object
	for i := range sets.Items {
		if handoff.IsDIJob(sets.Items[i].Labels) {
			out = append(out, &sets.Items[i])
		}
	}
	for i := range jobs.Items {
		if handoff.IsDIJob(jobs.Items[i].Labels) {
			out = append(out, &jobs.Items[i])
		}
	}
	return out, nil
}

// loadJob reads the workloads of the job id names. The job's generation is
// the newest its workloads carry: while GitOps applies a new one, the
// workloads still of the old generation are on their way out, and a
// request for the old generation is a request for a job that is ending.
func loadJob(ctx context.Context, r client.Reader, id JobID) (*diJob, error) {
	objs, err := diWorkloads(ctx, r, id.Namespace, id.Name)
	if err != nil {
		return nil, err
	}
	var found []workload
	var newest int64
	for _, obj := range objs {
		w := workload{object: obj}
		if w.generation, w.firstRank, err = readDIAnnotations(obj); err != nil {
			return nil, fail(http.StatusInternalServerError, "%s %s: %v", kindOf(obj), obj.GetName(), err)
		}
		found = append(found, w)
		newest = max(newest, w.generation)
	}
	if len(found) == 0 {
		return nil, fail(http.StatusNotFound, "job %s: no DIJob of that name", id.job())
	}
	if id.Generation != newest {
		return nil, fail(http.StatusNotFound, "job %s: at generation %d, not %d", id.job(), newest, id.Generation)
	}
	j := &diJob{id: id}
	for _, w := range found {
		if w.generation == newest {
			j.workloads = append(j.workloads, w)
		}
	}
	slices.SortFunc(j.workloads, func(a, b workload) int { return cmp.Compare(a.firstRank, b.firstRank) })
	return j, nil
}

// reread reads one of the job's workloads again, live, by name, after a
// write to it lost a race: the workload must still be the job's, of its
// generation and first rank, or the request answers as if it had come
// after the change. It replaces the job's copy.
func (j *diJob) reread(ctx context.Context, live client.Reader, stale client.Object) (client.Object, error) {
	// An empty object: decoding into a copy of the stale one would keep
	// the map entries the live one no longer has.
	var fresh client.Object = &batchv1.Job{}
	if _, ok := stale.(*appsv1.StatefulSet); ok {
		fresh = &appsv1.StatefulSet{}
	}
	if err := live.Get(ctx, client.ObjectKeyFromObject(stale), fresh); err != nil {
		return nil, fromAPIServer(err, fmt.Sprintf("job %s: reading %s %s again", j.id.job(), kindOf(stale), stale.GetName()))
	}
	_, staleRank, _ := readDIAnnotations(stale)
	generation, rank, err := readDIAnnotations(fresh)
	switch {
	case !handoff.IsDIJob(fresh.GetLabels()) || fresh.GetLabels()[handoff.JobNameLabel] != j.id.Name:
		return nil, fail(http.StatusNotFound, "job %s: %s %s is no longer its workload", j.id.job(), kindOf(fresh), fresh.GetName())
	case err != nil:
		return nil, fail(http.StatusInternalServerError, "%s %s: %v", kindOf(fresh), fresh.GetName(), err)
	case generation != j.id.Generation:
		return nil, fail(http.StatusNotFound, "job %s: at generation %d, not %d", j.id.job(), generation, j.id.Generation)
	case rank != staleRank:
		return nil, fail(http.StatusServiceUnavailable, "job %s: %s %s changed its first rank; retry", j.id.job(), kindOf(fresh), fresh.GetName())
	}
	j.replace(fresh)
	return fresh, nil
}

// replace puts a newer copy of one of the job's workloads in its place.
func (j *diJob) replace(newer client.Object) {
	for i := range j.workloads {
		if j.workloads[i].object.GetUID() == newer.GetUID() {
			j.workloads[i].object = newer
		}
	}
}

// readDIAnnotations reads what the render marks a DIJob's workload with.
func readDIAnnotations(obj client.Object) (generation int64, firstRank int32, err error) {
	a := obj.GetAnnotations()
	generation, err = strconv.ParseInt(a[handoff.DIJobGeneration], 10, 64)
	if err != nil || generation < 1 {
		return 0, 0, fmt.Errorf("metadata.annotations[%s]: %q is not a positive integer", handoff.DIJobGeneration, a[handoff.DIJobGeneration])
	}
	rank, err := strconv.ParseInt(a[handoff.FirstRank], 10, 32)
	if err != nil || rank < 0 {
		return 0, 0, fmt.Errorf("metadata.annotations[%s]: %q is not a rank", handoff.FirstRank, a[handoff.FirstRank])
	}
	return generation, int32(rank), nil
}

// expected is how many pods a workload runs when all is well: a
// StatefulSet's replicas, a Job's parallelism, each with the API's default.
func (w workload) expected() int32 {
	switch o := w.object.(type) {
	case *appsv1.StatefulSet:
		return phase.Replicas(o)
	case *batchv1.Job:
		if o.Spec.Parallelism == nil {
			return 1
		}
		return *o.Spec.Parallelism
	}
	return 0
}

// workers is the job's worker count: every pod expected of its workloads.
func (j *diJob) workers() int32 {
	var n int32
	for _, w := range j.workloads {
		n += w.expected()
	}
	return n
}

// ranks is how many ranks the job has: one past its highest expected rank.
func (j *diJob) ranks() int32 {
	var n int32
	for _, w := range j.workloads {
		n = max(n, w.firstRank+w.expected())
	}
	return n
}

// preemptible is the job's StatefulSet when the job is preemptible: the
// one workload whose replicas the DI server may change.
func (j *diJob) preemptible() *appsv1.StatefulSet {
	for _, w := range j.workloads {
		if s, ok := w.object.(*appsv1.StatefulSet); ok {
			if _, elastic := s.Annotations[handoff.ElasticWorkers]; elastic {
				return s
			}
		}
	}
	return nil
}

// leader is the workload of first rank 0, which holds the job-wide
// annotations (profilings, phase).
func (j *diJob) leader() (client.Object, bool) {
	for _, w := range j.workloads {
		if w.firstRank == 0 {
			return w.object, true
		}
	}
	return nil, false
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*appsv1.StatefulSet); ok {
		return "StatefulSet"
	}
	return "Job"
}
