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
	"github.com/trainfn/trainfn/status/output"
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

// TestDocuments: -o json and -o yaml write what the Job holds, under the
// document's metadata and status.
func TestDocuments(t *testing.T) {
	jobs := listed(t)
	var b bytes.Buffer
	p, err := output.New("json", false, false)
	require.NoError(t, err)
	require.NoError(t, p.Print(&b, jobs, false))
	var got struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind     string         `json:"kind"`
			Metadata map[string]any `json:"metadata"`
			Status   map[string]any `json:"status"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got), b.String())
	assert.Equal(t, "List", got.Kind)
	require.Len(t, got.Items, 4)
	sac := got.Items[1]
	assert.Equal(t, "DIJob", sac.Kind)
	for key, want := range map[string]any{"namespace": "research", "name": "sac", "creationTimestamp": "2026-01-02T03:04:05Z"} {
		assert.Equal(t, want, sac.Metadata[key], key)
	}
	for key, want := range map[string]any{
		"phase": "Restarting", "reason": "WasRunning", "recordedPhase": "Running", "ready": 1.0, "expected": 2.0, "restarts": 0.0,
	} {
		assert.Equal(t, want, sac.Status[key], key)
	}
	assert.Contains(t, sac.Status["message"], "1 of 2 pods ready")
	assert.Equal(t, []any{map[string]any{"kind": "StatefulSet", "name": "sac-worker", "role": "worker",
		"expected": 2.0, "pods": 2.0, "ready": 1.0, "restarts": 0.0}}, sac.Status["workloads"])

	b.Reset()
	p, err = output.New("yaml", false, false)
	require.NoError(t, err)
	require.NoError(t, p.Print(&b, jobs[:1], true))
	var one map[string]any
	require.NoError(t, yaml.Unmarshal(b.Bytes(), &one))
	assert.Equal(t, "pi", one["metadata"].(map[string]any)["name"])
	assert.Equal(t, "Running", one["status"].(map[string]any)["phase"])
	assert.Contains(t, b.String(), "  phase: Running\n")
}

func TestNoneFound(t *testing.T) {
	assert.Equal(t, "No trainfn jobs found in research namespace.", status.NoneFound("research"))
	assert.Equal(t, "No trainfn jobs found.", status.NoneFound(""))
}
