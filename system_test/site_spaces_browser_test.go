package system_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The Spaces in a real browser: create (hostile name stays text), add a
// bookmark card of a listed coin, move an Account card where the rules
// refuse it and where they allow it and back, change a Space's type while
// an agent holds its grant, and delete a Space through its confirmation.
func TestSiteSpacesInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "spaces.owner")
	e := spEnv{s: s, acct: o.account}
	e.setPlan(t, "extended")
	first := spID(e.owner().list(t).spaces[0])
	b := newBrowser(t)
	siteSignIn(t, b, o, "spaces.owner")

	b.open(s.URL + "/spaces")
	b.assertUsable("the Spaces")
	b.fill("Name", siteHostileScript)
	b.fill("Type", "altcoin")
	if status := b.submit(`#create-space button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "it starts at none") {
		t.Fatalf("create a Space: %d at %s", status, b.location())
	}
	if h := b.text("h1"); h != siteHostileScript {
		t.Fatalf("the new Space's heading reads %q", h)
	}
	m := regexp.MustCompile(`/spaces/([^/?]+)`).FindStringSubmatch(b.location())
	if m == nil {
		t.Fatalf("created Space landed on %s", b.location())
	}
	alt := m[1]
	b.assertUsable("an altcoin Space")
	b.fill("Coin", "litecoin")
	b.typeInto("#bookmark-address", "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA")
	b.typeInto("#bookmark-name", siteHostileImg)
	if status := b.submit(`#add-bookmark button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Card added") {
		t.Fatalf("add a litecoin card: %d", status)
	}
	if got := b.text("#space-cards td.text"); !strings.Contains(got, siteHostileImg) || !strings.Contains(got, "litecoin") {
		t.Fatalf("the card reads %q", got)
	}

	// An Account card into the altcoin Space: refused, with the rule.
	b.open(s.URL + "/portfolio/cards/" + o.cards[0])
	b.assertUsable("a card with a move form")
	b.fill("Destination", "space:"+alt)
	if status := b.submit(`#move-card button[type=submit]`); status != http.StatusConflict || !strings.Contains(b.text("p.problem"), "a card moves only between places that hold the same kind of address") {
		t.Fatalf("a cross-type move: %d, the page says %q", status, b.text("p.problem"))
	}
	b.expectConsoleError("status of 409")
	// Into the first (Bitcoin) Space it goes, and back to the Portfolio.
	b.open(s.URL + "/portfolio/cards/" + o.cards[0])
	b.fill("Destination", "space:"+first)
	if status := b.submit(`#move-card button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Card moved") {
		t.Fatalf("a move into a Bitcoin Space: %d", status)
	}
	moved, _ := e.owner().cards(t, first)
	if len(moved) != 1 || moved[0]["name"] != siteHostileScript {
		t.Fatalf("the first Space holds %v", moved)
	}
	b.open(s.URL + "/spaces/" + first)
	b.assertUsable("a Bitcoin Space")
	b.fill("Move "+owAddress(900)+" to", "portfolio")
	if status := b.submit(`form[action="/moves"] button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Card moved") {
		t.Fatalf("a move back to the Portfolio: %d", status)
	}
	if cards, _ := e.owner().cards(t, first); len(cards) != 0 {
		t.Fatalf("the first Space still holds %v", cards)
	}

	// A type change while an agent holds the Space's grant: the page
	// warns, then says the grant was cleared, and the agent loses it.
	b.open(s.URL + "/spaces")
	b.fill("Name", "Spare")
	b.fill("Type", "bitcoin")
	b.submit(`#create-space button[type=submit]`)
	spare := regexp.MustCompile(`/spaces/([^/?]+)`).FindStringSubmatch(b.location())[1]
	e.grant(t, spare, "write")
	key := s.createKey(t, o.account, "write")
	expect(t, do(t, "GET", s.URL+"/v1/bookmark-spaces/"+spare, key, nil), http.StatusOK, "")
	b.open(s.URL + "/spaces/" + spare)
	if !strings.Contains(b.text("#retype-warning"), "clears the agent grant") {
		t.Fatalf("the type form warns %q", b.text("#retype-warning"))
	}
	b.fill("Change the type to", "sheet")
	if status := b.submit(`#retype-space button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Its agent grant was cleared") {
		t.Fatalf("type change: %d", status)
	}
	expect(t, do(t, "GET", s.URL+"/v1/bookmark-spaces/"+spare, key, nil), http.StatusNotFound, "NOT_FOUND")

	// Delete, through the confirmation page.
	b.open(s.URL + "/spaces/" + alt)
	b.submit(`a[href="/spaces/` + alt + `/delete"]`)
	b.assertUsable("the Space delete confirmation")
	if !strings.Contains(b.text("main"), "and the 1 card it holds") {
		t.Fatalf("the confirmation says %q", b.text("main"))
	}
	if status := b.submit(`form[action="/spaces/` + alt + `/delete"] button`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Space deleted") {
		t.Fatalf("delete: %d", status)
	}
	for _, sp := range e.owner().list(t).spaces {
		if spID(sp) == alt {
			t.Fatal("the deleted Space is still listed")
		}
	}
	b.assertNoConsoleErrors()
}
