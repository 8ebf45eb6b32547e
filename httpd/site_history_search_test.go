package httpd

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The combined History searched, filtered, sorted and paged by the page's
// address, each link keeping the rest of the search; a search that says
// nothing sure is answered with what is wrong, on the page.
func TestSiteHistorySearchFiltersSortsAndPages(t *testing.T) {
	t.Parallel()
	c, hist, ids := newHistorySite(t, actors.PlanExtended,
		csvAddr{address: csvAddrA, confirmed: 40, age: time.Hour, step: time.Hour},
		csvAddr{address: csvAddrB, confirmed: 30, age: 90 * time.Minute, step: time.Hour})
	page := c.do("GET", "/history", nil)
	if page.status != 200 || len(historyRows.FindAllString(page.body, -1)) != 25 || !strings.Contains(page.body, "1–25 of 70.") {
		t.Fatalf("combined History: %d %.300s", page.status, page.body)
	}
	// Position 31 of the first card: its txid ends in 0000001f.
	page = c.do("GET", "/history?q=0000001F", nil)
	rows := historyRows.FindAllStringSubmatch(page.body, -1)
	if len(rows) != 1 || rows[0][1] != hist.tx(0, 31).TxID || !strings.Contains(page.body, "1–1 of 1 matching (70 transactions in all).") {
		t.Fatalf("a txid search: %v %.300s", rows, page.body)
	}
	// Received on the second card: its even positions, 15 of 30.
	q := "/history?card=" + ids[1] + "&direction=received"
	page = c.do("GET", q, nil)
	if n := len(historyRows.FindAllString(page.body, -1)); n != 15 || !strings.Contains(page.body, "1–15 of 15 matching (30 transactions in all).") {
		t.Fatalf("received on the second card: %d rows %.300s", n, page.body)
	}
	// Every link of a filtered page keeps the filter.
	page = c.do("GET", "/history?direction=sent&q=abab", nil)
	if !strings.Contains(page.body, "1–25 of 35 matching") {
		t.Fatalf("sent: %.300s", page.body)
	}
	for _, link := range []string{
		`href="/history?direction=sent&amp;offset=25&amp;q=abab" rel="next">Next`,
		`href="/history?direction=sent&amp;q=abab&amp;sort=date-asc" id="sort-date"`,
		`href="/history?direction=sent&amp;q=abab&amp;sort=amount-desc" id="sort-amount"`,
	} {
		if !strings.Contains(page.body, link) {
			t.Errorf("the sent page lacks %s", link)
		}
	}
	next := c.do("GET", "/history?direction=sent&offset=25&q=abab", nil)
	if !strings.Contains(next.body, "26–35 of 35 matching") || !strings.Contains(next.body, `href="/history?direction=sent&amp;q=abab" rel="prev">Previous`) {
		t.Fatalf("the sent page's second page: %.300s", next.body)
	}
	// Sorted by amount, largest received first: position 38 of the first
	// card (1,038 sat) leads; then the other way round, the largest sent.
	page = c.do("GET", "/history?sort=amount-desc", nil)
	if rows = historyRows.FindAllStringSubmatch(page.body, -1); rows[0][1] != hist.tx(0, 38).TxID || !strings.Contains(page.body, `aria-sort="descending"><a href="/history?sort=amount-asc" id="sort-amount"`) {
		t.Fatalf("by amount: first %s", rows[0][1])
	}
	page = c.do("GET", "/history?sort=amount-asc", nil)
	if rows = historyRows.FindAllStringSubmatch(page.body, -1); rows[0][1] != hist.tx(0, 39).TxID {
		t.Fatalf("by amount, sent first: first %s", rows[0][1])
	}
	page = c.do("GET", "/history?sort=date-asc&offset=50", nil)
	if rows = historyRows.FindAllStringSubmatch(page.body, -1); len(rows) != 20 || rows[19][1] != hist.tx(0, 0).TxID {
		t.Fatalf("oldest first, last page: %d rows", len(rows))
	}
	// Past the end: said, with the way back.
	page = c.do("GET", "/history?direction=sent&offset=100", nil)
	if page.status != 200 || !strings.Contains(page.body, "This page is past the end: 35 transactions match.") || !strings.Contains(page.body, `href="/history?direction=sent&amp;offset=25">Go to the last page`) {
		t.Fatalf("past the end: %d %.300s", page.status, page.body)
	}
	// Bad values: the page says what is wrong, never a 500.
	for query, says := range map[string]string{
		"from=2026-13-01":                "“From” is not a date",
		"to=yesterday":                   "“To” is not a date",
		"from=2026-03-02&to=2026-03-01":  "“To” is before “From”",
		"direction=sideways":             "Direction is received, sent, or both.",
		"sort=random":                    "Sort by date or by amount",
		"offset=-1":                      "That page number is not one",
		"offset=99999999999999999999999": "That page number is not one",
		"card=nope":                      "That card is not in this History",
		"q=" + strings.Repeat("x", 101):  "The search holds at most 100 characters",
	} {
		page = c.do("GET", "/history?"+query, nil)
		if page.status != fasthttp.StatusBadRequest || !strings.Contains(page.body, says) || len(historyRows.FindAllString(page.body, -1)) != 0 {
			t.Errorf("%s: %d, want 400 saying %q", query, page.status, says)
		}
	}
}

