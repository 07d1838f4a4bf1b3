package closing_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/reconciler/internal/closing"
	"github.com/trainfn/trainfn/reconciler/internal/closingtest"
)

// A caller answered before its body was read, and still sending it, gets
// its answer, then a connection that takes the rest and closes cleanly.
func TestAfterRefusal(t *testing.T) {
	refused := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		closing.AfterRefusal(w)
		w.WriteHeader(http.StatusForbidden)
	})
	got := closingtest.SendingAfterTheAnswer(t, &http.Server{Handler: refused, ReadHeaderTimeout: 5 * time.Second}, http.MethodPost, "/", nil, 128<<10)
	require.Equal(t, http.StatusForbidden, got.Status)
	require.True(t, got.Close, "the connection is not kept for another request")
}
