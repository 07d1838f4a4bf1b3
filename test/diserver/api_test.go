//go:build e2e

package diserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	di "github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/render/handoff"
)

// api is a DI server under test: the http.Server the reconciler serves,
// on a loopback port.
type api struct {
	url string
	// requests counts what the DI server asks of the API server.
	requests *counter
}

// serving says how a test's DI server serves.
type serving struct {
	// served are the only namespaces served, when any.
	served []string
	policy di.Policy
}

// serveAPI serves the DI server for the test's duration, over the shared
// cache, reading live and writing with no more rights than it needs in ns
// (and, with policy.TokenReview, the rights to review tokens).
func serveAPI(t *testing.T, ns string, how serving) *api {
	t.Helper()
	c, requests := asDIServer(t, ns, how.policy.TokenReview)
	h, err := di.New(di.Config{
		Cache: cached, Live: c, Writer: c,
		Namespaces: how.served,
		Log:        testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
		Policy:     how.policy,
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := di.NewHTTPServer(l.Addr().String(), h)
	done := make(chan error, 1)
	go func() { done <- server.Serve(l) }()
	t.Cleanup(func() {
		_ = server.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("the DI server stopped: %v", err)
		}
	})
	return &api{url: "http://" + l.Addr().String(), requests: requests}
}

// caller sends requests to a DI server from one address of this machine,
// as the pod that holds it would, with a bearer token when it has one.
type caller struct {
	api    *api
	from   string
	token  string
	client *http.Client
}

// from is a caller of the API at ip, an address of this machine: a fake
// pod's, in the test cluster's loopback pod range, or 127.0.0.1.
func (s *api) from(ip string) *caller {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &caller{api: s, from: ip, client: &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}}
}

// fromPodOf is a caller at the address of a running pod of w, a DIJob's
// workload (its lowest index, which a scale-down keeps), once the DI
// server knows that pod as one of the job's.
func (s *api) fromPodOf(t *testing.T, w client.Object) *caller {
	t.Helper()
	var c *caller
	job := w.GetLabels()[handoff.JobNameLabel]
	generation, err := strconv.Atoi(w.GetAnnotations()[handoff.DIJobGeneration])
	if err != nil {
		t.Fatalf("%s: %v", w.GetName(), err)
	}
	path := replicasPath(w.GetNamespace(), job, generation)
	eventually(t, "the DI server knows a running pod of "+w.GetName(), func(ctx context.Context) error {
		up, _, err := podsOf(ctx, w)
		if err != nil || len(up) == 0 {
			return fmt.Errorf("no running pod with an IP yet (%v)", err)
		}
		lowest := -1
		for i := range up {
			if lowest < 0 || i < lowest {
				lowest = i
			}
		}
		c = s.from(up[lowest].Status.PodIP)
		a, err := c.try("GET", path, "")
		if err == nil && a.status != http.StatusOK {
			err = fmt.Errorf("from %s: %v", c.from, a)
		}
		return err
	})
	return c
}

// with is the caller presenting token.
func (c *caller) with(token string) *caller {
	out := *c
	out.token = token
	return &out
}

// answer is a response: its HTTP status, headers and envelope.
type answer struct {
	status int
	header http.Header
	// closed is whether the server said it closes the connection
	// (Connection: close, which the client takes out of the headers).
	closed bool
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
func (c *caller) call(t *testing.T, method, path, body string) answer {
	t.Helper()
	a, err := c.try(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// try is call for a goroutine other than the test's.
func (c *caller) try(method, path, body string) (answer, error) {
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.api.url+path, reader)
	if err != nil {
		return answer{}, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s from %s: %w", method, path, c.from, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header, closed: resp.Close}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if err := json.Unmarshal(raw, &a.Response); err != nil {
		return answer{}, fmt.Errorf("%s %s: the answer is not the envelope: %w\n%s", method, path, err, raw)
	}
	if a.Success != (a.status == http.StatusOK) || a.Success != (a.Code == di.CodeSucceeded) {
		return answer{}, fmt.Errorf("%s %s: the envelope disagrees with the status: %v", method, path, a)
	}
	return a, nil
}

func replicasPath(ns, job string, generation int) string {
	return fmt.Sprintf("/v2alpha1/%s.%s.%d/replicas", ns, job, generation)
}

func profilingsPath(ns, job string, generation int) string {
	return fmt.Sprintf("/v2alpha1/%s.%s.%d/profilings", ns, job, generation)
}
