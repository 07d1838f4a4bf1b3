package main

import (
	"bytes"
	"fmt"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/trainfn/trainfn/test/jobstream"
)

// defaultSlow is the first-run time above which a case gets -slow-runs runs
// instead of -runs: enough for a median without a ten-minute benchmark.
const defaultSlow = 3 * time.Second

// benchCase is one input trainfn is timed on, and what it is held to.
type benchCase struct {
	name string
	// jobs counts the job specs in the input, for the cost per job.
	jobs   int
	stream func() []byte
	// render runs `trainfn render` on the plain stream instead of the KRM
	// function on a ResourceList of it; the floor is still given what
	// trainfn wrote, as a ResourceList.
	render bool
	// runs, when set, replaces -runs: a case whose target is close to
	// its run-to-run spread needs more pairs for a median to hold.
	runs   int
	target target
}

// target is what a case must reach; zero fields are not checked.
type target struct {
	timeRatio, memRatio float64       // at most, against the floor
	under               time.Duration // trainfn's median, at most
	apiLimits           bool          // every output object fits the API server
}

func cases() []benchCase {
	mixed := func(n int) func() []byte { return func() []byte { return jobstream.Mixed(n) } }
	mpiJob := func(workers int) func() []byte { return func() []byte { return jobstream.MPIJob("pi", workers) } }
	return []benchCase{
		{name: "1 MPIJob (cold start)", jobs: 1, stream: mpiJob(2), target: target{timeRatio: 3}},
		{name: "100 mixed jobs", jobs: 100, stream: mixed(100)},
		// Pair by pair, trainfn's time over the floor's spreads from 0.9x
		// to 1.2x between its quartiles here: 10 pairs put the median
		// anywhere in it.
		{name: "1,000 mixed jobs", jobs: 1000, stream: mixed(1000), runs: 30, target: target{timeRatio: 1.15, memRatio: 2}},
		{name: "10,000 mixed jobs", jobs: 10000, stream: mixed(10000), target: target{timeRatio: 1.5, memRatio: 2}},
		{name: "2,000 mixed jobs, trainfn render", jobs: 2000, stream: mixed(2000), render: true, target: target{memRatio: 0.5}},
		{name: "MPIJob, 100 workers", jobs: 1, stream: mpiJob(100)},
		{name: "MPIJob, 10,000 workers", jobs: 1, stream: mpiJob(10000)},
		{name: "MPIJob, 50,000 workers", jobs: 1, stream: mpiJob(50000), target: target{under: time.Second, apiLimits: true}},
	}
}

// resourceList wraps a stream's documents as the items of a ResourceList,
// as kustomize hands them to a KRM function.
func resourceList(stream []byte) ([]byte, error) {
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("reading the generated jobs: %w", err)
	}
	var b bytes.Buffer
	w := kio.ByteWriter{Writer: &b, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	if err := w.Write(items); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
