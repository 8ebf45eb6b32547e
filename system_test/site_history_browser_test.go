package system_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The History in a real browser: a card opens its History from the
// Portfolio, a note is saved and deleted in place (hostile text stays
// text), pages follow next_offset, and the combined view lists the cards.
func TestSiteHistoryInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "history.owner")
	b := newBrowser(t)
	siteSignIn(t, b, o, "history.owner")

	b.open(s.URL + "/portfolio")
	if status := b.submit(`#portfolio-cards a[href="/history/cards/` + o.cards[0] + `"]`); status != http.StatusOK {
		t.Fatalf("the card's History: %d", status)
	}
	b.assertUsable("a card's History")
	if !strings.Contains(b.text("#history-window"), "latest calendar year") {
		t.Fatalf("the window says %q", b.text("#history-window"))
	}
	// The hostile note saved in the set-up is in its input, as text.
	if got := b.value("#note-" + o.noteTx); got != siteHostileNote {
		t.Fatalf("the saved note reads %q", got)
	}
	b.do("clear the note", chromedp.Clear(chromedp.CSS("#note-"+o.noteTx)))
	b.typeInto("#note-"+o.noteTx, siteHostileScript)
	if status := b.submit(`form[action="/history/notes/` + o.noteTx + `"] button`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Note saved") {
		t.Fatalf("save the note: %d", status)
	}
	if got := b.value("#note-" + o.noteTx); got != siteHostileScript {
		t.Fatalf("the note now reads %q", got)
	}
	r := do(t, "POST", s.URL+"/owner/v1/history/notes/batch", o.OwnerSecret, map[string]any{"txids": []string{o.noteTx}})
	expect(t, r, http.StatusOK, "")
	if !strings.Contains(string(r.Body), `alert(1)`) {
		t.Fatalf("the API reads %s", r.Body)
	}
	// Older pages through next_offset: the simulated chain gives the
	// card more than a page in the year.
	if rows := b.texts("#history-transactions tbody tr td.txid"); len(rows) != 25 {
		t.Fatalf("the first page shows %d transactions, want a full page of 25", len(rows))
	}
	b.submit(`nav.pager a`)
	if !strings.Contains(b.location(), "offset=25") || len(b.texts("#history-transactions tbody tr td.txid")) == 0 {
		t.Fatalf("the pager went to %s", b.location())
	}
	b.open(s.URL + "/history/cards/" + o.cards[0])
	if status := b.submit(`form[action="/history/notes/` + o.noteTx + `/delete"] button`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Note deleted") {
		t.Fatalf("delete the note: %d", status)
	}

	// The combined view lists both cards, names as text.
	b.open(s.URL + "/history")
	b.assertUsable("the combined History")
	if names := b.texts("td.text a"); !slices.Contains(names, siteHostileScript) || !slices.Contains(names, siteHostileImg) {
		t.Fatalf("the combined History lists %q", names)
	}
	historySearchInABrowser(t, b, s, o)
	b.assertNoConsoleErrors()
}

