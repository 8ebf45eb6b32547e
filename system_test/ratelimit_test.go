package system_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestEdgeRateLimits drives a server with the spec's limits: 20 regular
// requests pass from one client, the 21st gets 429 with Retry-After and the
// docs link; another client (named by a trusted proxy) is unaffected; the
// public documents are never limited.
func TestEdgeRateLimits(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--limits", "spec", "--trusted-proxies", "127.0.0.0/8")
	key := s.createKey(t, s.createAccount(t, "base"), "read")
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }
	for i := range 20 {
		r := do(t, "GET", s.URL+"/v1/me", key, nil, from("198.51.100.10")...)
		expect(t, r, http.StatusOK, "")
		if i == 0 && r.JSON(t)["rate_limit"].(map[string]any)["remaining"] != nil {
			t.Fatalf("rate_limit.remaining must be null: %s", r.Body)
		}
	}
	r := do(t, "GET", s.URL+"/v1/me", key, nil, from("198.51.100.10")...)
	expect(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if msg := r.JSON(t)["error"].(string); !strings.Contains(msg, "/v1/docs") {
		t.Fatalf("429 message %q does not link the docs", msg)
	}
	expect(t, do(t, "GET", s.URL+"/v1/me", key, nil, from("198.51.100.11")...), http.StatusOK, "")
	for range 30 {
		expect(t, do(t, "GET", s.URL+"/v1/docs/sheets", "", nil, from("198.51.100.10")...), http.StatusOK, "")
	}
	// Sheet routes have their own budget: the limited client still reaches them.
	r = do(t, "GET", s.URL+"/v1/bookmark-spaces/none/sheet", key, nil, from("198.51.100.10")...)
	expect(t, r, http.StatusNotFound, "NOT_FOUND")
}