// A card's History shows its address with a copy button; links to a
// block explorer only once the owner chose one in Account settings, and
// the page says where they lead.
func TestSiteHistoryAddressAndExplorerLinks(t *testing.T) {
	t.Parallel()
	c, hist, ids := newHistorySite(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 3, age: time.Hour, step: time.Hour})
	page := c.do("GET", "/history/cards/"+ids[0], nil)
	if !strings.Contains(page.body, `<span class="mono text" id="card-address">`+csvAddrA+`</span>`) || !strings.Contains(page.body, `data-copy="card-address"`) ||
		!strings.Contains(page.body, `data-copy="txid-`+hist.tx(0, 0).TxID+`"`) || !strings.Contains(page.body, `id="copy-status" role="status"`) {
		t.Fatalf("the card's address or the copy buttons are missing: %.3000s", page.body)
	}
	if cardPage := c.do("GET", "/portfolio/cards/"+ids[0], nil); !strings.Contains(cardPage.body, `<span class="mono text" id="card-page-address">`+csvAddrA+`</span> <button type="button" class="quiet" data-copy="card-page-address" hidden>Copy address</button>`) {
		t.Fatalf("the card's page has no copy button for its address: %.3000s", cardPage.body)
	}
	if strings.Contains(page.body, "mempool.space/") || !strings.Contains(page.body, "No block-explorer links") {
		t.Fatal("a new account's History links to an explorer")
	}
	settings := c.do("GET", "/settings", nil)
	if !strings.Contains(settings.body, `id="explorer-none" name="explorer" value="none" checked`) || !strings.Contains(settings.body, "None by default, for privacy") {
		t.Fatalf("the settings page's explorer section: %.200s", settings.body)
	}
	a := c.post("/settings", "/settings/explorer", url.Values{"explorer": {"https://evil.example"}})
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, "The block explorer was not changed: explorer must be one of: none, mempool.space, blockstream.info.") {
		t.Fatalf("a URL for an explorer: %d %.300s", a.status, a.body)
	}
	a = c.post("/settings", "/settings/explorer", url.Values{"explorer": {"mempool.space"}})
	if a.status != fasthttp.StatusSeeOther || a.location != "/settings?m=explorer#explorer-heading" {
		t.Fatalf("choose mempool.space: %d %q", a.status, a.location)
	}
	page = c.do("GET", "/history/cards/"+ids[0], nil)
	txid := hist.tx(0, 1).TxID
	for _, want := range []string{
		`<a href="https://mempool.space/tx/` + txid + `" rel="noopener noreferrer">mempool.space<span class="visually-hidden">: transaction ` + txid + ` (leaves this site)`,
		`<a href="https://mempool.space/address/` + csvAddrA + `" rel="noopener noreferrer" id="card-address-explorer">`,
		"the link leaves this site and tells mempool.space what you look at",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the History lacks %s", want)
		}
	}
	if page = c.do("GET", "/history", nil); !strings.Contains(page.body, `href="https://mempool.space/tx/`+txid+`"`) {
		t.Error("the combined History does not link to the explorer")
	}
}

