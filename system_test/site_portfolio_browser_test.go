package system_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The Portfolio in a real browser: validation as the owner types (the
// server's own rules), adding, editing while an agent writes the same card
// through /v1, and deleting; hostile names stay text.

// waitText waits until the element matching selector says something that
// contains want, and returns what it says.
func (b *browserTab) waitText(selector, want string) string {
	b.t.Helper()
	js := `(() => { const e = document.querySelector(` + jsonString(selector) + `); return e ? e.textContent : ""; })()`
	poll := `(() => { const e = document.querySelector(` + jsonString(selector) + `); return !!e && e.textContent.includes(` + jsonString(want) + `); })()`
	run(b, "wait for "+selector+" to say "+want, chromedp.Poll[bool](poll, chromedp.WithPollingInterval(50*time.Millisecond)))
	return run(b, "text of "+selector, chromedp.Evaluate[string](js))
}

// owCards lists the Account cards the owner sees.
func owCards(t *testing.T, s *server, secret string) []map[string]any {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/portfolio/cards", secret, nil)
	expect(t, r, http.StatusOK, "")
	var out []map[string]any
	for _, c := range r.JSON(t)["cards"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

func TestSitePortfolioInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "portfolio.owner")
	b := newBrowser(t)
	siteSignIn(t, b, o, "portfolio.owner")

	if status := b.open(s.URL + "/portfolio"); status != http.StatusOK {
		t.Fatalf("portfolio page: %d", status)
	}
	b.assertUsable("the portfolio")
	if names := b.texts("#portfolio-cards td.text"); !slices.Contains(names, siteHostileScript) {
		t.Fatalf("the portfolio shows %q", names)
	}

	// Validation as the owner types, in the API's words.
	// The page checks 250 ms after the last key, so a slow typist (a
	// loaded machine) may first see the check of a prefix ("checksum does
	// not match"): wait for the whole address's answer.
	b.fill("Bitcoin address", "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA")
	if said := b.waitText("#add-card-check", "Bitcoin"); !strings.HasPrefix(said, "address:") {
		t.Fatalf("typing a litecoin address says %q", said)
	}
	address := owAddress(960)
	b.fill("Bitcoin address", address)
	b.waitText("#add-card-check", "Looks good.")
	b.fill("Name", siteHostileImg)
	b.fill("Color", "violet")
	if status := b.submit(`#add-card button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Account card added") {
		t.Fatalf("add: %d at %s", status, b.location())
	}
	var card map[string]any
	for _, c := range owCards(t, s, o.OwnerSecret) {
		if c["address"] == address {
			card = c
		}
	}
	if card == nil || card["name"] != siteHostileImg || card["color_key"] != "violet" || card["grant"] != "none" {
		t.Fatalf("the card added in the browser: %v", card)
	}
	id := card["id"].(string)

	// The owner is typing on the card's page when an agent renames it
	// through /v1. (Typing starts first: a page the owner is not yet
	// editing takes the agent's change from the live view, and a save
	// from there is not a conflict.)
	owGrant(t, s, o.OwnerSecret, id, "write")
	_, key := owKey(t, s, o.OwnerSecret, "write", "portfolio agent")
	b.open(s.URL + "/portfolio/cards/" + id)
	b.assertUsable("the card page")
	b.fill("Name", "Owner's name")
	r := do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+id, key, map[string]any{"expected_version": card["version"], "name": "Agent's name"})
	expect(t, r, http.StatusOK, "")
	b.fill("Note", "typed by the owner")
	if status := b.submit(`form[action="/portfolio/cards/` + id + `"] button[type=submit]`); status != http.StatusConflict {
		t.Fatalf("a save after the agent's: %d, want 409", status)
	}
	b.expectConsoleError("status of 409")
	if now := b.text("#stored-name"); now != "Agent's name" {
		t.Fatalf("the page shows the stored name %q", now)
	}
	if typed := b.value("#card-name"); typed != "Owner's name" {
		t.Fatalf("what the owner typed became %q", typed)
	}
	if note := b.value("#card-note"); note != "typed by the owner" {
		t.Fatalf("the owner's note became %q", note)
	}
	if status := b.submit(`form[action="/portfolio/cards/` + id + `"] button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "saved") {
		t.Fatalf("save again: %d", status)
	}
	r = do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, key, nil)
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t)["card"].(map[string]any); got["name"] != "Owner's name" || got["note"] != "typed by the owner" {
		t.Fatalf("the agent reads %v", got)
	}

	// Delete, through the confirmation page.
	b.open(s.URL + "/portfolio/cards/" + id)
	b.submit(`a[href="/portfolio/cards/` + id + `/delete"]`)
	b.assertUsable("the delete confirmation")
	if status := b.submit(`form[action="/portfolio/cards/` + id + `/delete"] button`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "deleted") {
		t.Fatalf("delete: %d", status)
	}
	expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, key, nil), http.StatusNotFound, "NOT_FOUND")
	b.assertNoConsoleErrors()
}
