package diserver

import (
	"encoding/json"
	"fmt"
	"math"
)

// Profilings is the value of the annotation handoff.Profilings: what a
// DIJob reported to POST .../profilings, kept on its workload of first
// rank 0 where DI-orchestrator kept it in the DIJob's status.
type Profilings struct {
	// Data is the latest data posted, as posted.
	Data json.RawMessage `json:"data,omitempty"`
	// Throughput is the throughput last reported at each worker count: what
	// the allocator weighs when it chooses a job's count. A report counts
	// for the job's count when it was posted; earlier counts keep theirs.
	Throughput map[int32]float64 `json:"throughput,omitempty"`
}

// maxThroughputCounts bounds how many worker counts Throughput remembers,
// which bounds the annotation: with the data's own limit, it stays well
// within the 256 KiB the API server allows an object's annotations.
const maxThroughputCounts = 512

// ParseProfilings reads the annotation; an empty value is no profilings.
func ParseProfilings(value string) (Profilings, error) {
	var p Profilings
	if value == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(value), &p); err != nil {
		return Profilings{}, fmt.Errorf("profilings: %w", err)
	}
	for count := range p.Throughput {
		if count < 1 {
			return Profilings{}, fmt.Errorf("profilings: throughput[%d]: a worker count must be positive", count)
		}
	}
	return p, nil
}

// String is the annotation's value. Maps encode with sorted keys, so the
// same profilings always read the same.
func (p Profilings) String() string {
	b, err := json.Marshal(p)
	if err != nil {
		// Raw data was checked on the way in and floats are finite.
		panic(fmt.Sprintf("encoding profilings: %v", err))
	}
	return string(b)
}

// record returns p with data as the latest data and, when data holds a
// numeric "throughput", that number as the throughput at workers.
func (p Profilings) record(data json.RawMessage, workers int32) Profilings {
	out := Profilings{Data: data, Throughput: make(map[int32]float64, len(p.Throughput)+1)}
	for count, v := range p.Throughput {
		out.Throughput[count] = v
	}
	if v, ok := throughputIn(data); ok && workers >= 1 {
		out.Throughput[workers] = v
		out.forgetFarthestFrom(workers)
	}
	if len(out.Throughput) == 0 {
		out.Throughput = nil
	}
	return out
}

// forgetFarthestFrom drops the counts farthest from the current one while
// there are too many: those the job is least likely to be sized to next.
func (p Profilings) forgetFarthestFrom(workers int32) {
	for len(p.Throughput) > maxThroughputCounts {
		var farthest int32
		var distance int64 = -1
		for count := range p.Throughput {
			d := int64(count) - int64(workers)
			if d < 0 {
				d = -d
			}
			// Of two counts as far, the larger goes: that is deterministic.
			if d > distance || d == distance && count > farthest {
				farthest, distance = count, d
			}
		}
		delete(p.Throughput, farthest)
	}
}

// throughputIn reads data's "throughput" when it is a finite number.
func throughputIn(data json.RawMessage) (float64, bool) {
	// A map, not a struct: a struct field would also match "Throughput".
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return 0, false
	}
	// Null would decode as 0 without an error.
	raw, ok := fields["throughput"]
	if !ok || string(raw) == "null" {
		return 0, false
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}
