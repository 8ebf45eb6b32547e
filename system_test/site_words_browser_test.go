package system_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The first run, the plan's limits and a refused Space save, in a real
// browser: what an owner sees before the account holds anything, where a
// create form would only fail, and when a save is refused.

// plainText is page text without the isolates the activity page puts
// around names (U+2068 … U+2069), to compare with words.
func plainText(s string) string {
	return strings.NewReplacer("\u2068", "", "\u2069", "").Replace(s)
}

// assertCleanAtBothWidths checks the page the tab shows at a phone's and
// a desktop's width: no axe-core violation, no sideways scroll of the
// page. It leaves the tab at the desktop's width. It is for the states a
// GET route of sitePages does not draw (an empty account, a full plan, a
// refused form's answer).
func (b *browserTab) assertCleanAtBothWidths(page string) {
	b.t.Helper()
	for _, size := range [][2]int64{{phoneWidth, phoneHeight}, {desktopWidth, desktopHeight}} {
		b.viewport(size[0], size[1])
		b.assertAxeClean(fmt.Sprintf("%s at %d px", page, size[0]))
		if over, worst := b.overflow(); over > 0 {
			b.t.Errorf("%s at %d px: the page is %d px wider than the window; the widest element: %s", page, size[0], over, worst)
		}
	}
}

// focusedID is the id of the element that has the keyboard focus.
func (b *browserTab) focusedID() string {
	b.t.Helper()
	return run(b, "read the focus", chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
}

// A new account, in a browser: signing in lands on the Portfolio with
// the getting-started list (its Space step ticked, every step a link);
// on the base plan the Spaces page says the limit and links the plan's
// change in place of the create form, and a create sent from a page drawn
// on the extended plan answers with the same words; the list goes once
// the account holds an Account card. Each state is axe-clean at both
// widths.
func TestSiteFirstRunAndPlanLimitsInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteAccount(t, s, "extended", "first.run")
	e := spEnv{s: s, acct: o.account}
	b := newBrowser(t)
	siteSignIn(t, b, o, "first.run") // lands on /portfolio
	steps := b.texts("#getting-started li a")
	done := b.texts("#getting-started li.done a")
	if len(steps) != 4 || steps[0] != "Add an Account card" || steps[1] != "Make a Space" || steps[2] != "Create an API key for an agent" || steps[3] != "Set up a notification channel" ||
		len(done) != 1 || done[0] != "Make a Space" || !strings.Contains(b.text("#start-space"), "you have 1 Space (“Bitcoin”)") {
		t.Fatalf("the getting-started list: %q, done %q", steps, done)
	}
	b.assertUsable("the first run's Portfolio")
	b.assertCleanAtBothWidths("the first run's Portfolio")

	// The Spaces page drawn on the extended plan, sent after the plan
	// went back to base: the create is answered with the limit's words.
	b.open(s.URL + "/spaces")
	e.setPlan(t, "base")
	b.fill("Name", "Second")
	const limit = "Your plan (base) allows 1 Space; you have 1. The extended plan allows 10 Spaces: change the plan in Account settings, or delete a Space you no longer need to make another."
	if status := b.submit(`#create-space button[type=submit]`); status != http.StatusConflict || b.text(".problem") != "The Space was not created. "+limit {
		t.Fatalf("a create past the limit: %d %q", status, b.text("main"))
	}
	b.expectConsoleError("status of 409")
	if n := len(b.texts("#create-space")); n != 0 {
		t.Fatal("the create form is still on the page")
	}
	b.assertCleanAtBothWidths("a create past the limit")
	b.open(s.URL + "/spaces")
	if got := b.text("#spaces-limit p"); got != limit {
		t.Fatalf("the Spaces page's limit: %q", got)
	}
	b.assertCleanAtBothWidths("the base plan's Spaces page")
	if status := b.submit(`#spaces-limit a`); status != http.StatusOK || !strings.HasSuffix(b.location(), "/settings#plan-heading") {
		t.Fatalf("the limit's link: %d %s", status, b.location())
	}

	// The first step's link is the add form's address field.
	b.open(s.URL + "/portfolio")
	b.click(`#start-card a`)
	if f := b.focusedID(); f != "card-address" {
		t.Fatalf("the first step leads to %q", f)
	}
	b.fill("Bitcoin address", owAddress(960))
	b.fill("Name", "Cold")
	if status := b.submit(`#add-card button[type=submit]`); status != http.StatusOK || len(b.texts("#getting-started")) != 0 || !b.hasText("Cold") {
		t.Fatalf("after the first card: %d %q", status, b.text("main"))
	}
	b.assertNoConsoleErrors()
}

