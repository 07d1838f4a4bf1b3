package progress

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

const testCA = "-----BEGIN CERTIFICATE-----\nnew\n-----END CERTIFICATE-----\n"

// caConfigMap is a CA ConfigMap as the render writes it, with data.
func caConfigMap(name, job string, annotated bool, data map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: handoff.JobLabels(job)}, Data: data}
	if annotated {
		cm.Annotations = map[string]string{CAAnnotation: "true"}
	}
	return cm
}

func testFiller(c client.Client) (*CAFiller, *write.Writer) {
	w := &write.Writer{Client: c, Writes: writes()}
	return &CAFiller{Cache: c, Writer: *w, CA: func() ([]byte, <-chan struct{}) { return []byte(testCA), nil }}, w
}

func caOf(t *testing.T, c client.Client, name string) string {
	t.Helper()
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: "team", Name: name}, &cm))
	return cm.Data[CAKey]
}

// Fill finds each kind's ConfigMap by the name the render gives it: a
// PyTorchJob's is <job>-pytorch-progress-ca, and the <job>-progress-ca
// beside it is another kind's job of the same name.
func TestFillFillsTheRendersConfigMapOfEachKind(t *testing.T) {
	for _, kind := range []string{handoff.MPIJobKind, handoff.PyTorchJobKind, handoff.DIJobKind, TrainJobKind} {
		t.Run(kind, func(t *testing.T) {
			name := handoff.ProgressCAName(kind, "pi")
			others := map[string]bool{"pi-progress-ca": true, "pi-pytorch-progress-ca": true}
			delete(others, name)
			objs := []client.Object{caConfigMap(name, "pi", true, nil)}
			for other := range others {
				objs = append(objs, caConfigMap(other, "pi", true, nil))
			}
			c := fakeCluster(objs...)
			f, _ := testFiller(c)
			require.NoError(t, f.Fill(context.Background(), &observed.Job{Namespace: "team", Kind: kind, Name: "pi"}))
			assert.Equal(t, testCA, caOf(t, c, name))
			for other := range others {
				assert.Empty(t, caOf(t, c, other), "%s is another kind's", other)
			}
		})
	}
}

// A ConfigMap that holds the CA already is not written again, and one
// without the annotation not at all; FillAll fills the others.
func TestFillWritesOnlyWhatDiffers(t *testing.T) {
	c := fakeCluster(
		caConfigMap("same-progress-ca", "same", true, map[string]string{CAKey: testCA}),
		caConfigMap("old-progress-ca", "old", true, map[string]string{CAKey: "old", "other": "kept"}),
		caConfigMap("mine-progress-ca", "mine", false, nil),
	)
	f, w := testFiller(c)
	require.NoError(t, f.Fill(context.Background(), &observed.Job{Namespace: "team", Kind: handoff.MPIJobKind, Name: "same"}))
	require.NoError(t, f.Fill(context.Background(), &observed.Job{Namespace: "team", Kind: handoff.MPIJobKind, Name: "mine"}))
	assert.Equal(t, 0.0, value(w.Writes.WithLabelValues("ConfigMap")), "nothing to write")
	assert.Empty(t, caOf(t, c, "mine-progress-ca"), "not annotated: not the reconciler's to fill")

	require.NoError(t, f.FillAll(context.Background()))
	assert.Equal(t, 1.0, value(w.Writes.WithLabelValues("ConfigMap")), "one ConfigMap differed")
	assert.Equal(t, testCA, caOf(t, c, "old-progress-ca"))
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: "team", Name: "old-progress-ca"}, &cm))
	assert.Equal(t, "kept", cm.Data["other"], "a merge patch of the CA only")
	assert.Empty(t, caOf(t, c, "mine-progress-ca"))
}
