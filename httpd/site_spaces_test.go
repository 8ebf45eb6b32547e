package httpd

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/internal/testaddr"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// siteTestAddress returns the i-th of a series of distinct valid mainnet
// P2PKH addresses.
func siteTestAddress(i int) string {
	return testaddr.P2PKH(fmt.Sprintf("addrwatch-site-test-%d", i))
}

// newSpacesSite is an extended-plan account signed in through the site.
func newSpacesSite(t *testing.T) (*siteClient, *ownerTest) {
	t.Helper()
	o, _ := newHistoryOwnerTest(t, actors.PlanExtended)
	o.t = t
	c := newSiteClient(o)
	c.mustSignIn()
	return c, o
}

// ownerJSON runs one owner API request and wants status.
func (o *ownerTest) ownerJSON(method, path string, body any, want int) map[string]any {
	o.t.Helper()
	status, _, m := o.send("192.0.2.1", method, path, o.account.OwnerSecret, body)
	if status != want {
		o.t.Fatalf("%s %s: %d, want %d: %v", method, path, status, want, m)
	}
	return m
}

// spaces lists the owner's Spaces through the owner API, by name.
func (o *ownerTest) spaces() map[string]map[string]any {
	o.t.Helper()
	out := map[string]map[string]any{}
	for _, s := range o.ownerJSON("GET", "/owner/v1/bookmark-spaces", nil, 200)["spaces"].([]any) {
		out[s.(map[string]any)["name"].(string)] = s.(map[string]any)
	}
	return out
}

