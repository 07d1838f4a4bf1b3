package handoff

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWorkerHostPartsNameEveryWorker(t *testing.T) {
	prefix, suffix := WorkerHostParts("pi")
	for _, i := range []int{0, 7, 49999} {
		assert.Equal(t, DNSName("pi", WorkerHostname("pi", i)), prefix+strconv.Itoa(i)+suffix)
	}
}

// jobPodName is the name the Job controller asks for index i's pod of an
// Indexed Job (k8s.io/kubernetes pkg/controller/job's
// podGenerateNameWithIndex), with the API server's random part.
func jobPodName(job string, i int) string {
	index := "-" + strconv.Itoa(i) + "-"
	name := job + index
	if len(name) > maxGeneratedName {
		name = name[:maxGeneratedName-len(index)] + index
	}
	return name + "x7k2p"
}

func TestIndexedPodNames(t *testing.T) {
	long := strings.Repeat("a", 50)
	for name, tt := range map[string]struct {
		completions int
		jobs        []string
		want        string
		others      []string // names that must not match
	}{
		"an MPIJob's workers": {2, []string{"pi-worker"}, `^(pi-worker-[0-9]{1}-)[bcdfghjklmnpqrstvwxz2456789]{5}$`,
			[]string{"pi-launcher-x7k2p", "pi-worker-b-launcher-x7k2p", "pi-worker-b-worker-0-x7k2p", "pi-worker-0-x7k2pp", "pi-worker-10-x7k2p", "pi-worker-0-aaaaa"}},
		"a TrainJob's nodes": {3, []string{"exec-node-0", "exec-node-1"}, `^(exec-node-0-[0-9]{1}-|exec-node-1-[0-9]{1}-)[bcdfghjklmnpqrstvwxz2456789]{5}$`,
			[]string{"exec-node-2-0-x7k2p", "exec-launcher-0-0-x7k2p", "exec-node-0-x7k2p"}},
		"no pod":                         {0, []string{"pi-worker"}, `^(pi-worker-[0-9]{1}-)[bcdfghjklmnpqrstvwxz2456789]{5}$`, nil},
		"more digits":                    {12, []string{"pi-worker"}, `^(pi-worker-[0-9]{1}-|pi-worker-[0-9]{2}-)[bcdfghjklmnpqrstvwxz2456789]{5}$`, []string{"pi-worker-123-x7k2p"}},
		"a dot escaped":                  {1, []string{"a.b-worker"}, `^(a\.b-worker-[0-9]{1}-)[bcdfghjklmnpqrstvwxz2456789]{5}$`, []string{"axb-worker-0-x7k2p"}},
		"a name the Job controller cuts": {100, []string{long + "-worker"}, "", []string{long + "-worker-0-x7k2p"}},
		"two Jobs, one cut":              {2, []string{long + "-node-0", "short-node-1"}, "", []string{long + "-node-0-0-x7k2p"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := IndexedPodNames(tt.completions, tt.jobs...)
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
			}
			re := regexp.MustCompile(got)
			for _, job := range tt.jobs {
				for _, i := range []int{0, max(tt.completions-1, 0)} {
					assert.Regexp(t, re, jobPodName(job, i), "pod %d of Job %s", i, job)
				}
			}
			for _, other := range tt.others {
				assert.NotRegexp(t, re, other)
			}
		})
	}
}
