package discovery

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// podBuilder makes the pods discovery reads, ready and running unless told.
type podBuilder struct{ p corev1.Pod }

func worker(i string) *podBuilder {
	b := &podBuilder{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-worker-" + i},
		Spec:       corev1.PodSpec{Subdomain: "job"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}},
	}}
	return b
}

func (b *podBuilder) notReady() *podBuilder {
	b.p.Status.Conditions[0].Status = corev1.ConditionFalse
	return b
}

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder {
	b.p.Status.Phase = p
	return b
}

func (b *podBuilder) deleting() *podBuilder {
	b.p.DeletionTimestamp = &metav1.Time{}
	return b
}

func (b *podBuilder) hostname(h string) *podBuilder {
	b.p.Spec.Hostname = h
	return b
}

func pods(bs ...*podBuilder) []corev1.Pod {
	out := make([]corev1.Pod, len(bs))
	for i, b := range bs {
		out[i] = b.p
	}
	return out
}

func TestScript(t *testing.T) {
	launcher := worker("x").hostname("job-launcher")
	for name, tc := range map[string]struct {
		job  Job
		want string
	}{
		"numeric index order, not lexical": {
			job:  Job{Workers: pods(worker("10"), worker("2"), worker("0")), Replicas: 11, SlotsPerWorker: 4},
			want: "#!/bin/sh\necho job-worker-0.job:4\necho job-worker-2.job:4\necho job-worker-10.job:4\n",
		},
		"only workers that can take work": {
			job: Job{Workers: pods(worker("0"), worker("1").notReady(), worker("2").phase(corev1.PodPending),
				worker("3").deleting(), worker("4").phase(corev1.PodSucceeded)), Replicas: 5, SlotsPerWorker: 1},
			want: "#!/bin/sh\necho job-worker-0.job:1\n",
		},
		"workers being scaled away get no work": {
			job:  Job{Workers: pods(worker("0"), worker("1"), worker("2")), Replicas: 2, SlotsPerWorker: 1},
			want: "#!/bin/sh\necho job-worker-0.job:1\necho job-worker-1.job:1\n",
		},
		"a working launcher comes first": {
			job:  Job{Workers: pods(worker("0")), Replicas: 1, SlotsPerWorker: 2, Launcher: &launcher.p, LauncherWorks: true, LauncherSlots: 2},
			want: "#!/bin/sh\necho job-launcher.job:2\necho job-worker-0.job:2\n",
		},
		"a launcher that does not work is left out": {
			job:  Job{Workers: pods(worker("0")), Replicas: 1, SlotsPerWorker: 2, Launcher: &launcher.p},
			want: "#!/bin/sh\necho job-worker-0.job:2\n",
		},
		"no slots, as mpi-operator allows": {
			job:  Job{Workers: pods(worker("0")), Replicas: 1, SlotsPerWorker: 0, Launcher: &launcher.p, LauncherWorks: true},
			want: "#!/bin/sh\necho job-launcher.job:0\necho job-worker-0.job:0\n",
		},
		"no worker yet": {
			job:  Job{Replicas: 2, SlotsPerWorker: 1},
			want: "#!/bin/sh\n",
		},
		"a pod not named by index is ignored": {
			job:  Job{Workers: pods(worker("a"), worker("1")), Replicas: 2, SlotsPerWorker: 1},
			want: "#!/bin/sh\necho job-worker-1.job:1\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, Script(Hosts(tc.job), handoff.HostSlots))
			require.Equal(t, regexp.MustCompile(`:\d+\n`).ReplaceAllString(tc.want, "\n"), Script(Hosts(tc.job), handoff.HostOnly), "mpi-operator v2's format")
		})
	}
}

func TestIndexPrefersTheStatefulSetLabel(t *testing.T) {
	p := worker("7").p
	p.Labels = map[string]string{"apps.kubernetes.io/pod-index": "3"}
	i, ok := Index(&p)
	require.True(t, ok)
	require.Equal(t, 3, i)
}

// An Indexed Job names its pods <job>-<index>-<random> and gives them the
// hostname <job>-<index>: the label is the only index to go by.
func TestHostsOfAnIndexedJobGoByCompletionIndex(t *testing.T) {
	jobPod := func(index string) *podBuilder {
		b := worker(index + "-x7k2q").hostname("job-worker-" + index)
		b.p.Labels = map[string]string{"batch.kubernetes.io/job-completion-index": index}
		return b
	}
	hosts := Hosts(Job{Workers: pods(jobPod("2"), jobPod("0"), jobPod("1")), Replicas: 2, SlotsPerWorker: 1})
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	require.Equal(t, []string{"job-worker-0.job", "job-worker-1.job"}, names, "index order, and worker 2 is being scaled away")
}

func TestListedReadsWhatScriptWrites(t *testing.T) {
	hosts := Hosts(Job{Workers: pods(worker("0"), worker("1"), worker("2").notReady()), Replicas: 3, SlotsPerWorker: 2})
	for _, format := range []handoff.DiscoverFormat{handoff.HostSlots, handoff.HostOnly} {
		require.Equal(t, map[string]bool{"job-worker-0.job": true, "job-worker-1.job": true}, Listed(Script(hosts, format)))
	}
	require.Empty(t, Listed(""))
}

// TestHostsCarryWhenTheirPodBecameReady checks the time the discovery
// latency metric is measured from.
func TestHostsCarryWhenTheirPodBecameReady(t *testing.T) {
	since := metav1.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	ready := worker("0")
	ready.p.Status.Conditions[0].LastTransitionTime = since
	launcher := worker("x").hostname("job-launcher")
	hosts := Hosts(Job{Workers: pods(ready), Replicas: 1, SlotsPerWorker: 1, Launcher: &launcher.p, LauncherWorks: true, LauncherSlots: 1})
	require.Len(t, hosts, 2)
	require.True(t, hosts[0].ReadySince.IsZero(), "a condition with no transition time says nothing")
	require.Equal(t, since.Time, hosts[1].ReadySince)
}
