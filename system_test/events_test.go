package system_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestChangeFeed polls GET /v1/events as an agent would: first poll
// without since, paging with next_since while has_more, an RFC 3339 first
// poll, grant filtering and scope_changed, and bad input.
func TestChangeFeed(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	w := s.createKey(t, a, "write")
	r := s.createKey(t, a, "read")
	start := time.Now().UTC().Add(-time.Second).Format(time.RFC3339)
	var cardIDs []string
	for _, addr := range []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"} {
		res := do(t, "POST", s.URL+"/v1/portfolio/cards", w, map[string]any{"address": addr})
		expect(t, res, http.StatusCreated, "")
		cardIDs = append(cardIDs, res.JSON(t)["card"].(map[string]any)["id"].(string))
	}
	// An owner-created card (grant none) is not signalled to agents.
	expect(t, do(t, "POST", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, map[string]any{"address": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}), http.StatusCreated, "")

	poll := func(key, query string) map[string]any {
		t.Helper()
		res := do(t, "GET", s.URL+"/v1/events"+query, key, nil)
		expect(t, res, http.StatusOK, "")
		return res.JSON(t)
	}
	page := poll(r, "?limit=2")
	if n := len(page["events"].([]any)); n != 2 || page["has_more"] != true {
		t.Fatalf("first page %v", page)
	}
	ev := page["events"].([]any)[0].(map[string]any)
	if ev["kind"] != "portfolio_changed" || ev["id"] == "" || ev["at"] == "" || len(ev) != 3 {
		t.Fatalf("event %v: want exactly id, at and kind", ev)
	}
	page = poll(r, "?limit=2&since="+url.QueryEscape(page["next_since"].(string)))
	if n := len(page["events"].([]any)); n != 1 || page["has_more"] != false {
		t.Fatalf("second page %v", page)
	}
	cursor := page["next_since"].(string)
	if again := poll(r, "?since="+url.QueryEscape(cursor)); len(again["events"].([]any)) != 0 || again["has_more"] != false || again["next_since"] != cursor {
		t.Fatalf("up-to-date poll %v", again)
	}
	// An RFC 3339 timestamp works for the first poll.
	if n := len(poll(r, "?since="+url.QueryEscape(start))["events"].([]any)); n != 3 {
		t.Fatalf("since %s shows %d events, want 3", start, n)
	}
	// A grant change is signalled as scope_changed to every key.
	expect(t, do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/"+cardIDs[0], a.OwnerSecret, map[string]any{"level": "none"}), http.StatusOK, "")
	page = poll(r, "?since="+url.QueryEscape(cursor))
	if evs := page["events"].([]any); len(evs) != 1 || evs[0].(map[string]any)["kind"] != "scope_changed" {
		t.Fatalf("after a grant change: %v", page)
	}
	// Bad input.
	for _, q := range []string{"?limit=0", "?limit=101", "?limit=x", "?since=yesterday", "?since=2026-01-01T00:00:00", "?since=ev1.zzzzzzzzzzzzzzzz", "?other=1"} {
		expect(t, do(t, "GET", s.URL+"/v1/events"+q, r, nil), http.StatusUnprocessableEntity, "VALIDATION")
	}
	expect(t, do(t, "GET", s.URL+"/v1/events", "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
}

// TestChangeFeedSinceOutsideTheClockRange: an RFC 3339 since is valid for
// any year, but Unix nanoseconds end in 1677 and 2262. A since after the
// end shows no events (2300-01-01 once wrapped around and showed them
// all), and one before the start shows every event kept (year 1000 once
// wrapped to 2169 and showed none).
func TestChangeFeedSinceOutsideTheClockRange(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)
	a := s.createAccount(t, "base")
	w := s.createKey(t, a, "write")
	for _, addr := range []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"} {
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", w, map[string]any{"address": addr}), http.StatusCreated, "")
	}
	latest := do(t, "GET", s.URL+"/v1/events", w, nil)
	expect(t, latest, http.StatusOK, "")
	cursor := latest.JSON(t)["next_since"]
	cases := []struct {
		since  string
		events int
	}{
		{"2300-01-01T00:00:00Z", 0},
		{"2262-04-11T23:47:16.854775807Z", 0},
		{"2262-04-11T23:47:16.854775808Z", 0},
		{"2262-04-12T00:00:00+01:00", 0},
		{"9999-12-31T23:59:59.999999999Z", 0},
		{"1677-09-21T00:12:43.145224192Z", 2},
		{"1677-09-21T00:12:43.145224191Z", 2},
		{"1000-01-01T00:00:00Z", 2},
		{"0001-01-01T00:00:00Z", 2},
		{"0000-01-01T00:00:00-23:59", 2},
	}
	for _, tc := range cases {
		r := do(t, "GET", s.URL+"/v1/events?since="+url.QueryEscape(tc.since), w, nil)
		expect(t, r, http.StatusOK, "")
		page := r.JSON(t)
		if n := len(page["events"].([]any)); n != tc.events || page["has_more"] != false || page["next_since"] != cursor {
			t.Errorf("since=%s: %s; want %d events, has_more false and next_since %v", tc.since, r.Body, tc.events, cursor)
		}
	}
}
