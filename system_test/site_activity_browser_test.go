package system_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// rows returns the text of each cell of each row matching selector.
func (b *browserTab) rows(selector string) [][]string {
	b.t.Helper()
	return run(b, "cells of "+selector, chromedp.Evaluate[[][]string](`[...document.querySelectorAll(`+jsonString(selector)+`)].map(r => [...r.cells].map(c => c.textContent.trim()))`))
}

// Agent activity in a real browser: a key's reads, its change and its
// refusal are listed on the account's page and on the key's own page
// (reached from the API access panel), newest first, with the key's
// hostile name as text, and the filter narrows them to one card; an ID
// that is no key of the account is called unknown, a revoked key revoked.
func TestSiteActivityInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "activity.owner")
	e := spEnv{s: s, acct: o.account}
	e.grantCard(t, o.cards[0], "write")
	b := newBrowser(t)
	siteSignIn(t, b, o, "activity.owner")
	key, keyID := siteCreateKey(t, b, o, siteHostileImg, "write")

	for range 2 {
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, nil), http.StatusOK, "")
	}
	r := do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, nil)
	version := r.JSON(t)["card"].(map[string]any)["version"]
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, map[string]any{"expected_version": version, "note": "by the agent"}), http.StatusOK, "")
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, map[string]any{"expected_version": version, "note": "again"}), http.StatusConflict, "STALE_VERSION")
	expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[1], key, nil), http.StatusNotFound, "NOT_FOUND")

	// The lines are recorded about a second after the requests; requests
	// of one window with the same outcome share a line, so the counts are
	// summed (a window may end between the reads).
	counts := func() map[string]int {
		out := map[string]int{}
		for _, row := range b.rows("#activity tbody tr") {
			n, _ := strconv.Atoi(row[5])
			out[row[2]+" "+row[4]] += n
		}
		return out
	}
	total := func(m map[string]int) (n int) {
		for _, c := range m {
			n += c
		}
		return n
	}
	b.open(s.URL + "/access")
	b.submit(`a[href="/activity?key=` + keyID + `"]`)
	for start := time.Now(); total(counts()) < 6 && time.Since(start) < 15*time.Second; {
		time.Sleep(300 * time.Millisecond)
		b.open(s.URL + "/activity?key=" + keyID)
	}
	b.assertUsable("the key's activity")
	if h := b.text("h1"); h != "Activity of "+siteHostileImg {
		t.Fatalf("the heading reads %q", h)
	}
	want := map[string]int{
		"GET /v1/portfolio/cards/{card_id} 200 OK":              1 + 2,
		"PATCH /v1/portfolio/cards/{card_id} 200 OK":            1,
		"PATCH /v1/portfolio/cards/{card_id} 409 STALE_VERSION": 1,
		"unknown resources 404 NOT_FOUND":                       1,
	}
	if got := counts(); !maps.Equal(got, want) {
		t.Fatalf("the key's lines count %v, want %v", got, want)
	}
	rows := b.rows("#activity tbody tr")
	if rows[0][2] != "unknown resources" || rows[0][4] != "404 NOT_FOUND" || rows[len(rows)-1][4] != "200 OK" {
		t.Fatalf("not newest first: %q", rows)
	}
	if rows[len(rows)-1][3] != "Account card "+siteHostileScript {
		t.Fatalf("the read's resource reads %q", rows[len(rows)-1][3])
	}
	// Narrowed to the first card: its reads and writes, not the miss,
	// which is counted with the window's other unknown resources.
	b.fill("Card, Space or transaction ID", o.cards[0])
	b.submit(`#activity-filter button[type=submit]`)
	if rows := b.rows("#activity tbody tr"); len(rows) < 3 || slices.ContainsFunc(rows, func(r []string) bool { return r[4] == "404 NOT_FOUND" }) {
		t.Fatalf("filtered by card: %q", rows)
	}

	// An ID that is no key of the account is unknown, not revoked, and a
	// hostile one is shown as text.
	if status := b.open(s.URL + "/activity?key=" + url.QueryEscape(siteHostileImg)); status != http.StatusNotFound {
		t.Fatalf("an unknown key's page: status %d", status)
	}
	b.expectConsoleError("status of 404")
	if h := b.text("h1"); h != "Unknown key "+siteHostileImg || b.hasText("(revoked)") {
		t.Fatalf("an unknown key's page reads %q", b.text("body"))
	}
	// A revoked key's page still says revoked, over its kept lines.
	expect(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+keyID, o.OwnerSecret, nil), http.StatusNoContent, "")
	b.open(s.URL + "/activity?key=" + keyID)
	if h := b.text("h1"); h != "Activity of key "+keyID+" (revoked)" || len(b.rows("#activity tbody tr")) == 0 {
		t.Fatalf("a revoked key's page reads %q", h)
	}
	b.assertNoConsoleErrors()
}
