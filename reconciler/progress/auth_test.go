package progress

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainfn/trainfn/reconciler/internal/expiring"
	"github.com/trainfn/trainfn/reconciler/observed"
)

// jwt is a token of three base64url parts whose payload is claims, signed
// by nobody: the pre-filter does not check signatures.
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
}

func podClaims(aud string, exp int64, namespace, pod string) string {
	return `{"aud":` + aud + `,"exp":` + strconv.FormatInt(exp, 10) + `,"sub":"system:serviceaccount:` + namespace + `:default",` +
		`"kubernetes.io":{"namespace":"` + namespace + `","pod":{"name":"` + pod + `","uid":"u"},"serviceaccount":{"name":"default","uid":"s"}}}`
}

func TestPrefilterPassesWhatMayBeAPodsToken(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	later := now.Unix() + 3600
	for name, token := range map[string]string{
		"an audience list":  jwt(podClaims(`["trainfn.dev/progress"]`, later, "a", "pi-worker-0")),
		"one audience":      jwt(podClaims(`"trainfn.dev/progress"`, later, "a", "pi-worker-0")),
		"among audiences":   jwt(podClaims(`["https://kubernetes.default.svc","trainfn.dev/progress"]`, later, "a", "pi-worker-0")),
		"a second to spare": jwt(podClaims(`["trainfn.dev/progress"]`, now.Unix()+1, "a", "pi-worker-0")),
	} {
		assert.Nil(t, prefilter(token, "a", now), name)
	}
}

func TestPrefilterRefusesWhatCannotBeAPodsToken(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	later := now.Unix() + 3600
	enc := base64.RawURLEncoding.EncodeToString
	for name, c := range map[string]struct{ token, says string }{
		"random":             {"c2VjcmV0", "three parts"},
		"two parts":          {enc([]byte("{}")) + "." + enc([]byte("{}")), "three parts"},
		"four parts":         {jwt(`{}`) + ".x", "three parts"},
		"not base64url":      {"a.b+c/.d", "base64url"},
		"padded":             {enc([]byte(`{}`)) + "." + base64.URLEncoding.EncodeToString([]byte(`{"a":1}`)) + ".c2ln", "base64url"},
		"an empty part":      {enc([]byte(`{}`)) + "." + enc([]byte(podClaims(`["trainfn.dev/progress"]`, later, "a", "p"))) + ".", "base64url"},
		"payload not JSON":   {jwt("not json"), "JSON object"},
		"API server's":       {jwt(podClaims(`["https://kubernetes.default.svc"]`, later, "a", "p")), "audience"},
		"no audience":        {jwt(`{"exp":` + strconv.FormatInt(later, 10) + `,"kubernetes.io":{"namespace":"a","pod":{"name":"p"}}}`), "audience"},
		"expired":            {jwt(podClaims(`["trainfn.dev/progress"]`, now.Unix(), "a", "p")), "expired"},
		"no expiry":          {jwt(`{"aud":["trainfn.dev/progress"],"kubernetes.io":{"namespace":"a","pod":{"name":"p"}}}`), "expired"},
		"not bound to a pod": {jwt(podClaims(`["trainfn.dev/progress"]`, later, "a", "")), "pod"},
		"another namespace":  {jwt(podClaims(`["trainfn.dev/progress"]`, later, "b", "p")), `namespace "b"`},
		"too long":           {strings.Repeat("a", maxTokenLength+1), "longer"},
	} {
		refused := prefilter(c.token, "a", now)
		if assert.NotNil(t, refused, name) {
			assert.Equal(t, int32(http.StatusForbidden), refused.status.Code, name)
			assert.Contains(t, refused.status.Message, c.says, name)
		}
	}
}

// A token the pre-filter refuses costs no review and no bucket token: a
// flood of them leaves the reviews of pods' tokens be.
func TestMadeUpTokensCostNoReview(t *testing.T) {
	v := testReviewer(1, 1, 1, 1)
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	for i := range 10 {
		r.Header.Set("Authorization", "Bearer random-"+strconv.Itoa(i))
		_, refused := v.authenticate(context.Background(), r, observed.Key{Namespace: "a", Kind: "PyTorchJob", Name: "pi"})
		require.NotNil(t, refused)
		assert.Equal(t, int32(http.StatusForbidden), refused.status.Code)
	}
	assert.Nil(t, v.bucket.take(), "the reviews' bucket is full still")
}

// One address's reviews are bounded before the bucket of all: past its
// burst it is answered 429, and another address is reviewed still.
func TestReviewsAreBoundedPerAddress(t *testing.T) {
	v := testReviewer(1, 2, 1, 10)
	ctx := context.Background()
	for i := range 2 {
		_, refused := v.review(ctx, "token-"+strconv.Itoa(i), "10.0.0.1")
		require.Nil(t, refused)
	}
	_, refused := v.review(ctx, "token-2", "10.0.0.1")
	require.NotNil(t, refused)
	assert.Equal(t, int32(http.StatusTooManyRequests), refused.status.Code)
	assert.Contains(t, refused.status.Message, "10.0.0.1")
	_, refused = v.review(ctx, "token-0", "10.0.0.1")
	assert.Nil(t, refused, "a token reviewed already costs no review")
	_, refused = v.review(ctx, "token-3", "10.0.0.2")
	assert.Nil(t, refused, "another address has a bucket of its own")
}

func TestRemoteHostDropsThePort(t *testing.T) {
	for addr, want := range map[string]string{"10.0.0.1:4321": "10.0.0.1", "[fd00::1]:4321": "fd00::1", "pipe": "pipe"} {
		assert.Equal(t, want, remoteHost(&http.Request{RemoteAddr: addr}), addr)
	}
}

// testReviewer reviews through a fake client: its TokenReviews come back
// unauthenticated, which is all these tests need of them; the e2e test
// (test/reconcile) reviews real tokens with a real API server.
func testReviewer(perAddress float64, addressBurst int, perSecond float64, burst int) *reviewer {
	now := func() time.Time { return time.Unix(1_800_000_000, 0) }
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return nil },
	})
	return &reviewer{
		client: c, cache: c,
		bucket:    newBucket(perSecond, burst, "reviews of new bearer tokens"),
		addresses: newAddressBuckets(perAddress, addressBurst, now),
		reviews:   expiring.New[[32]byte, reviewedPod](ReviewCacheTTL, maxCachedReviews, now),
		now:       now,
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":   "abc",
		"bearer abc":   "abc",
		"BEARER  abc ": "abc",
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", header)
		got, refused := bearerToken(r)
		assert.Nil(t, refused, header)
		assert.Equal(t, want, got, header)
	}
	for _, headers := range [][]string{nil, {""}, {"Bearer"}, {"Bearer "}, {"Bearer a b"}, {"Bearer a\tb"}, {"Basic abc"}, {"Bearer a", "Bearer a"}} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		for _, h := range headers {
			r.Header.Add("Authorization", h)
		}
		_, refused := bearerToken(r)
		if assert.NotNil(t, refused, "%q", headers) {
			assert.Equal(t, int32(http.StatusForbidden), refused.status.Code)
		}
	}
}
