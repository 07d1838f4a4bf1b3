package node

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFitAsksLittleAndKeepsLimits: every CPU request is 50m, a limit alone
// gets a request beside it, limits and memory stay, and a claim's storage
// is no CPU.
func TestFitAsksLittleAndKeepsLimits(t *testing.T) {
	in := `apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      initContainers:
      - name: wait
        resources:
          requests:
            cpu: "2"
      containers:
      - name: launcher
        resources:
          limits:
            cpu: "1"
            memory: 1Gi
      - name: plain
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  resources:
    requests:
      storage: 1Gi
`
	out, err := Fit([]byte(in), func(obj map[string]any) {
		if obj["kind"] == "Job" {
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"edited": "yes"}
		}
	})
	require.NoError(t, err)
	want := `---
apiVersion: batch/v1
kind: Job
metadata:
  labels:
    edited: "yes"
  name: pi
spec:
  template:
    spec:
      containers:
      - name: launcher
        resources:
          limits:
            cpu: "1"
            memory: 1Gi
          requests:
            cpu: 50m
      - name: plain
      initContainers:
      - name: wait
        resources:
          requests:
            cpu: 50m
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  resources:
    requests:
      storage: 1Gi
`
	assert.Equal(t, want, string(out))
}