// A refused note save draws the History page it came from again, its row
// holding what was typed, and why it was refused, with the search kept.
func TestSiteHistoryRefusedNoteKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	c, hist, ids := newHistorySite(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 3, age: time.Hour, step: time.Hour})
	txid := hist.tx(0, 0).TxID
	long := strings.Repeat("é", 51)
	back := "/history/cards/" + ids[0] + "?direction=received"
	a := c.post(back, "/history/notes/"+txid, url.Values{"note": {long}, "back": {back}})
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, `id="note-`+txid+`" name="note" value="`+long+`"`) ||
		!strings.Contains(a.body, `id="note-`+txid+`-refused"`) || !strings.Contains(a.body, "The note was not saved") ||
		!strings.Contains(a.body, `<option value="received" selected>`) {
		t.Fatalf("a refused note: %d %.4000s", a.status, a.body)
	}
	// What the page keeps is the search: the back address a save returns to.
	if !strings.Contains(a.body, `name="back" value="/history/cards/`+ids[0]+`?direction=received"`) {
		t.Fatal("the redrawn page's note forms do not come back to the same search")
	}
}

// A card whose History fails after its first pages: what was read is
// searched and shown under the banner, never an empty or a complete-
// looking History, and the other card is whole.
func TestSiteHistorySearchOfAPartlyReadCard(t *testing.T) {
	t.Parallel()
	c, hist, _ := newHistorySite(t, actors.PlanExtended,
		csvAddr{address: csvAddrA, confirmed: 150, age: time.Hour, step: time.Hour},
		csvAddr{address: csvAddrB, confirmed: 10, age: time.Hour, step: time.Hour})
	hist.fail(csvAddrA, 100)
	page := c.do("GET", "/history", nil)
	if page.status != 200 || !strings.Contains(page.body, `id="history-degraded"`) || !strings.Contains(page.body, "1–25 of 110.") {
		t.Fatalf("a partly read card: %d %.3000s", page.status, page.body)
	}
	hist.fail(csvAddrA, 0)
	if page = c.do("GET", "/history?q=nothing-matches", nil); page.status != 200 || !strings.Contains(page.body, `id="history-degraded"`) || strings.Contains(page.body, "No transaction") {
		t.Fatalf("an unread card, nothing found: %d %.3000s", page.status, page.body)
	}
}

// A card longer than a page view reads: the search covers its newest
// historySearchTxsMax, and the page says so and where the rest is.
func TestSiteHistorySearchReadsABoundedWindow(t *testing.T) {
	t.Parallel()
	c, _, _ := newHistorySite(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: historySearchTxsMax + 30, age: time.Hour, step: time.Minute})
	page := c.do("GET", "/history", nil)
	if page.status != 200 || !strings.Contains(page.body, "1–25 of 2,500.") || !strings.Contains(page.body, "covers each card's newest 2,500. The CSV download has every one.") {
		t.Fatalf("a long card: %d %.3000s", page.status, page.body)
	}
	if page = c.do("GET", "/history?offset=2475", nil); !strings.Contains(page.body, "2,476–2,500 of 2,500.") || strings.Contains(page.body, `rel="next"`) {
		t.Fatalf("its last page: %.3000s", page.body)
	}
}
