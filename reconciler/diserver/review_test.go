package diserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		headers []string
		token   string
		has     bool
		bad     string
	}{
		{},
		{headers: []string{"Bearer abc.def"}, token: "abc.def", has: true},
		{headers: []string{"bearer  abc"}, token: "abc", has: true},
		{headers: []string{"Basic dXNlcjpwdw=="}, has: true, bad: `want "Bearer <token>"`},
		{headers: []string{"Bearer"}, has: true, bad: `want "Bearer <token>"`},
		{headers: []string{"Bearer a b"}, has: true, bad: `want "Bearer <token>"`},
		{headers: []string{"Bearer a", "Bearer b"}, has: true, bad: "given 2 times"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, h := range tc.headers {
			r.Header.Add("Authorization", h)
		}
		token, has, bad := bearerToken(r)
		require.Equal(t, tc.has, has, tc.headers)
		if tc.bad != "" {
			require.NotNil(t, bad, tc.headers)
			require.Equal(t, http.StatusUnauthorized, bad.status)
			require.Contains(t, bad.message, tc.bad)
			// A refusal never repeats the credential.
			require.NotContains(t, bad.message, "dXNlcjpwdw")
			continue
		}
		require.Nil(t, bad, tc.headers)
		require.Equal(t, tc.token, token)
	}
}

func TestDescribe(t *testing.T) {
	require.Equal(t, "list pods in namespace ns", describe(authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "list", Resource: "pods"}))
	require.Equal(t, "patch statefulsets.apps/j-worker in namespace ns",
		describe(authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "patch", Group: "apps", Resource: "statefulsets", Name: "j-worker"}))
}