// spaceCards lists a Space's cards through the owner API.
func (o *ownerTest) spaceCards(id string) []map[string]any {
	o.t.Helper()
	var out []map[string]any
	for _, c := range o.ownerJSON("GET", "/owner/v1/bookmark-spaces/"+id+"/cards", nil, 200)["cards"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

// hidden returns the value of the page's first hidden input called name.
func hidden(t *testing.T, page siteAnswer, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no %s on the page (status %d): %.500s", name, page.status, page.body)
	}
	return m[1]
}

// createSpace creates a Space through the site's form and returns its ID.
func (c *siteClient) createSpace(t *testing.T, name, typ string) string {
	t.Helper()
	page := c.do("GET", "/spaces", nil)
	a := c.do("POST", "/spaces", url.Values{"csrf": {formToken(t, page)}, "expected_bookmark_revision": {hidden(t, page, "expected_bookmark_revision")}, "name": {name}, "type": {typ}})
	m := regexp.MustCompile(`^/spaces/([^?]+)\?m=space-added$`).FindStringSubmatch(a.location)
	if a.status != fasthttp.StatusSeeOther || m == nil {
		t.Fatalf("create %s Space: %d to %q: %.1000s", typ, a.status, a.location, a.body)
	}
	return m[1]
}

// addBookmark adds a card through a Space page's form.
func (c *siteClient) addBookmark(t *testing.T, space string, form url.Values) siteAnswer {
	t.Helper()
	page := c.do("GET", "/spaces/"+space, nil)
	form.Set("csrf", formToken(t, page))
	form.Set("expected_space_version", hidden(t, page, "expected_space_version"))
	return c.do("POST", "/spaces/"+space+"/cards", form)
}

func TestSiteSpacesCreateRenameAndRetype(t *testing.T) {
	t.Parallel()
	c, o := newSpacesSite(t)
	hostile := `<script>alert(1)</script>`
	id := c.createSpace(t, hostile, "altcoin")
	page := c.do("GET", "/spaces/"+id+"?m=space-added", nil)
	if page.status != 200 || strings.Contains(page.body, hostile) || !strings.Contains(page.body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page.body, "it starts at none") {
		t.Fatalf("the new Space's page: %d %.2000s", page.status, page.body)
	}
	if s := o.spaces()[hostile]; s["type"] != "altcoin" || s["grant"] != "none" {
		t.Fatalf("the Space the site created: %v", s)
	}

	// A name over 40 characters is refused in the API's words, and what
	// was typed stays in the form.
	list := c.do("GET", "/spaces", nil)
	long := strings.Repeat("s", 41)
	a := c.do("POST", "/spaces", url.Values{"csrf": {formToken(t, list)}, "expected_bookmark_revision": {hidden(t, list, "expected_bookmark_revision")}, "name": {long}, "type": {"sheet"}})
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, `value="`+long+`"`) || !strings.Contains(a.body, `<option value="sheet" selected>`) {
		t.Fatalf("a long name: %d %.2000s", a.status, a.body)
	}

	// Rename from a page drawn before another change is refused as stale,
	// and the name typed stays in the form, focused.
	a = c.do("POST", "/spaces/"+id, url.Values{"csrf": {formToken(t, page)}, "expected_bookmark_revision": {hidden(t, page, "expected_bookmark_revision")}, "name": {"Alts"}})
	if a.status != fasthttp.StatusSeeOther || o.spaces()["Alts"] == nil {
		t.Fatalf("rename: %d %.500s", a.status, a.body)
	}
	a = c.do("POST", "/spaces/"+id, url.Values{"csrf": {formToken(t, page)}, "expected_bookmark_revision": {hidden(t, page, "expected_bookmark_revision")}, "name": {"Older page"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "changed after this page was drawn") || o.spaces()["Older page"] != nil ||
		!strings.Contains(a.body, `name="name" required maxlength="40" value="Older page" autofocus>`) {
		t.Fatalf("a stale rename: %d %.2000s", a.status, a.body)
	}

	// A type change warns first and clears the grant the owner had set.
	o.ownerJSON("PUT", "/owner/v1/grants/bookmark-spaces/"+id, map[string]string{"level": "write"}, 200)
	page = c.do("GET", "/spaces/"+id, nil)
	if !strings.Contains(page.body, "Changing the type clears the agent grant") {
		t.Fatalf("no warning before a type change: %.2000s", page.body)
	}
	a = c.do("POST", "/spaces/"+id, url.Values{"csrf": {formToken(t, page)}, "expected_bookmark_revision": {hidden(t, page, "expected_bookmark_revision")}, "type": {"bitcoin"}})
	if a.status != fasthttp.StatusSeeOther || a.location != "/spaces/"+id+"?m=space-retyped" {
		t.Fatalf("type change: %d to %q %.500s", a.status, a.location, a.body)
	}
	if s := o.spaces()["Alts"]; s["type"] != "bitcoin" || s["grant"] != "none" {
		t.Fatalf("after the type change: %v", s)
	}
	if page = c.do("GET", a.location, nil); !strings.Contains(page.body, "Its agent grant was cleared") {
		t.Fatalf("the notice after a type change: %.2000s", page.body)
	}
}

func TestSiteSpacesBookmarkCards(t *testing.T) {
	t.Parallel()
	c, o := newSpacesSite(t)
	alt := c.createSpace(t, "Alts", "altcoin")
	a := c.addBookmark(t, alt, url.Values{"coin_id": {"litecoin"}, "address": {"LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA"}, "name": {"ltc"}})
	if a.status != fasthttp.StatusSeeOther {
		t.Fatalf("add a litecoin card: %d %.1000s", a.status, a.body)
	}
	// A Bitcoin address under the Litecoin coin is refused by the coin's
	// rule; the page keeps the coin and what was typed.
	a = c.addBookmark(t, alt, url.Values{"coin_id": {"litecoin"}, "address": {csvAddrA}, "name": {"typed"}})
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, `value="typed"`) || !strings.Contains(a.body, `<option value="litecoin" selected>`) {
		t.Fatalf("a wrong address for the coin: %d %.2000s", a.status, a.body)
	}
	cards := o.spaceCards(alt)
	if len(cards) != 1 || cards[0]["coin_id"] != "litecoin" || cards[0]["name"] != "ltc" {
		t.Fatalf("the Space's cards: %v", cards)
	}

	// Edit: a save after an agent's is refused; the card's row keeps what
	// was typed, focused, and the reason says what the card holds now.
	card, version := cards[0]["id"].(string), cards[0]["version"].(string)
	page := c.do("GET", "/spaces/"+alt, nil)
	o.ownerJSON("PATCH", "/owner/v1/bookmark-spaces/"+alt+"/cards/"+card, map[string]any{"expected_version": version, "name": "agent's"}, 200)
	a = c.do("POST", "/spaces/"+alt+"/cards/"+card, url.Values{"csrf": {formToken(t, page)}, "expected_version": {version}, "name": {"<b>mine</b>"}, "note": {"my typed note"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "It now holds name “agent&#39;s”") ||
		!strings.Contains(a.body, `value="&lt;b&gt;mine&lt;/b&gt;"`) || !strings.Contains(a.body, `value="my typed note" placeholder="Note" autofocus`) {
		t.Fatalf("a stale card save: %d %.3000s", a.status, a.body)
	}
	fresh := hidden(t, a, "expected_version")
	a = c.do("POST", "/spaces/"+alt+"/cards/"+card, url.Values{"csrf": {formToken(t, page)}, "expected_version": {fresh}, "name": {"mine"}, "note": {"n"}})
	if a.status != fasthttp.StatusSeeOther || o.spaceCards(alt)[0]["name"] != "mine" {
		t.Fatalf("save again: %d %.500s", a.status, a.body)
	}
	page = c.do("GET", "/spaces/"+alt, nil)
	a = c.do("POST", "/spaces/"+alt+"/cards/"+card+"/delete", url.Values{"csrf": {formToken(t, page)}, "expected_version": {hidden(t, page, "expected_version")}})
	if a.status != fasthttp.StatusSeeOther || len(o.spaceCards(alt)) != 0 {
		t.Fatalf("delete: %d %.500s", a.status, a.body)
	}
	// A save of a card deleted meanwhile has no row to keep what was
	// typed in: the reason repeats it.
	a = c.do("POST", "/spaces/"+alt+"/cards/"+card, url.Values{"csrf": {formToken(t, page)}, "expected_version": {fresh}, "name": {"gone"}, "note": {"typed for a gone card"}})
	if a.status != fasthttp.StatusNotFound || !strings.Contains(a.body, "You typed: name “gone”, note “typed for a gone card”.") {
		t.Fatalf("a save of a deleted card: %d %.3000s", a.status, a.body)
	}
}

func TestSiteSpacesMovesExplainTheRuleThatRefused(t *testing.T) {
	t.Parallel()
	c, o := newSpacesSite(t)
	first := ""
	for _, s := range o.spaces() {
		first = s["id"].(string)
	}
	alt := c.createSpace(t, "Alts", "altcoin")
	btc := c.createSpace(t, "Second", "bitcoin")
	if a := c.addBookmark(t, first, url.Values{"address": {csvAddrA}, "name": {"moving"}}); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("add: %d %.500s", a.status, a.body)
	}
	page := c.do("GET", "/spaces/"+first, nil)
	// The menu offers the Portfolio and the other non-Sheet Spaces.
	for _, want := range []string{`<option value="portfolio">`, `<option value="space:` + alt + `">`, `<option value="space:` + btc + `">`} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("the move menu lacks %s: %.3000s", want, page.body)
		}
	}
	card := o.spaceCards(first)[0]
	move := func(to string) siteAnswer {
		return c.do("POST", "/moves", url.Values{"csrf": {formToken(t, page)}, "source_space_id": {first}, "source_id": {card["id"].(string)}, "expected_source_version": {card["version"].(string)}, "destination": {to}})
	}
	a := move("space:" + alt)
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "a card moves only between places that hold the same kind of address") || len(o.spaceCards(first)) != 1 {
		t.Fatalf("a Bitcoin card into an altcoin Space: %d %.3000s", a.status, a.body)
	}
	// A full destination is named as such.
	for i := 0; i < 10; i++ {
		if a := c.addBookmark(t, btc, url.Values{"address": {siteTestAddress(i)}}); a.status != fasthttp.StatusSeeOther {
			t.Fatalf("fill card %d: %d %.500s", i, a.status, a.body)
		}
	}
	if a := move("space:" + btc); a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "already holds its 10 cards") {
		t.Fatalf("a move into a full Space: %d %.3000s", a.status, a.body)
	}
	// Into the Portfolio it goes, as a new Account card.
	if a := move("portfolio"); a.status != fasthttp.StatusSeeOther || a.location != "/spaces/"+first+"?m=moved" {
		t.Fatalf("a move to the Portfolio: %d %.1000s", a.status, a.body)
	}
	if len(o.spaceCards(first)) != 0 || len(o.portfolioCards()) != 1 || o.portfolioCards()[0]["name"] != "moving" {
		t.Fatalf("after the move: %v %v", o.spaceCards(first), o.portfolioCards())
	}
	// The same form again: the source is gone, so the version is stale.
	if a := move("portfolio"); a.status < 400 || a.status >= 500 || len(o.portfolioCards()) != 1 {
		t.Fatalf("a second move of the same card: %d %.1000s", a.status, a.body)
	}

	// From the Account card's page back into a Space: the altcoin Space
	// is refused with the rule, the first Space takes it.
	account := o.portfolioCards()[0]
	cardPage := c.do("GET", "/portfolio/cards/"+account["id"].(string), nil)
	fromCard := func(to string) siteAnswer {
		return c.do("POST", "/moves", url.Values{"csrf": {formToken(t, cardPage)}, "source_id": {account["id"].(string)}, "expected_source_version": {hidden(t, cardPage, "expected_version")}, "destination": {to}})
	}
	if !strings.Contains(cardPage.body, `<option value="space:`+first+`">`) {
		t.Fatalf("the card page offers no move: %.3000s", cardPage.body)
	}
	if a := fromCard("space:" + alt); a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "The card was not moved: a card moves only between places") {
		t.Fatalf("an Account card into an altcoin Space: %d %.2000s", a.status, a.body)
	}
	if a := fromCard("space:" + first); a.status != fasthttp.StatusSeeOther || a.location != "/portfolio?m=moved" || len(o.portfolioCards()) != 0 || len(o.spaceCards(first)) != 1 {
		t.Fatalf("an Account card into a Bitcoin Space: %d %q %.1000s", a.status, a.location, a.body)
	}
}

