package diserver

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeReplicas(t *testing.T) {
	for body, want := range map[string]int64{
		`{"replicas": 1}`:          1,
		` {"replicas":3} `:         3,
		"{\"replicas\": 2}\n":      2,
		`{"replicas": 1000000000}`: 1000000000,
	} {
		t.Run(body, func(t *testing.T) {
			n, err := decodeReplicas(strings.NewReader(body))
			require.Nil(t, err)
			require.Equal(t, want, n)
		})
	}
}

// refusal is the answer a body should get: its status, and words its
// message should contain.
type refusal struct {
	status   int
	mentions string
}

// requireRefusals decodes each body and checks the refusal it gets. A
// body's first 40 bytes name its subtest: some bodies are kilobytes long.
func requireRefusals[T any](t *testing.T, decode func(io.Reader) (T, *requestError), refusals map[string]refusal) {
	t.Helper()
	for body, want := range refusals {
		name := body
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			_, err := decode(strings.NewReader(body))
			require.NotNil(t, err)
			require.Equal(t, want.status, err.status, err.message)
			require.Contains(t, err.message, want.mentions)
		})
	}
}

func TestDecodeReplicasRefuses(t *testing.T) {
	requireRefusals(t, decodeReplicas, map[string]refusal{
		``:                               {http.StatusBadRequest, "body: missing"},
		"  \n":                           {http.StatusBadRequest, "body: missing"},
		`{}`:                             {http.StatusBadRequest, "replicas: required"},
		`{"replicas": null}`:             {http.StatusBadRequest, "replicas: required"},
		`{"replicas": 0}`:                {http.StatusBadRequest, "replicas: must be at least 1, got 0"},
		`{"replicas": -2}`:               {http.StatusBadRequest, "replicas: must be at least 1, got -2"},
		`{"replicas": "1"}`:              {http.StatusBadRequest, "replicas: want an integer, got string"},
		`{"replicas": 1.5}`:              {http.StatusBadRequest, "replicas: want an integer"},
		`{"replicas": true}`:             {http.StatusBadRequest, "replicas: want an integer"},
		`{"replicas": 1e30}`:             {http.StatusBadRequest, "replicas: want an integer"},
		`{"replicas": 1, "extra": 2}`:    {http.StatusBadRequest, `unknown field "extra"`},
		`{"replica": 1}`:                 {http.StatusBadRequest, `unknown field "replica"`},
		`[1]`:                            {http.StatusBadRequest, `want {"replicas": n}`},
		`2`:                              {http.StatusBadRequest, `want {"replicas": n}`},
		`{"replicas": 1`:                 {http.StatusBadRequest, "not JSON"},
		`replicas=1`:                     {http.StatusBadRequest, "not JSON"},
		`{"replicas": 1}{"replicas": 1}`: {http.StatusBadRequest, "more than one JSON value"},
		`{"replicas": 1} x`:              {http.StatusBadRequest, "more than one JSON value"},
		`{"replicas": 1, "pad": "` + strings.Repeat("x", MaxReplicasBody) + `"}`: {http.StatusRequestEntityTooLarge, "larger than 4096 bytes"},
	})
}

func TestDecodeReplicasWithoutBody(t *testing.T) {
	_, err := decodeReplicas(nil)
	require.NotNil(t, err)
	require.Equal(t, http.StatusBadRequest, err.status)
}

func TestDecodeProfilings(t *testing.T) {
	data, err := decodeProfilings(strings.NewReader(`{"data": { "throughput": 12.5, "nested": {"a": [1, 2]} }}`))
	require.Nil(t, err)
	require.JSONEq(t, `{"throughput": 12.5, "nested": {"a": [1, 2]}}`, string(data))
	require.Equal(t, `{"throughput":12.5,"nested":{"a":[1,2]}}`, string(data), "stored compact, in the order posted")
}

func TestDecodeProfilingsRefuses(t *testing.T) {
	requireRefusals(t, decodeProfilings, map[string]refusal{
		``:                         {http.StatusBadRequest, "body: missing"},
		`{}`:                       {http.StatusBadRequest, "data: required"},
		`{"data": null}`:           {http.StatusBadRequest, "data: must be a JSON object, got null"},
		`{"data": [1]}`:            {http.StatusBadRequest, "got an array"},
		`{"data": "x"}`:            {http.StatusBadRequest, "got a string"},
		`{"data": 3}`:              {http.StatusBadRequest, "got a number"},
		`{"data": true}`:           {http.StatusBadRequest, "got a boolean"},
		`{"data": {}, "other": 1}`: {http.StatusBadRequest, `unknown field "other"`},
		`{"data": {"a": }}`:        {http.StatusBadRequest, "not JSON"},
		`{"data": {"x": "` + strings.Repeat("x", MaxProfilingsBody) + `"}}`: {http.StatusRequestEntityTooLarge, "larger than 65536 bytes"},
	})
}

// A body of exactly the limit is taken: the limit is inclusive.
func TestDecodeProfilingsAtTheLimit(t *testing.T) {
	head, tail := `{"data": {"x": "`, `"}}`
	body := head + strings.Repeat("x", MaxProfilingsBody-len(head)-len(tail)) + tail
	require.Len(t, body, MaxProfilingsBody)
	_, err := decodeProfilings(strings.NewReader(body))
	require.Nil(t, err)
}
