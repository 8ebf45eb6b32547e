package system_test

import (
	"net/http"
	"testing"
)

// GET /owner/v1/account/summary end to end: the owner's counts follow
// what the account holds (a card hidden from every key included), an
// API key is refused on the owner API, and an agent never sees it.
func TestAccountSummaryEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	summary := func(bearer string) map[string]any {
		t.Helper()
		r := do(t, "GET", s.URL+"/owner/v1/account/summary", bearer, nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		owExpectFields(t, "the summary", m, "plan", "portfolio_cards", "bookmark_spaces", "bookmark_cards", "sheet_rows", "notes", "read_keys", "write_keys", "keys")
		return m
	}
	usage := func(m map[string]any, field string) (used, limit float64) {
		t.Helper()
		u := owObject(t, m, field)
		return u["used"].(float64), u["limit"].(float64)
	}

	m := summary(a.OwnerSecret)
	if used, limit := usage(m, "portfolio_cards"); m["plan"] != "base" || used != 0 || limit != 10 {
		t.Fatalf("a new account: %v", m)
	}
	if used, limit := usage(m, "bookmark_spaces"); used != 1 || limit != 1 {
		t.Fatalf("a new account's Spaces: %v", m)
	}

	_, write := owKey(t, s, a.OwnerSecret, "write", "writer")
	owKey(t, s, a.OwnerSecret, "read", "reader")
	expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", write, map[string]any{"address": owAddress(1)}), http.StatusCreated, "")
	expect(t, do(t, "POST", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, map[string]any{"address": owAddress(2)}), http.StatusCreated, "")

	session := owSession(t, s, a)
	m = summary(session)
	if used, _ := usage(m, "portfolio_cards"); used != 2 {
		t.Fatalf("two Account cards, one hidden from the keys: %v", m)
	}
	if used, limit := usage(m, "keys"); used != 2 || limit != 100 || m["read_keys"] != 1.0 || m["write_keys"] != 1.0 {
		t.Fatalf("a read key and a write key: %v", m)
	}

	// The owner API takes no API key, and the agent API has no summary.
	owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/account/summary", write, nil))
	expect(t, do(t, "GET", s.URL+"/v1/account/summary", write, nil), http.StatusNotFound, "NOT_FOUND")
}
