package jobphase

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

func job(name string, annotations map[string]string) batchv1.Job {
	return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

func statefulSet(name string, annotations map[string]string) appsv1.StatefulSet {
	return appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

// TestFirstWorkload: Record writes on the workload phase.Recorded reads
// first, so that what it writes is what status reads back.
func TestFirstWorkload(t *testing.T) {
	rank := func(r string) map[string]string { return map[string]string{handoff.FirstRank: r} }
	cases := []struct {
		name string
		jobs []batchv1.Job
		sets []appsv1.StatefulSet
		want string
	}{
		{"none", nil, nil, ""},
		{"MPIJob: the launcher before the workers", []batchv1.Job{job("pi-worker", nil), job("pi-launcher", nil)}, nil, "Job/pi-launcher"},
		{"elastic: a Job before a StatefulSet", []batchv1.Job{job("pi-launcher", nil)}, []appsv1.StatefulSet{statefulSet("pi-worker", nil)}, "Job/pi-launcher"},
		{"a Job before a StatefulSet of its name", []batchv1.Job{job("pi-worker", nil)}, []appsv1.StatefulSet{statefulSet("pi-worker", nil)}, "Job/pi-worker"},
		{"a StatefulSet first by name", []batchv1.Job{job("pi-z", nil)}, []appsv1.StatefulSet{statefulSet("pi-a", nil)}, "StatefulSet/pi-a"},
		{"DIJob: rank 0, whatever its name", []batchv1.Job{job("di-a", rank("4")), job("di-b", rank("0"))}, nil, "Job/di-b"},
		{"DIJob: a StatefulSet of rank 0", nil, []appsv1.StatefulSet{statefulSet("di-worker", rank("0"))}, "StatefulSet/di-worker"},
		{"DIJob: a StatefulSet of rank 0 before a Job of another", []batchv1.Job{job("di-a", rank("1"))}, []appsv1.StatefulSet{statefulSet("di-b", rank("0"))}, "StatefulSet/di-b"},
		{"of two of rank 0, the first by name", []batchv1.Job{job("di-b", rank("0")), job("di-a", rank("0"))}, nil, "Job/di-a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if w := phase.FirstWorkload(phase.Objects{Jobs: c.jobs, StatefulSets: c.sets}); w != nil {
				kind := "StatefulSet"
				if _, ok := w.(*batchv1.Job); ok {
					kind = "Job"
				}
				got = kind + "/" + w.GetName()
			}
			if got != c.want {
				t.Errorf("first workload %s, want %s", got, c.want)
			}
			// Recorded reads back a phase written there, whatever the
			// others carry.
			if w := phase.FirstWorkload(phase.Objects{Jobs: c.jobs, StatefulSets: c.sets}); w != nil {
				for i := range c.jobs {
					c.jobs[i].Annotations = with(c.jobs[i].Annotations, handoff.Phase, string(phase.Starting))
				}
				for i := range c.sets {
					c.sets[i].Annotations = with(c.sets[i].Annotations, handoff.Phase, string(phase.Starting))
				}
				w.SetAnnotations(with(w.GetAnnotations(), handoff.Phase, string(phase.Running)))
				if p := phase.Recorded(phase.Objects{Jobs: c.jobs, StatefulSets: c.sets}); p != phase.Running {
					t.Errorf("phase.Recorded reads %q, not the first workload's Running", p)
				}
			}
		})
	}
}

func with(m map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// TestResumed tells a resumed Job from one never suspended or suspended
// now, including the moment before the Job controller records the resume.
func TestResumed(t *testing.T) {
	suspended := func(spec bool, condition corev1.ConditionStatus) batchv1.Job {
		j := job("pi-worker", nil)
		j.Spec.Suspend = &spec
		if condition != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: condition}}
		}
		return j
	}
	cases := []struct {
		name string
		job  batchv1.Job
		want bool
	}{
		{"never suspended", suspended(false, ""), false},
		{"suspended", suspended(true, corev1.ConditionTrue), false},
		{"resumed", suspended(false, corev1.ConditionFalse), true},
		{"resumed, not yet recorded", suspended(false, corev1.ConditionTrue), true},
		{"suspended again", suspended(true, corev1.ConditionFalse), true},
	}
	for _, c := range cases {
		if got := resumed([]batchv1.Job{job("pi-launcher", nil), c.job}); got != c.want {
			t.Errorf("%s: resumed %v, want %v", c.name, got, c.want)
		}
	}
}
