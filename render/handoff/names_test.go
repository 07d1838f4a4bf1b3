package handoff

import (
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

func TestIndexedPodsPrefix(t *testing.T) {
	long := strings.Repeat("a", 50)
	for name, tt := range map[string]struct {
		prefix      string
		completions int
		jobs        []string
		want        string
	}{
		"an MPIJob's workers":             {"pi-worker-", 2, []string{"pi-worker"}, "pi-worker-"},
		"a TrainJob's nodes":              {"exec-node-", 3, []string{"exec-node-0", "exec-node-1"}, "exec-node-"},
		"no pod":                          {"pi-worker-", 0, []string{"pi-worker"}, "pi-worker-"},
		"a name that just fits":           {long + "-wo-", 10, []string{long + "-wo"}, long + "-wo-"},
		"a name the Job controller cuts":  {long + "-worker-", 2, []string{long + "-worker"}, long + "-work"},
		"more digits, shorter":            {long + "-worker-", 100, []string{long + "-worker"}, long + "-wor"},
		"the longest Job's name cuts all": {long + "-node-", 2, []string{long + "-node-0", long + "-node-10"}, long + "-node"},
	} {
		t.Run(name, func(t *testing.T) {
			got := IndexedPodsPrefix(tt.prefix, tt.completions, tt.jobs...)
			assert.Equal(t, tt.want, got)
			for _, job := range tt.jobs {
				for _, i := range []int{0, max(tt.completions-1, 0)} {
					assert.True(t, strings.HasPrefix(jobPodName(job, i), got), "pod %s of Job %s", jobPodName(job, i), job)
				}
			}
			assert.LessOrEqual(t, len(got), maxGeneratedName)
		})
	}
}
