package allocator_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/trainfn/trainfn/reconciler/allocator"
)

func ExampleMarginalThroughput_Optimize() {
	nodes := map[string]*allocator.NodeInfo{
		"node-a": {Name: "node-a", Free: allocator.Resources{MilliCPU: 8000, Memory: 32 << 30}},
		"node-b": {Name: "node-b", Free: allocator.Resources{MilliCPU: 4000, Memory: 16 << 30}},
	}
	worker := allocator.Resources{MilliCPU: 2000, Memory: 8 << 30}
	jobs := map[string]allocator.JobInfo{
		// Its second worker added 90% of the first one's throughput.
		"team/scales": {Key: "team/scales", Min: 1, Max: 8, Request: worker,
			Throughput: map[int32]float64{1: 100, 2: 190}},
		// Its second worker added 10%.
		"team/saturated": {Key: "team/saturated", Min: 1, Max: 8, Request: worker,
			Throughput: map[int32]float64{1: 50, 2: 55}},
	}

	policy := allocator.MarginalThroughput{}
	placed, err := policy.Optimize(jobs, nodes, nil)
	if err != nil {
		fmt.Println(err)
	}
	for _, key := range slices.Sorted(maps.Keys(placed)) {
		fmt.Println(key, placed[key])
	}

	// The next period, with the same measurements, changes nothing.
	again, _ := policy.Optimize(jobs, nodes, placed)
	fmt.Println("unchanged:", maps.EqualFunc(placed, again, slices.Equal))

	// Output:
	// team/saturated [node-b]
	// team/scales [node-b node-a node-a node-a node-a]
	// unchanged: true
}

func ExampleMarginalThroughput_Allocate() {
	nodes := map[string]*allocator.NodeInfo{
		"node-a": {Name: "node-a", Free: allocator.Resources{MilliCPU: 8000, Memory: 32 << 30}},
		"node-b": {Name: "node-b", Free: allocator.Resources{MilliCPU: 3000, Memory: 16 << 30}},
	}
	job := allocator.JobInfo{Key: "team/new", Min: 3, Max: 6, Request: allocator.Resources{MilliCPU: 2000, Memory: 4 << 30}}
	placed, err := allocator.MarginalThroughput{}.Allocate(job, nodes)
	fmt.Println(placed, err)

	job.Min = 6
	_, err = allocator.MarginalThroughput{}.Allocate(job, nodes)
	fmt.Println(err)

	// Output:
	// [node-b node-a node-a] <nil>
	// allocator: job team/new: minimum workers do not fit
}
