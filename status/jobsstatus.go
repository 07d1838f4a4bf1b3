package status

import (
	"cmp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/trainfn/trainfn/status/phase"
)

// replicatedJobLabel names the replicated job a TrainJob's Job belongs to,
// as JobSet labels it.
const replicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name"

// JobStatus counts the Jobs of one of a TrainJob's replicated jobs by
// their state, as Kubeflow Trainer's status.jobsStatus reports them (from
// JobSet's replicatedJobsStatus).
type JobStatus struct {
	Name string `json:"name"`
	// Ready Jobs have every pod they run at once ready, or done.
	Ready int32 `json:"ready"`
	// Succeeded and Failed Jobs have ended so.
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
	// Active Jobs have a pod running or pending.
	Active int32 `json:"active"`
	// Suspended Jobs are held, by the job's suspend or a queue.
	Suspended int32 `json:"suspended"`
}

// jobsStatus is a TrainJob's status by replicated job, in their names'
// order; nil for a job of another kind.
func jobsStatus(jobs []batchv1.Job) []JobStatus {
	index := map[string]int{}
	var out []JobStatus
	for i := range jobs {
		name, ok := jobs[i].Labels[replicatedJobLabel]
		if !ok {
			continue
		}
		k, seen := index[name]
		if !seen {
			k = len(out)
			index[name] = k
			out = append(out, JobStatus{Name: name})
		}
		count(&out[k], &jobs[i])
	}
	slices.SortFunc(out, func(a, b JobStatus) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func count(s *JobStatus, j *batchv1.Job) {
	switch o, _ := phase.JobOutcome(j); o {
	case phase.Succeeded:
		s.Succeeded++
		return
	case phase.Failed:
		s.Failed++
		return
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		s.Suspended++
		return
	}
	if j.Status.Active > 0 {
		s.Active++
	}
	if up, want := phase.PodsUp(j); up >= want {
		s.Ready++
	}
}
