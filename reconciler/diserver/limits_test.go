package diserver

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/reconciler/internal/closingtest"
)

func TestPolicyDefaults(t *testing.T) {
	p, err := Policy{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, Policy{WriteRate: DefaultWriteRate, WriteBurst: DefaultWriteBurst}, p)
	p, err = Policy{WriteRate: 0.5, WriteBurst: 1, TokenReview: true}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, Policy{WriteRate: 0.5, WriteBurst: 1, TokenReview: true}, p)
	for _, bad := range []Policy{{WriteRate: -1}, {WriteRate: math.NaN()}, {WriteRate: math.Inf(1)}, {WriteBurst: -2}} {
		_, err := bad.withDefaults()
		require.Error(t, err, "%+v", bad)
	}
}

// A bucket admits its burst, then refuses with the seconds until its next
// token; a refused request takes none. The rate is so low that no token
// comes back while the test runs.
func TestBucketRefusesPastItsBurst(t *testing.T) {
	b := newBucket(1.0/3600, 3, "writes")
	for range 3 {
		require.Nil(t, b.take())
	}
	for range 2 {
		over := b.take()
		require.NotNil(t, over)
		require.Equal(t, http.StatusTooManyRequests, over.status)
		require.Contains(t, over.message, "too many writes: the DI server admits 0.000277")
		// About an hour; at least what the rate says, less the test's time.
		require.Greater(t, over.retryAfter, 3500)
	}
}

func TestRefuseSetsTheHeadersOfItsStatus(t *testing.T) {
	for _, tc := range []struct {
		err    *requestError
		header map[string]string
	}{
		{&requestError{status: http.StatusTooManyRequests, message: "slow down", retryAfter: 3}, map[string]string{"Retry-After": "3", "Connection": ""}},
		{&requestError{status: http.StatusTooManyRequests, message: "slow down"}, map[string]string{"Retry-After": "1"}},
		{fail(http.StatusUnauthorized, "no token"), map[string]string{"WWW-Authenticate": `Bearer realm="trainfn-di-server"`, "Connection": "close"}},
		{fail(http.StatusForbidden, "not yours"), map[string]string{"WWW-Authenticate": "", "Connection": "close"}},
		{fail(http.StatusRequestEntityTooLarge, "too large"), map[string]string{"Connection": "close"}},
		{fail(http.StatusUnprocessableEntity, "out of bounds"), map[string]string{"Connection": "", "Retry-After": ""}},
	} {
		rec := httptest.NewRecorder()
		refuse(rec, tc.err)
		require.Equal(t, tc.err.status, rec.Code)
		for name, want := range tc.header {
			require.Equal(t, want, rec.Header().Get(name), "%d: %s", tc.err.status, name)
		}
		require.JSONEq(t, `{"success": false, "code": 1, "message": "`+tc.err.message+`", "data": null}`, rec.Body.String())
	}
}

// A caller refused before its body is read (from no pod of the job; a body
// declared too large) still sending that body gets its answer, and then a
// connection closed rather than reset.
func TestRefusedCallerGetsItsAnswer(t *testing.T) {
	u := untouchable{t: t}
	h, err := New(Config{Cache: jobWithCaller(), Live: u, Writer: u, Log: logr.Discard()})
	require.NoError(t, err)
	tooLarge := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		refuse(w, fail(http.StatusRequestEntityTooLarge, "too large"))
	})
	for name, c := range map[string]struct {
		handler http.Handler
		want    int
	}{
		"from no pod of the job": {h, http.StatusForbidden},
		"a body too big":         {tooLarge, http.StatusRequestEntityTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			got := closingtest.SendingAfterTheAnswer(t, NewHTTPServer("", c.handler), http.MethodPost,
				"/v2alpha1/ns.elastic.1/profilings", http.Header{"Content-Type": {"application/json"}}, 2*MaxProfilingsBody)
			require.Equal(t, c.want, got.Status, got.Body)
			require.True(t, got.Close, "the connection is not kept for another request")
		})
	}
}