// historySearchInABrowser searches, filters, sorts and pages the combined
// History; copies a card's address from the keyboard; chooses an
// explorer in Account settings and finds History's links to it; and
// saves a note with its row's Save button from the keyboard.
func historySearchInABrowser(t *testing.T, b *browserTab, s *server, o siteOwner) {
	t.Helper()
	all := b.text("#history-count")
	if !strings.HasPrefix(all, "1–25 of ") {
		t.Fatalf("the combined History's count line says %q", all)
	}
	totalText := strings.TrimSuffix(strings.TrimPrefix(all, "1–25 of "), ".")
	total, err := strconv.Atoi(strings.ReplaceAll(totalText, ",", ""))
	if err != nil || total <= 25 {
		t.Fatalf("the count line %q: not more than a page", all)
	}
	// Search by part of a txid, in capitals.
	b.fill("Transaction ID, address or note", strings.ToUpper(o.noteTx[:16]))
	if status := b.submit(`#history-search button[type=submit]`); status != http.StatusOK {
		t.Fatalf("search: %d", status)
	}
	if rows := b.texts("#history-transactions td.txid span.mono"); len(rows) != 1 || rows[0] != o.noteTx {
		t.Fatalf("a txid search found %q", rows)
	}
	if got := b.text("#history-count"); got != "1–1 of 1 matching ("+totalText+" transactions in all)." {
		t.Fatalf("the search's count line says %q", got)
	}
	// One card, received only: every amount is positive, and the form
	// says what it searched.
	b.open(s.URL + "/history")
	b.fill("Card", o.cards[1])
	b.fill("Direction", "received")
	b.submit(`#history-search button[type=submit]`)
	if loc := b.location(); !strings.Contains(loc, "card="+o.cards[1]) || !strings.Contains(loc, "direction=received") {
		t.Fatalf("the filter went to %s", loc)
	}
	amounts := b.texts("#history-transactions tbody tr td:nth-child(4)")
	if len(amounts) == 0 || b.value("#history-card") != o.cards[1] || !strings.Contains(b.text("#history-count"), "matching") {
		t.Fatalf("one card received: %q, the card menu %q", amounts, b.value("#history-card"))
	}
	for _, a := range amounts {
		if !strings.HasPrefix(a, "+") {
			t.Fatalf("a received transaction of %s", a)
		}
	}
	// Sorting by amount keeps the filter.
	b.submit("#sort-amount")
	if loc := b.location(); !strings.Contains(loc, "sort=amount-desc") || !strings.Contains(loc, "direction=received") || !strings.Contains(loc, "card="+o.cards[1]) {
		t.Fatalf("sorting by amount went to %s", loc)
	}
	sats := historySatoshis(t, b.texts("#history-transactions tbody tr td:nth-child(4)"))
	if !slices.IsSortedFunc(sats, func(x, y int64) int { return int(y - x) }) {
		t.Fatalf("by amount, largest first: %v", sats)
	}
	// The whole History by amount, paged: the next page keeps the order.
	b.open(s.URL + "/history?sort=amount-desc")
	first := historySatoshis(t, b.texts("#history-transactions tbody tr td:nth-child(4)"))
	b.submit(`nav.pager a[rel=next]`)
	if loc := b.location(); !strings.Contains(loc, "sort=amount-desc") || !strings.Contains(loc, "offset=25") || !strings.HasPrefix(b.text("#history-count"), "26–") {
		t.Fatalf("the next page of the amount order: %s %q", loc, b.text("#history-count"))
	}
	if next := historySatoshis(t, b.texts("#history-transactions tbody tr td:nth-child(4)")); len(next) == 0 || next[0] > first[len(first)-1] {
		t.Fatalf("the second page by amount starts at %v after %v", next, first[len(first)-1])
	}
	// A bad date is said on the page.
	if status := b.open(s.URL + "/history?from=2026-02-30"); status != http.StatusBadRequest || !strings.Contains(b.text("#history-problems"), "“From” is not a date") {
		t.Fatalf("a bad date: %d %q", status, b.text("#history-problems"))
	}
	b.expectConsoleError("400")

	// Copy the card's address from the keyboard: it is on the clipboard,
	// and the live region says so.
	card := "/history/cards/" + o.cards[0]
	b.open(s.URL + card)
	address := b.text("#card-address")
	within(b, "let the page use the clipboard", func(ctx context.Context) (cdp.Empty, error) {
		var last error
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			_, last = chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true}, Setting: browser.PermissionSettingGranted,
				Origin: s.URL, BrowserContextID: b.contextID})
			if last != nil {
				break
			}
		}
		return cdp.Empty{}, last
	})
	b.tabTo(`button[data-copy="card-address"]`)
	b.press(kb.Enter)
	b.waitText("#copy-status", "Copied.")
	if got := run(b, "read the clipboard", chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)); got != address {
		t.Fatalf("the clipboard holds %q, want the address %q", got, address)
	}
	if n := len(b.texts(`a[href*="mempool.space"]`)); n != 0 || !b.hasText("No block-explorer links") {
		t.Fatalf("History links to an explorer before one is chosen (%d links)", n)
	}

	// Choose mempool.space in Account settings: History links to it.
	b.open(s.URL + "/settings")
	b.click(`input[name=explorer][value="mempool.space"]`)
	if status := b.submit(`#explorer-form button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Block explorer saved") {
		t.Fatalf("choose an explorer: %d", status)
	}
	b.open(s.URL + card)
	if href := b.attr("#card-address-explorer", "href"); href != "https://mempool.space/address/"+url.PathEscape(address) {
		t.Fatalf("the address links to %q", href)
	}
	link := `a[href="https://mempool.space/tx/` + o.noteTx + `"]`
	if rel := b.attr(link, "rel"); rel != "noopener noreferrer" || !b.hasText("the link leaves this site") {
		t.Fatalf("the txid's link: rel %q", rel)
	}

	// Save a note with its row's Save button, from the keyboard.
	b.do("clear the note", chromedp.Clear(chromedp.CSS("#note-"+o.noteTx)))
	b.typeInto("#note-"+o.noteTx, "paid by keyboard")
	b.tabTo(`form[action="/history/notes/` + o.noteTx + `"] button`)
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Note saved") || b.value("#note-"+o.noteTx) != "paid by keyboard" {
		t.Fatalf("save a note with Enter on its Save button: %d %q", status, b.value("#note-"+o.noteTx))
	}
}

// historySatoshis reads the History's signed BTC amounts as satoshis.
func historySatoshis(t *testing.T, amounts []string) []int64 {
	t.Helper()
	var out []int64
	for _, a := range amounts {
		s := strings.TrimSuffix(a, " BTC")
		sign := int64(1)
		if rest, neg := strings.CutPrefix(s, "−"); neg {
			s, sign = rest, -1
		}
		s = strings.TrimPrefix(s, "+")
		n, err := strconv.ParseInt(strings.Replace(s, ".", "", 1), 10, 64)
		if err != nil {
			t.Fatalf("amount %q: %v", a, err)
		}
		out = append(out, sign*n)
	}
	return out
}
