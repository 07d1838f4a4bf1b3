package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/status"
)

func listed(t *testing.T) []status.Job {
	jobs, err := status.List(context.Background(), cluster(), "")
	require.NoError(t, err)
	return jobs
}

func TestWriteTable(t *testing.T) {
	now := created.Add(time.Hour)
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, listed(t), printers.PrintOptions{WithNamespace: true}, now))
	assert.Equal(t, `NAMESPACE   NAME   KIND     PHASE        READY   RESTARTS   AGE
research    pi     MPIJob   Running      3/3     0          50m
research    sac    DIJob    Restarting   1/2     0          60m
team-a      dqn    DIJob    Pending      0/3     0          10m
team-b      sac    DIJob    Running      1/1     0          60s
`, b.String())

	b.Reset()
	require.NoError(t, writeTable(&b, listed(t)[:1], printers.PrintOptions{}, now))
	assert.Equal(t, `NAME   KIND     PHASE     READY   RESTARTS   AGE
pi     MPIJob   Running   3/3     0          50m
`, b.String())

	b.Reset()
	require.NoError(t, writeTable(&b, []status.Job{{Name: "new"}}, printers.PrintOptions{}, now))
	assert.Contains(t, b.String(), "<unknown>", "a job without a creation time has no age")
}

func TestWriteDocument(t *testing.T) {
	jobs := listed(t)
	var b bytes.Buffer
	require.NoError(t, status.WriteDocument(&b, status.JSON, status.JobList{Items: jobs}))
	var got struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got), b.String())
	require.Len(t, got.Items, 4)
	sac := got.Items[1]
	for key, want := range map[string]any{
		"namespace": "research", "name": "sac", "kind": "DIJob", "phase": "Restarting", "reason": "WasRunning",
		"recordedPhase": "Running", "ready": 1.0, "expected": 2.0, "restarts": 0.0, "created": "2026-01-02T03:04:05Z",
	} {
		assert.Equal(t, want, sac[key], key)
	}
	assert.Contains(t, sac["message"], "1 of 2 pods ready")
	assert.Equal(t, []any{map[string]any{"kind": "StatefulSet", "name": "sac-worker", "role": "worker",
		"expected": 2.0, "pods": 2.0, "ready": 1.0, "restarts": 0.0}}, sac["workloads"])

	b.Reset()
	require.NoError(t, status.WriteDocument(&b, status.YAML, jobs[0]))
	var one map[string]any
	require.NoError(t, yaml.Unmarshal(b.Bytes(), &one))
	assert.Equal(t, "pi", one["name"])
	assert.Equal(t, "Running", one["phase"])
	assert.Contains(t, b.String(), "phase: Running\n")

	assert.Error(t, status.WriteDocument(&b, status.Table, jobs))
}

func TestParseFormat(t *testing.T) {
	for _, f := range []string{"table", "json", "yaml"} {
		got, err := status.ParseFormat(f)
		assert.NoError(t, err)
		assert.Equal(t, status.Format(f), got)
	}
	_, err := status.ParseFormat("wide")
	assert.EqualError(t, err, `unknown output format "wide": want table, json or yaml`)
}

func TestNoneFound(t *testing.T) {
	assert.Equal(t, "No trainfn jobs found in research namespace.", status.NoneFound("research"))
	assert.Equal(t, "No trainfn jobs found.", status.NoneFound(""))
}
