package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
)

// Credentials the tests hand the CLI. No output may ever contain them, except
// where the server returns a freshly created secret.
const (
	testAdminToken  = "admin-token-5f1c0de"
	testOwnerSecret = "owner-secret-9a8b7c6"
)

// request is what a fake server saw.
type request struct {
	method string
	path   string // escaped, as sent on the wire
	header http.Header
	body   []byte
}

// fakeServer records every request and answers each with one canned response.
type fakeServer struct {
	*httptest.Server
	status int
	body   string

	mu       sync.Mutex
	requests []request
}

func newFakeServer(t *testing.T, status int, body string) *fakeServer {
	t.Helper()
	f := &fakeServer{status: status, body: body}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, request{r.Method, r.URL.EscapedPath(), r.Header.Clone(), data})
		f.mu.Unlock()
		if f.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(f.status)
		io.WriteString(w, f.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) seen() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.requests...)
}

// only returns the single request the server saw, failing the test otherwise.
func (f *fakeServer) only(t *testing.T) request {
	t.Helper()
	seen := f.seen()
	if len(seen) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(seen))
	}
	return seen[0]
}

// result is one run of the CLI.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the CLI in-process with env as its whole environment.
func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code := run(context.Background(), args, getenv, &stdout, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// servers is an admin and an owner fake server plus the environment that
// points the CLI at them with valid credentials.
type servers struct {
	admin, owner *fakeServer
	env          map[string]string
}

func newServers(t *testing.T, status int, body string) *servers {
	admin := newFakeServer(t, status, body)
	owner := newFakeServer(t, status, body)
	return &servers{admin, owner, map[string]string{
		"ADDRWATCH_ADMIN_URL":    admin.URL,
		"ADDRWATCH_SERVER":       owner.URL,
		"ADDRWATCH_ADMIN_TOKEN":  testAdminToken,
		"ADDRWATCH_OWNER_SECRET": testOwnerSecret,
		// Point the token-file fallback somewhere empty so a developer's
		// ./data cannot change a test's outcome.
		"ADDRWATCH_DATA": "/nonexistent-addrwatch-test-data",
	}}
}

// assertJSONEqual compares two JSON documents by value.
func assertJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test: want %q is not JSON: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body = %s, want %s", got, want)
	}
}
