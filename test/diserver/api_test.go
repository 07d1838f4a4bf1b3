//go:build e2e

package diserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"

	di "github.com/trainfn/trainfn/reconciler/diserver"
)

// api is a DI server under test, served over HTTP.
type api struct {
	url string
}

// serveAPI serves the DI server for the test's duration, over the shared
// cache, reading live and writing with no more rights than it needs in ns;
// it serves only the namespaces given as served when any are.
func serveAPI(t *testing.T, ns string, served ...string) *api {
	t.Helper()
	c := asDIServer(t, ns)
	h, err := di.New(di.Config{
		Cache: cached, Live: c, Writer: c,
		Namespaces: served,
		Log:        testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return &api{url: s.URL}
}

// answer is a response: its HTTP status and envelope.
type answer struct {
	status int
	di.Response
}

func (a answer) String() string {
	return fmt.Sprintf("%d %+v", a.status, a.Response)
}

// hosts is the answer's data as the list of strings the API answers with.
func (a answer) hosts(t *testing.T) []string {
	t.Helper()
	list, ok := a.Data.([]any)
	if !ok {
		t.Fatalf("data is %T, not a list: %v", a.Data, a)
	}
	out := make([]string, len(list))
	for i, v := range list {
		if out[i], ok = v.(string); !ok {
			t.Fatalf("data[%d] is %T, not a string: %v", i, v, a)
		}
	}
	return out
}

// call sends a request with body (none when empty) and reads the envelope.
func (s *api) call(t *testing.T, method, path, body string) answer {
	t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	if err := json.Unmarshal(raw, &a.Response); err != nil {
		t.Fatalf("%s %s: the answer is not the envelope: %v\n%s", method, path, err, raw)
	}
	if a.Success != (a.status == http.StatusOK) || a.Success != (a.Code == di.CodeSucceeded) {
		t.Fatalf("%s %s: the envelope disagrees with the status: %v", method, path, a)
	}
	return a
}

func replicasPath(ns, job string, generation int) string {
	return fmt.Sprintf("/v2alpha1/%s.%s.%d/replicas", ns, job, generation)
}

func profilingsPath(ns, job string, generation int) string {
	return fmt.Sprintf("/v2alpha1/%s.%s.%d/profilings", ns, job, generation)
}
