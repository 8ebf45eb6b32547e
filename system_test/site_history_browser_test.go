package system_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	b.assertNoConsoleErrors()
}
