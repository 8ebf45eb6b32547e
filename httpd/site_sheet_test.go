package httpd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/valyala/fasthttp"
)

// sheetSite is an extended-plan account with a Sheet Space, signed in.
type sheetSite struct {
	t     *testing.T
	c     *siteClient
	o     *ownerTest
	id    string
	token string
}

func newSheetSite(t *testing.T) *sheetSite {
	t.Helper()
	c, o := newSpacesSite(t)
	id := c.createSpace(t, "Grid", "sheet")
	page := c.do("GET", "/spaces/"+id+"/sheet", nil)
	if page.status != 200 || !strings.Contains(page.body, `src="/assets/sheet.js"`) {
		t.Fatalf("the editor page: %d %.1000s", page.status, page.body)
	}
	return &sheetSite{t: t, c: c, o: o, id: id, token: formToken(t, page)}
}

// owner writes through the owner API as an agent would through /v1.
func (e *sheetSite) ownerSheet(method string, body map[string]any) map[string]any {
	e.t.Helper()
	body["expected_revision"] = e.revision()
	return e.o.ownerJSON(method, "/owner/v1/bookmark-spaces/"+e.id+"/sheet", body, 200)
}

func (e *sheetSite) revision() int64 {
	e.t.Helper()
	return int64(e.o.ownerJSON("GET", "/owner/v1/bookmark-spaces/"+e.id+"/sheet?limit=1", nil, 200)["revision"].(float64))
}

// slot reads one slot's cells through the owner API.
func (e *sheetSite) slot(i int) []any {
	e.t.Helper()
	m := e.o.ownerJSON("GET", fmt.Sprintf("/owner/v1/bookmark-spaces/%s/sheet?offset=%d&limit=1", e.id, i), nil, 200)
	return m["rows"].([]any)[0].(map[string]any)["cells"].([]any)
}

// post sends an editor write and decodes its JSON answer.
func (e *sheetSite) post(suffix string, form url.Values) (int, map[string]any) {
	e.t.Helper()
	form.Set("csrf", e.token)
	a := e.c.do("POST", "/spaces/"+e.id+"/sheet"+suffix, form)
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		e.t.Fatalf("%s: %d, not JSON: %.300s", suffix, a.status, a.body)
	}
	return a.status, m
}

func rowForm(rev int64, base, cells []string) url.Values {
	f := url.Values{"expected_revision": {strconv.FormatInt(rev, 10)}}
	for i := 0; i < 5; i++ {
		f.Set("b"+strconv.Itoa(i), base[i])
		f.Set("c"+strconv.Itoa(i), cells[i])
	}
	return f
}

var blankRow = []string{"", "", "", "", ""}

func TestSiteSheetReadsTheWholeSheetOrTheFilteredRows(t *testing.T) {
	t.Parallel()
	e := newSheetSite(t)
	rows := []map[string]any{}
	for i := 0; i < 100; i++ {
		rows = append(rows, map[string]any{"index": i * 9, "cells": []string{fmt.Sprintf("addr%d", i%7), []string{"btc", "ltc"}[i%2], "", "", "<b>x</b>"}})
	}
	e.ownerSheet("PATCH", map[string]any{"rows": rows})
	a := e.c.do("GET", "/spaces/"+e.id+"/sheet.json", nil)
	var snap site.SheetSnapshot
	if a.status != 200 || json.Unmarshal([]byte(a.body), &snap) != nil {
		t.Fatalf("sheet.json: %d %.300s", a.status, a.body)
	}
	if len(snap.Rows) != 100 || snap.Rows[99].Index != 891 || snap.Filtered || snap.Revision != e.revision() || snap.Headers[0] != "Address" {
		t.Fatalf("the whole Sheet: %d rows, last %v, filtered %v, revision %d", len(snap.Rows), snap.Rows[99], snap.Filtered, snap.Revision)
	}
	if ct := string(a.header.ContentType()); !strings.HasPrefix(ct, "application/json") || string(a.header.Peek("Content-Security-Policy")) == "" {
		t.Fatalf("sheet.json answers %q without the site's headers", ct)
	}
	a = e.c.do("GET", "/spaces/"+e.id+"/sheet.json?address=addr3&chain=ltc", nil)
	json.Unmarshal([]byte(a.body), &snap)
	// addr3 is i%7==3, ltc is i odd: i = 3, 17, 31, 45, 59, 73, 87.
	if !snap.Filtered || len(snap.Rows) != 7 || snap.Rows[0].Index != 27 {
		t.Fatalf("filtered: %+v", snap)
	}
	// A Space that is not there is refused as the API refuses it.
	if a := e.c.do("GET", "/spaces/nosuchspace/sheet.json", nil); a.status != fasthttp.StatusNotFound || !strings.Contains(a.body, `"code":"NOT_FOUND"`) {
		t.Fatalf("an unknown Space: %d %s", a.status, a.body)
	}
}