func TestSiteSpacesDeleteFollowsTheSpecsRules(t *testing.T) {
	t.Parallel()
	c, o := newSpacesSite(t)
	sheet := c.createSpace(t, "Grid", "sheet")
	put := o.ownerJSON("GET", "/owner/v1/bookmark-spaces/"+sheet+"/sheet", nil, 200)
	o.ownerJSON("PUT", "/owner/v1/bookmark-spaces/"+sheet+"/sheet", map[string]any{"expected_revision": put["revision"], "cells": []string{csvAddrA, "bitcoin", "", "", ""}}, 200)
	page := c.do("GET", "/spaces/"+sheet, nil)
	if !strings.Contains(page.body, "1 stored row.") {
		t.Fatalf("the Sheet Space's page: %.2000s", page.body)
	}
	confirm := c.do("GET", "/spaces/"+sheet+"/delete", nil)
	if confirm.status != 200 || !strings.Contains(confirm.body, "cannot be undone") {
		t.Fatalf("the delete page: %d %.1000s", confirm.status, confirm.body)
	}
	form := url.Values{"csrf": {formToken(t, confirm)}, "expected_bookmark_revision": {hidden(t, confirm, "expected_bookmark_revision")}, "expected_version": {hidden(t, confirm, "expected_version")}, "confirm_delete_cards": {"true"}}
	a := c.do("POST", "/spaces/"+sheet+"/delete", form)
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "The Space was not deleted") || o.spaces()["Grid"] == nil {
		t.Fatalf("deleting a Sheet Space with rows: %d %.2000s", a.status, a.body)
	}

	// A Bitcoin Space with a card goes, with its card, after confirmation.
	btc := c.createSpace(t, "Gone", "bitcoin")
	c.addBookmark(t, btc, url.Values{"address": {csvAddrB}})
	confirm = c.do("GET", "/spaces/"+btc+"/delete", nil)
	if !strings.Contains(confirm.body, "and the 1 card it holds") {
		t.Fatalf("the delete page names no card: %.2000s", confirm.body)
	}
	form = url.Values{"csrf": {formToken(t, confirm)}, "expected_bookmark_revision": {hidden(t, confirm, "expected_bookmark_revision")}, "expected_version": {hidden(t, confirm, "expected_version")}, "confirm_delete_cards": {"true"}}
	if a = c.do("POST", "/spaces/"+btc+"/delete", form); a.status != fasthttp.StatusSeeOther || o.spaces()["Gone"] != nil {
		t.Fatalf("delete: %d %.1000s", a.status, a.body)
	}
}
