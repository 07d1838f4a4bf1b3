package allocator

import (
	"fmt"
	"testing"
)

// BenchmarkOptimize times one scheduling period: every preemptible job of
// a cluster placed anew, half of them with profilings, on nodes of 64
// cores that fit about two thirds of what the jobs could use.
func BenchmarkOptimize(b *testing.B) {
	for _, size := range []struct{ jobs, nodes int }{{30, 10}, {300, 100}, {3000, 1000}} {
		b.Run(fmt.Sprintf("jobs=%d/nodes=%d", size.jobs, size.nodes), func(b *testing.B) {
			jobs := map[string]JobInfo{}
			for i := range size.jobs {
				key := fmt.Sprintf("ns/job-%04d", i)
				info := JobInfo{Key: key, Min: 1, Max: 8, Priority: PriorityNormal,
					Request: Resources{MilliCPU: 4000, Memory: 8 << 30}}
				if i%2 == 0 {
					info.Throughput = map[int32]float64{1: 10, 4: 10 + float64(i%7)*5}
				}
				jobs[key] = info
			}
			nodes := map[string]*NodeInfo{}
			for i := range size.nodes {
				name := fmt.Sprintf("node-%04d", i)
				nodes[name] = &NodeInfo{Name: name, Free: Resources{MilliCPU: 64000, Memory: 256 << 30}}
			}
			policy := MarginalThroughput{}
			prev, err := policy.Optimize(jobs, nodes, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := policy.Optimize(jobs, nodes, prev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