func TestSiteSheetSaveGoesThroughAnotherRowsChangeButNeverOverASameRowChange(t *testing.T) {
	t.Parallel()
	e := newSheetSite(t)
	rev := e.revision()
	// An agent writes index 500 after the page read the Sheet: the owner's
	// save of index 3 still lands, on the Sheet's new revision.
	e.ownerSheet("PATCH", map[string]any{"rows": []map[string]any{{"index": 500, "cells": []string{"agent", "btc", "", "", ""}}}})
	status, m := e.post("/rows/3", rowForm(rev, blankRow, []string{"mine", "btc", "", "", "note"}))
	if status != 200 || m["revision"].(float64) != float64(rev+2) {
		t.Fatalf("a save after a write elsewhere: %d %v", status, m)
	}
	if got := e.slot(3); got[0] != "mine" || got[4] != "note" {
		t.Fatalf("index 3 holds %v", got)
	}
	// The agent now changes index 3 itself; a save from the page that
	// showed the owner's row is refused with the row as it is, and nothing
	// is written.
	rev = e.revision()
	e.ownerSheet("PATCH", map[string]any{"rows": []map[string]any{{"index": 3, "cells": []string{"agent's", "btc", "", "", ""}}}})
	status, m = e.post("/rows/3", rowForm(rev, []string{"mine", "btc", "", "", "note"}, []string{"mine again", "btc", "", "", ""}))
	if status != fasthttp.StatusConflict || m["code"] != "STALE_VERSION" || m["current"].([]any)[0] != "agent's" || m["revision"].(float64) != float64(rev+1) {
		t.Fatalf("a save over the agent's row: %d %v", status, m)
	}
	if got := e.slot(3); got[0] != "agent's" {
		t.Fatalf("the refused save wrote %v", got)
	}
	// Saving over it is the owner's explicit choice: base is what the
	// conflict showed.
	status, _ = e.post("/rows/3", rowForm(rev+1, []string{"agent's", "btc", "", "", ""}, []string{"mine again", "btc", "", "", ""}))
	if status != 200 || e.slot(3)[0] != "mine again" {
		t.Fatalf("save over: %d, index 3 holds %v", status, e.slot(3))
	}
	// The API's rules answer bad cells, in {"code","error"}.
	status, m = e.post("/rows/4", rowForm(e.revision(), blankRow, []string{strings.Repeat("x", 513), "", "", "", ""}))
	if status != fasthttp.StatusUnprocessableEntity || m["code"] != "VALIDATION" {
		t.Fatalf("a long cell: %d %v", status, m)
	}
	for _, bad := range []string{"/rows/1000", "/rows/-1", "/rows/x"} {
		if status, m = e.post(bad, rowForm(e.revision(), blankRow, blankRow)); status != fasthttp.StatusUnprocessableEntity {
			t.Fatalf("%s: %d %v", bad, status, m)
		}
	}
	f := rowForm(0, blankRow, blankRow)
	f.Set("expected_revision", "soon")
	if status, m = e.post("/rows/1", f); status != fasthttp.StatusUnprocessableEntity || !strings.Contains(m["error"].(string), "expected_revision") {
		t.Fatalf("a bad revision: %d %v", status, m)
	}
	// Without the form token nothing is written.
	if a := e.c.do("POST", "/spaces/"+e.id+"/sheet/rows/9", rowForm(e.revision(), blankRow, []string{"x", "y", "", "", ""})); a.status != fasthttp.StatusForbidden || e.slot(9)[0] != "" {
		t.Fatalf("a save without the token: %d", a.status)
	}
}

func TestSiteSheetDeleteHeadingAndCompact(t *testing.T) {
	t.Parallel()
	e := newSheetSite(t)
	e.ownerSheet("PATCH", map[string]any{"rows": []map[string]any{
		{"index": 2, "cells": []string{"a", "btc", "", "", ""}},
		{"index": 5, "cells": []string{"b", "btc", "", "", ""}},
		{"index": 9, "cells": []string{"c", "btc", "", "", ""}},
	}})
	rev := e.revision()
	// Delete with a base that is not the slot's: refused, nothing moves.
	status, m := e.post("/rows/2/delete", rowForm(rev-1, []string{"z", "btc", "", "", ""}, blankRow))
	if status != fasthttp.StatusConflict || e.slot(2)[0] != "a" {
		t.Fatalf("a delete of a changed row: %d %v", status, m)
	}
	status, m = e.post("/rows/2/delete", rowForm(rev-1, []string{"a", "btc", "", "", ""}, blankRow))
	if status != 200 || m["deleted_index"].(float64) != 2 || m["shifted_rows"].(float64) != 2 || e.slot(4)[0] != "b" || e.slot(8)[0] != "c" {
		t.Fatalf("delete: %d %v", status, m)
	}

	// The fifth heading: refused when it changed meanwhile, saved after.
	rev = e.revision()
	e.ownerSheet("PATCH", map[string]any{"headers": []string{"Address", "Blockchain", "Transaction ID", "Date", "Agent's"}})
	status, m = e.post("/headers", url.Values{"expected_revision": {strconv.FormatInt(rev, 10)}, "base": {"Notes"}, "heading": {"Owner's"}})
	if status != fasthttp.StatusConflict || m["current"].([]any)[0] != "Agent's" {
		t.Fatalf("a heading over the agent's: %d %v", status, m)
	}
	status, m = e.post("/headers", url.Values{"expected_revision": {strconv.FormatInt(rev, 10)}, "base": {"Agent's"}, "heading": {"Owner's"}})
	if status != 200 || m["headers"].([]any)[4] != "Owner's" {
		t.Fatalf("save the heading: %d %v", status, m)
	}
	if status, m = e.post("/headers", url.Values{"expected_revision": {strconv.FormatInt(e.revision(), 10)}, "base": {"Owner's"}, "heading": {""}}); status != fasthttp.StatusUnprocessableEntity {
		t.Fatalf("an empty heading: %d %v", status, m)
	}

	// Compact runs on the Sheet as it is and says how many rows moved.
	status, m = e.post("/compact", url.Values{})
	if status != 200 || m["moved_rows"].(float64) != 2 || e.slot(0)[0] != "b" || e.slot(1)[0] != "c" {
		t.Fatalf("compact: %d %v", status, m)
	}
	if status, m = e.post("/compact", url.Values{}); status != 200 || m["moved_rows"].(float64) != 0 {
		t.Fatalf("compact again: %d %v", status, m)
	}
}