// A refused save on a Space's page keeps what was typed: a card's note
// typed into its row, sent after an agent changed the card, comes back in
// the same field with the focus on it and the reason above; on a phone
// the Space's rows are stacked as label: value blocks.
func TestSiteRefusedSpaceSaveKeepsTheNoteInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteAccount(t, s, "base", "space.saver")
	e := spEnv{s: s, acct: o.account}
	owner := e.owner()
	space := spID(owner.list(t).spaces[0])
	card := owner.addCard(t, space, map[string]any{"address": owAddress(970), "name": "Alice"})
	b := newBrowser(t)
	siteSignIn(t, b, o, "space.saver")
	b.open(s.URL + "/spaces/" + space)

	// An agent (here the owner API) renames the card while the owner
	// types a note into its row; the note is refused as stale. (Typing
	// starts first: a row the owner is not yet editing takes the agent's
	// change from the live view, and a save from there is no conflict.)
	b.fill("Note of "+owAddress(970), "paid back")
	expect(t, owner.do(t, "PATCH", "/bookmark-spaces/"+space+"/cards/"+spID(card), map[string]any{"expected_version": card["version"], "name": "Bob"}), http.StatusOK, "")
	note := "paid back on Friday " + siteHostileNote
	b.fill("Note of "+owAddress(970), note)
	if status := b.submit(`#card-` + spID(card) + ` form button[type=submit]`); status != http.StatusConflict {
		t.Fatalf("the stale save: %d", status)
	}
	b.expectConsoleError("status of 409")
	if got := b.value("#note-" + spID(card)); got != note {
		t.Fatalf("the note field holds %q, want %q", got, note)
	}
	if f := b.focusedID(); f != "note-"+spID(card) {
		t.Fatalf("the focus is on %q", f)
	}
	if p := b.text(".problem"); !strings.Contains(p, "It now holds name “Bob”") || !strings.Contains(p, "What you typed is still in its row") {
		t.Fatalf("the reason: %q", p)
	}
	b.assertCleanAtBothWidths("a refused Space save")
	// Saved again, the typed note is the card's.
	if status := b.submit(`#card-` + spID(card) + ` form button[type=submit]`); status != http.StatusOK {
		t.Fatalf("saved again: %d", status)
	}
	if got := owner.card(t, space, spID(card))["note"]; got != note {
		t.Fatalf("the card's note: %q", got)
	}

	// On a phone a row is a short card of label: value blocks.
	b.viewport(phoneWidth, phoneHeight)
	b.open(s.URL + "/spaces/" + space)
	shape := run(b, "measure the rows", chromedp.Evaluate[[]string](`(() => {
	const td = document.querySelector("#space-cards tbody td[data-label=Address]");
	return [getComputedStyle(td).display, getComputedStyle(td, "::before").content];
})()`))
	if shape[0] != "block" || shape[1] != `"Address: "` {
		t.Fatalf("a Space row's cell on a phone: %q", shape)
	}
	b.viewport(desktopWidth, desktopHeight)
	if d := run(b, "measure the rows", chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#space-cards tbody td")).display`)); d != "table-cell" {
		t.Fatalf("a Space row's cell on a desktop: %q", d)
	}
	b.assertNoConsoleErrors()
}

// stateAccount is an account in a state the tour account is not in, with
// the pages the axe test opens signed in as it: label names the state in
// the axe table.
type stateAccount struct {
	owner siteOwner
	login string
	label string
	pages []sitePage
}

// stateAccountsOn makes the accounts of the states the tour account
// cannot show: a new, empty account (the Portfolio's getting-started
// list), and a base-plan account at every limit the site has a create
// form for (its Spaces, its Account cards, a Space's cards, API keys,
// notification channels), whose pages show each limit in the form's place.
// Its webhooks are on loopback: s must run with --notify-allow-private.
func stateAccountsOn(t *testing.T, s *server) []stateAccount {
	t.Helper()
	empty := siteAccount(t, s, "base", "new@example.com")
	full := siteAccount(t, s, "base", "full@example.com")
	owner := spEnv{s: s, acct: full.account}.owner()
	space := spID(owner.list(t).spaces[0])
	for i := range 10 {
		owOwnerCard(t, s, full.OwnerSecret, owAddress(800+i), fmt.Sprint("Card ", i))
		owner.addCard(t, space, map[string]any{"address": owAddress(820 + i), "name": fmt.Sprint("Bookmark ", i)})
	}
	for i := range 100 {
		owKey(t, s, full.OwnerSecret, "read", fmt.Sprint("agent ", i))
	}
	for i := range 10 {
		webhookChannel(t, s, full.account, fmt.Sprint("hook ", i), fmt.Sprint("http://127.0.0.1:9/hook-", i))
	}
	return []stateAccount{
		{owner: empty, login: "new@example.com", label: "a new account", pages: []sitePage{{route: "/portfolio", url: fixed("/portfolio"), ready: shows("#getting-started")}}},
		{owner: full, login: "full@example.com", label: "at every limit", pages: []sitePage{
			{route: "/portfolio", url: fixed("/portfolio"), ready: shows("#portfolio-limit")},
			{route: "/spaces", url: fixed("/spaces"), ready: shows("#spaces-limit")},
			{route: "/spaces/{space_id}", url: fixed("/spaces/" + space), ready: shows("#space-cards-limit")},
			{route: "/access", url: fixed("/access"), ready: shows("#keys-limit")},
			{route: "/notifications", url: fixed("/notifications"), ready: shows("#channels-limit")},
		}},
	}
}

// shows is a page's check that it is in the state it is opened for: it
// shows the element matching selector.
func shows(selector string) func(b *browserTab) {
	return func(b *browserTab) {
		b.t.Helper()
		b.waitVisible(selector)
	}
}
