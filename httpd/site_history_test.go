package httpd

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// newHistorySite is an ownerTest whose server reads History from a
// csvHistory of addrs, signed in through the site, with one Account card
// per address (named after its position).
func newHistorySite(t *testing.T, plan actors.Plan, addrs ...csvAddr) (*siteClient, *csvHistory, []string) {
	t.Helper()
	o, hist := newHistoryOwnerTest(t, plan, addrs...)
	o.t = t
	created := o.account
	var ids []string
	for i, a := range addrs {
		_, _, body := o.send("192.0.2.1", "POST", "/owner/v1/portfolio/cards", created.OwnerSecret, map[string]any{"address": a.address, "name": []string{"First", "Second", "Third"}[i]})
		ids = append(ids, body["card"].(map[string]any)["id"].(string))
	}
	sc := newSiteClient(o)
	sc.mustSignIn()
	return sc, hist, ids
}

var historyRows = regexp.MustCompile(`<tr id="tx-([0-9a-f]{64})"`)

func TestSiteHistoryShowsNotesAndSavesThemInPlace(t *testing.T) {
	t.Parallel()
	c, hist, ids := newHistorySite(t, actors.PlanBase, csvAddr{address: csvAddrA, confirmed: 3, age: time.Hour, step: time.Hour})
	page := c.do("GET", "/history", nil)
	if page.status != 200 || len(historyRows.FindAllString(page.body, -1)) != 3 || !strings.Contains(page.body, "latest calendar year") {
		t.Fatalf("combined History: %d %.2000s", page.status, page.body)
	}
	if !strings.Contains(page.body, `href="/history/cards/`+ids[0]+`"`) || !strings.Contains(page.body, "&#43;0.00001000 BTC") {
		t.Fatalf("combined History lacks the card link or an amount: %.3000s", page.body)
	}
	txid := hist.tx(0, 0).TxID
	hostile := `<script>alert(1)</script>`
	a := c.post("/history", "/history/notes/"+txid, url.Values{"note": {hostile}, "back": {"/history/cards/" + ids[0] + "?offset=0"}})
	if a.status != fasthttp.StatusSeeOther || a.location != "/history/cards/"+ids[0]+"?m=note-saved&offset=0" {
		t.Fatalf("save a note: %d to %q %.300s", a.status, a.location, a.body)
	}
	page = c.do("GET", a.location, nil)
	if !strings.Contains(page.body, "Note saved.") || strings.Contains(page.body, hostile) || !strings.Contains(page.body, `value="&lt;script&gt;alert(1)&lt;/script&gt;"`) {
		t.Fatalf("the card's History after the note: %.4000s", page.body)
	}
	// A note over the limit is refused, and what was typed is repeated.
	long := strings.Repeat("é", 51)
	a = c.post("/history", "/history/notes/"+txid, url.Values{"note": {long}, "back": {"/history"}})
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, long) || !strings.Contains(a.body, "was not saved") {
		t.Fatalf("a long note: %d %.500s", a.status, a.body)
	}
	a = c.post("/history", "/history/notes/"+txid+"/delete", url.Values{"back": {"/history"}})
	if a.status != fasthttp.StatusSeeOther || a.location != "/history?m=note-deleted" {
		t.Fatalf("delete a note: %d %q", a.status, a.location)
	}
	if page = c.do("GET", "/history", nil); strings.Contains(page.body, "alert(1)") {
		t.Fatal("the deleted note is still shown")
	}
}

func TestSiteHistoryReturnsOnlyToHistoryPages(t *testing.T) {
	t.Parallel()
	c, hist, _ := newHistorySite(t, actors.PlanBase, csvAddr{address: csvAddrA, confirmed: 1, age: time.Hour, step: time.Hour})
	txid := hist.tx(0, 0).TxID
	for _, back := range []string{"https://evil.example/history", "//evil.example/history", "/history/../access", "/history/cards/../../access", "/access", `/history/cards/x\..\y`, "javascript:alert(1)"} {
		a := c.post("/history", "/history/notes/"+txid, url.Values{"note": {"n"}, "back": {back}})
		if a.status != fasthttp.StatusSeeOther || !strings.HasPrefix(a.location, "/history") || strings.Contains(a.location, "evil") || strings.Contains(a.location, "access") {
			t.Errorf("back %q: %d to %q", back, a.status, a.location)
		}
	}
}

func TestSiteHistoryPagesWithACountLine(t *testing.T) {
	t.Parallel()
	c, _, ids := newHistorySite(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 60, age: time.Hour, step: time.Hour})
	first := c.do("GET", "/history/cards/"+ids[0], nil)
	if n := len(historyRows.FindAllString(first.body, -1)); n != historyLimitDefault || !strings.Contains(first.body, "1–25 of 60.") ||
		!strings.Contains(first.body, `?offset=25" rel="next">Next`) || !strings.Contains(first.body, `?offset=50">Last`) || strings.Contains(first.body, ">Previous") {
		t.Fatalf("first page: %d rows %.300s", n, first.body)
	}
	last := c.do("GET", "/history/cards/"+ids[0]+"?offset=50", nil)
	if n := len(historyRows.FindAllString(last.body, -1)); n != 10 || !strings.Contains(last.body, "51–60 of 60.") || strings.Contains(last.body, ">Next") ||
		!strings.Contains(last.body, `?offset=25" rel="prev">Previous`) || !strings.Contains(last.body, `href="/history/cards/`+ids[0]+`">First`) {
		t.Fatalf("last page: %d rows", n)
	}
	if !strings.Contains(last.body, "full history") {
		t.Fatal("the extended plan's window is not said")
	}
}

func TestSiteHistoryLabelsTheOlderPreviewAndADegradedUpstream(t *testing.T) {
	t.Parallel()
	c, hist, ids := newHistorySite(t, actors.PlanBase,
		csvAddr{address: csvAddrA, confirmed: 5, age: 400 * 24 * time.Hour, step: time.Hour},
		csvAddr{address: csvAddrB, confirmed: 2, age: time.Hour, step: time.Hour})
	card := c.do("GET", "/history/cards/"+ids[0], nil)
	if !strings.Contains(card.body, `id="history-preview"`) || len(historyRows.FindAllString(card.body, -1)) != 5 {
		t.Fatalf("a quiet card's page does not show its older preview as such: %.3000s", card.body)
	}
	hist.fail(csvAddrB, 0)
	page := c.do("GET", "/history", nil)
	if page.status != 200 || !strings.Contains(page.body, `id="history-degraded"`) || !strings.Contains(page.body, "unavailable") {
		t.Fatalf("a degraded upstream: %d %.3000s", page.status, page.body)
	}
	page = c.do("GET", "/history/cards/"+ids[1], nil)
	if page.status != 200 || !strings.Contains(page.body, `id="history-degraded"`) || strings.Contains(page.body, "No transactions") {
		t.Fatalf("a degraded card page: %d %.3000s", page.status, page.body)
	}
}
