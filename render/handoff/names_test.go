package handoff

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWorkerHostPartsNameEveryWorker(t *testing.T) {
	prefix, suffix := WorkerHostParts("pi")
	for _, i := range []int{0, 7, 49999} {
		assert.Equal(t, DNSName("pi", WorkerHostname("pi", i)), prefix+strconv.Itoa(i)+suffix)
	}
}
