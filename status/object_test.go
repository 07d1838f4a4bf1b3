package status

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/status/phase"
)

func TestADocumentIsShapedLikeItsOperatorsObject(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	j := Job{Namespace: "team-a", Name: "pi", Kind: "MPIJob", Created: created, Summary: phase.Summary{Phase: phase.Running, Reason: phase.ReasonAllReady, Expected: 3, Ready: 3}}
	obj, err := Object(j)
	require.NoError(t, err)
	assert.Equal(t, "kubeflow.org/v2beta1", obj.GetAPIVersion())
	assert.Equal(t, "MPIJob", obj.GetKind())
	assert.Equal(t, "pi", obj.GetName())
	assert.Equal(t, "team-a", obj.GetNamespace())
	assert.True(t, created.Time.Equal(obj.GetCreationTimestamp().Time))
	st := obj.Object["status"].(map[string]any)
	assert.Equal(t, "Running", st["phase"])
	for _, moved := range []string{"name", "namespace", "kind", "created"} {
		assert.NotContains(t, st, moved, "metadata's, not status's")
	}

	unknown, err := Object(Job{Name: "x", Kind: UnknownKind})
	require.NoError(t, err)
	assert.Equal(t, "trainfn.dev/v1alpha1", unknown.GetAPIVersion())
	assert.NotContains(t, unknown.Object["metadata"], "creationTimestamp")
}

func TestRefsRoundTrip(t *testing.T) {
	j := Job{Name: "train", Kind: "TrainJob"}
	assert.Equal(t, "trainjob/train", Ref(j))
	assert.Equal(t, "trainjob.trainer.kubeflow.org/train", Name(j), "as -o name writes it")
	assert.Equal(t, "trainjob/train", ParseRef(Name(j)))
	for in, want := range map[string]string{
		"train":                               "train",
		"trainjob/train":                      "trainjob/train",
		"trainjob.trainer.kubeflow.org/train": "trainjob/train",
		"PyTorchJob.kubeflow.org/train":       "PyTorchJob/train",
	} {
		assert.Equal(t, want, ParseRef(in), in)
	}
}
