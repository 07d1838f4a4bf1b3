package progress

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainfn/trainfn/reconciler/internal/closingtest"
)

// TestRefusedCallerGetsItsAnswer: a caller refused before its body is read
// (no token; a body declared too large) still sending that body gets its
// answer, and then a connection closed rather than reset.
func TestRefusedCallerGetsItsAnswer(t *testing.T) {
	h, err := New(Config{Cache: fake.NewClientBuilder().Build(), Writer: fake.NewClientBuilder().Build(), Metrics: NewMetrics(prometheus.NewRegistry())})
	require.NoError(t, err)
	tooLarge := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		refuse(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "body: too large").write(w)
	})
	for name, c := range map[string]struct {
		handler http.Handler
		want    int
	}{
		"no token":       {h, http.StatusForbidden},
		"a body too big": {tooLarge, http.StatusRequestEntityTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			got := closingtest.SendingAfterTheAnswer(t, NewHTTPServer("", c.handler, nil), http.MethodPost,
				"/apis/kubeflow.org/v1/namespaces/a/pytorchjobs/pi/status", http.Header{"Content-Type": {"application/json"}}, 2*MaxBody)
			assert.Equal(t, c.want, got.Status, got.Body)
			assert.True(t, got.Close, "the connection is not kept for another request")
		})
	}
}
