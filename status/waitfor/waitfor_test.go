package waitfor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func doc(phase string, conditions ...map[string]any) *unstructured.Unstructured {
	cs := make([]any, len(conditions))
	for i, c := range conditions {
		cs[i] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"phase": phase, "reason": "JobFailed", "message": "Job pi-worker failed", "conditions": cs,
	}}}
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": typ + " says so"}
}

func TestParseRejectsWhatKubectlWaitRejects(t *testing.T) {
	for _, s := range []string{"", "delete", "condition", "condition=", "jsonpath=", "jsonpath={.status.phase", "ready"} {
		_, err := Parse(s)
		assert.Error(t, err, s)
	}
}

func TestConditionsAreMatchedInAnyCase(t *testing.T) {
	running := doc("Running", cond("Created", "True", "PyTorchJobCreated"), cond("Running", "True", "PyTorchJobRunning"))
	for s, want := range map[string]bool{
		"condition=Running":         true,
		"condition=running":         true,
		"condition=Running=true":    true,
		"condition=Running=False":   false,
		"condition=Succeeded":       false,
		"condition=Created=TRUE":    true,
		"condition=Restarting=True": false,
	} {
		f, err := Parse(s)
		require.NoError(t, err, s)
		got, err := f.Met(running)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
		assert.Empty(t, Never(running, got), "a running job can still meet %s", s)
	}
}

func TestJSONPathCompares(t *testing.T) {
	d := doc("Running", cond("Running", "True", "PyTorchJobRunning"))
	for s, want := range map[string]bool{
		"jsonpath={.status.phase}=Running":                                true,
		"jsonpath={.status.phase}=Failed":                                 false,
		"jsonpath={.status.phase}":                                        true,
		"jsonpath={.status.completionTime}":                               false,
		`jsonpath={.status.conditions[?(@.type=="Running")].status}=True`: true,
	} {
		f, err := Parse(s)
		require.NoError(t, err, s)
		got, err := f.Met(d)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
}

func TestAnEndedJobNeverMeetsWhatItDidNot(t *testing.T) {
	failed := doc("Failed", cond("Created", "True", "PyTorchJobCreated"), cond("Failed", "True", "BackoffLimitExceeded"))
	f, err := Parse("condition=Succeeded")
	require.NoError(t, err)
	met, err := f.Met(failed)
	require.NoError(t, err)
	assert.False(t, met)
	assert.Equal(t, "the job Failed (BackoffLimitExceeded): Failed says so", Never(failed, met), "the Failed condition's reason, the failing Job's")

	f, err = Parse("condition=Failed")
	require.NoError(t, err)
	met, err = f.Met(failed)
	require.NoError(t, err)
	assert.True(t, met)
	assert.Empty(t, Never(failed, met))

	noCondition := doc("Failed")
	assert.Equal(t, "the job Failed (JobFailed): Job pi-worker failed", Never(noCondition, false), "the phase's reason without a condition")
}
