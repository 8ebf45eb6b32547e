package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// fakeAPI stands in for the Agent API in the helpers' unit tests: each
// route ("METHOD /v1/path") answers with the function the test gives it,
// and every request is recorded for the test to inspect. A route the test
// did not give answers 404 NOT_FOUND, as the server does.
type fakeAPI struct {
	routes map[string]func(fakeRequest) (status int, body string)

	mu       sync.Mutex
	requests []fakeRequest
}

// fakeRequest is one request the fake received.
type fakeRequest struct {
	Route          string // "METHOD /v1/path"
	Query          url.Values
	IdempotencyKey string
	Body           map[string]any
}

// newFake starts a fakeAPI with routes and returns an Agent talking to it.
func newFake(t *testing.T, routes map[string]func(fakeRequest) (int, string)) (*Agent, *fakeAPI) {
	t.Helper()
	f := &fakeAPI{routes: routes}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	a, err := New(srv.URL, "awk.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, f
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := fakeRequest{Route: r.Method + " " + r.URL.Path, Query: r.URL.Query(), IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		json.Unmarshal(b, &req.Body)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	status, body := fakeError(http.StatusNotFound, "NOT_FOUND")
	if answer := f.routes[req.Route]; answer != nil {
		status, body = answer(req)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// sent returns the requests made to route, in order.
func (f *fakeAPI) sent(route string) []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.requests {
		if r.Route == route {
			out = append(out, r)
		}
	}
	return out
}

// fakeError is an error answer in the API's shape.
func fakeError(status int, code string) (int, string) {
	return status, fmt.Sprintf(`{"code":%q,"error":"fake %s"}`, code, code)
}

// fakeJSON is a 200 answer of v encoded.
func fakeJSON(v any) (int, string) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return http.StatusOK, string(b)
}
