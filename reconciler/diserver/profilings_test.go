package diserver

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProfilingsRecordThroughputAtTheWorkerCount(t *testing.T) {
	var p Profilings
	p = p.record(json.RawMessage(`{"throughput":10.5,"loss":0.3}`), 2)
	p = p.record(json.RawMessage(`{"throughput":19}`), 4)
	require.Equal(t, map[int32]float64{2: 10.5, 4: 19}, p.Throughput)
	require.JSONEq(t, `{"throughput":19}`, string(p.Data), "the latest data replaces the earlier")

	// A later report at a count replaces that count's throughput only.
	p = p.record(json.RawMessage(`{"throughput":11}`), 2)
	require.Equal(t, map[int32]float64{2: 11, 4: 19}, p.Throughput)
}

func TestProfilingsKeepThroughputWhenDataHasNone(t *testing.T) {
	p := Profilings{Throughput: map[int32]float64{3: 7}}
	for _, data := range []string{`{}`, `{"throughput":null}`, `{"throughput":"fast"}`, `{"throughput":[1]}`,
		`{"Throughput":5}`, `{"throughput":1e400}`} {
		got := p.record(json.RawMessage(data), 5)
		require.Equal(t, map[int32]float64{3: 7}, got.Throughput, data)
		require.Equal(t, data, string(got.Data))
	}
}

func TestProfilingsIgnoreThroughputWithoutWorkers(t *testing.T) {
	got := Profilings{}.record(json.RawMessage(`{"throughput":3}`), 0)
	require.Nil(t, got.Throughput, "a job of no workers has no throughput to weigh")
}

func TestProfilingsRecordDoesNotChangeTheOriginal(t *testing.T) {
	p := Profilings{Throughput: map[int32]float64{1: 1}}
	_ = p.record(json.RawMessage(`{"throughput":2}`), 2)
	require.Equal(t, map[int32]float64{1: 1}, p.Throughput)
}

func TestProfilingsRoundTrip(t *testing.T) {
	p := Profilings{}.record(json.RawMessage(`{"throughput":2.5,"x":{"y":[1,"z"]}}`), 3)
	p = p.record(json.RawMessage(`{"throughput":4,"x":{"y":[1,"z"]}}`), 12)
	value := p.String()
	require.Equal(t, `{"data":{"throughput":4,"x":{"y":[1,"z"]}},"throughput":{"12":4,"3":2.5}}`, value,
		"keys in the order encoding/json sorts them, so the same profilings always read the same")
	back, err := ParseProfilings(value)
	require.NoError(t, err)
	require.Equal(t, p, back)
}

func TestParseProfilings(t *testing.T) {
	p, err := ParseProfilings("")
	require.NoError(t, err)
	require.Equal(t, Profilings{}, p)

	p, err = ParseProfilings(`{"throughput":{"2":1.5}}`)
	require.NoError(t, err)
	require.Equal(t, map[int32]float64{2: 1.5}, p.Throughput)

	for _, bad := range []string{`{`, `[]`, `{"throughput":{"two":1}}`, `{"throughput":{"0":1}}`,
		`{"throughput":{"-1":1}}`, `{"throughput":{"2":"fast"}}`, `{"throughput":{"99999999999":1}}`} {
		_, err := ParseProfilings(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "profilings: ")
	}
}

func TestProfilingsForgetTheCountsFarthestFromTheCurrent(t *testing.T) {
	p := Profilings{Throughput: map[int32]float64{}}
	for count := int32(1); count <= maxThroughputCounts; count++ {
		p.Throughput[count] = float64(count)
	}
	p = p.record(json.RawMessage(`{"throughput":1}`), 2*maxThroughputCounts)
	require.Len(t, p.Throughput, maxThroughputCounts)
	require.NotContains(t, p.Throughput, int32(1), "the count farthest from the current one goes")
	require.Contains(t, p.Throughput, int32(2*maxThroughputCounts))

	// Of two counts as far from the current one, the larger goes.
	// 1 and 513 are both 256 away from 257.
	p = Profilings{Throughput: map[int32]float64{}}
	for count := int32(1); count <= maxThroughputCounts+1; count++ {
		if count != maxThroughputCounts/2+1 {
			p.Throughput[count] = 1
		}
	}
	p = p.record(json.RawMessage(`{"throughput":1}`), maxThroughputCounts/2+1)
	require.Len(t, p.Throughput, maxThroughputCounts)
	require.Contains(t, p.Throughput, int32(1))
	require.NotContains(t, p.Throughput, int32(maxThroughputCounts+1))
}
