package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSheetsEndToEnd drives the Sheet routes (/v1 and /owner/v1
// .../bookmark-spaces/{space_id}/sheet) over real HTTP on a server without
// the Sheet-write budget: dense and sparse reads with their paging and
// filters, the query rules, PATCH, PUT upserts (and their two CONFLICTs),
// DELETE with its shift, compaction, grants, Space deletion of a Sheet
// Space and bad input. One server; each subtest has its own account.
func TestSheetsEndToEnd(t *testing.T) {
	t.Parallel()
	s := shStartServer(t)

	t.Run("read_dense", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			v := c.get(t, "")
			if v.SpaceID != c.id || !slices.Equal(v.Headers, shDefaultHeaders) || v.RowCount != 1000 || v.ColumnCount != 5 || v.Revision < 0 {
				t.Fatalf("%s: a new Sheet reads %s", c, v.raw)
			}
			shDense(t, c.String()+" new Sheet, no parameters", v, 0, 100, shNext(100), nil)

			want := map[int][]string{
				3:   shCells("bc1qthree", "bitcoin", "tx3", "2024-01-03", "third"),
				150: shCells("0xabc", "ethereum", "", "", ""),
				999: shCells("", "", "", "", "last slot"),
			}
			c.setRows(t, shRowsOf(want)...)
			v = c.get(t, "")
			shDense(t, c.String()+" default page", v, 0, 100, shNext(100), want)
			shDense(t, c.String()+" offset=0&limit=100", c.get(t, "offset=0&limit=100"), 0, 100, shNext(100), want)
			shDense(t, c.String()+" view= (empty)", c.get(t, "view="), 0, 100, shNext(100), want)
			shDense(t, c.String()+" offset=100", c.get(t, "offset=100"), 100, 100, shNext(200), want)
			shDense(t, c.String()+" offset=10&limit=5", c.get(t, "offset=10&limit=5"), 10, 5, shNext(15), want)
			shDense(t, c.String()+" offset=148&limit=3", c.get(t, "limit=3&offset=148"), 148, 3, shNext(151), want)
			shDense(t, c.String()+" offset=900", c.get(t, "offset=900"), 900, 100, nil, want)
			shDense(t, c.String()+" offset=950", c.get(t, "offset=950&limit=100"), 950, 50, nil, want)
			shDense(t, c.String()+" offset=999&limit=1", c.get(t, "offset=999&limit=1"), 999, 1, nil, want)
			shDense(t, c.String()+" offset=998&limit=1", c.get(t, "offset=998&limit=1"), 998, 1, shNext(999), want)

			// Walking next_offset covers every slot once.
			seen, pages, offset := 0, 0, shNext(0)
			for offset != nil {
				p := c.get(t, "limit=100&offset="+strconv.Itoa(*offset))
				shDense(t, fmt.Sprintf("%s page at %d", c, *offset), p, *offset, 100, p.NextOffset, want)
				if p.Revision != v.Revision {
					t.Fatalf("%s: revision moved from %d to %d without a write", c, v.Revision, p.Revision)
				}
				seen += len(p.Rows)
				offset = p.NextOffset
				if pages++; pages > 10 {
					t.Fatalf("%s: dense paging did not end after 10 pages", c)
				}
			}
			if seen != 1000 || pages != 10 {
				t.Fatalf("%s: dense paging saw %d slots in %d pages, want 1000 in 10", c, seen, pages)
			}
		}
	})

	t.Run("read_sparse_and_filters", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			if v := c.get(t, "view=sparse"); len(v.Rows) != 0 || v.NextOffset != nil {
				t.Fatalf("%s: sparse read of an empty Sheet %s", c, v.raw)
			}
			rows := []shRow{
				{2, shCells("addr-A", "bitcoin", "t1", "", "")},
				{5, shCells("addr-A", "litecoin", "t2", "", "")},
				{9, shCells("addr-B", "bitcoin", "", "", "n")},
				{40, shCells("addr-A", "bitcoin", "t3", "", "dup")},
				{41, shCells("ADDR-A", "Bitcoin", "", "", "case")},
				{77, shCells("a&b=c d/é", "chain #1", "", "", "odd")},
				{500, shCells("", "", "", "", "note only")},
				{999, shCells("addr-B", "litecoin", "", "", "")},
			}
			c.setRows(t, rows...)
			at := func(idx ...int) []shRow {
				var out []shRow
				for _, r := range rows {
					if slices.Contains(idx, r.Index) {
						out = append(out, r)
					}
				}
				return out
			}
			cases := []struct {
				query string
				want  []shRow
			}{
				{"view=sparse", rows},
				{"view=sparse&limit=1", rows}, // limit is validated but ignored
				{"view=sparse&limit=100", rows},
				{"view=sparse&offset=3", rows[1:]},
				{"view=sparse&offset=5", rows[1:]},
				{"view=sparse&offset=6", rows[2:]},
				{"view=sparse&offset=999", rows[7:]},
				{"view=sparse&offset=501", rows[7:]},
				{"address=addr-A", at(2, 5, 40)},
				{"address=addr-A&view=sparse", at(2, 5, 40)},
				{"address=addr-A&offset=3", at(5, 40)},
				{"address=addr-A&offset=3&limit=1", at(5, 40)},
				{"chain=bitcoin", at(2, 9, 40)},
				{"chain=litecoin&offset=6", at(999)},
				{"address=addr-A&chain=bitcoin", at(2, 40)},
				{"address=addr-A&chain=bitcoin&offset=3", at(40)},
				{"address=addr-A&chain=bitcoin&offset=41", nil},
				{"address=ADDR-A", at(41)},
				{"address=addr-a", nil},
				{"chain=Bitcoin", at(41)},
				{"chain=BITCOIN", nil},
				{"address=addr-", nil},
				{"address=" + url.QueryEscape("a&b=c d/é") + "&chain=" + url.QueryEscape("chain #1"), at(77)},
				{"address=nobody&chain=bitcoin", nil},
			}
			for _, tc := range cases {
				v := c.get(t, tc.query)
				if tc.want == nil {
					tc.want = []shRow{}
				}
				if !reflect.DeepEqual(v.Rows, tc.want) || v.NextOffset != nil {
					t.Errorf("%s ?%s: rows %v next_offset %v, want %v and null", c, tc.query, v.Rows, shFmtNext(v.NextOffset), tc.want)
				}
			}
			// A blank slot never shows in the sparse view; a cleared one leaves.
			c.setRows(t, shRow{9, shBlank()})
			if v := c.get(t, "view=sparse"); !reflect.DeepEqual(v.Rows, at(2, 5, 40, 41, 77, 500, 999)) {
				t.Errorf("%s: sparse view after clearing slot 9: %v", c, v.Rows)
			}
		}
	})

	t.Run("sparse_pages", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		c := e.agentSheet(t)
		// 300 rows of four full cells (over 2 KiB each): a page is bounded
		// by 256 KiB of row data before it reaches 200 rows. Two rows in
		// three are on chain "even".
		big := func(i int, col string) string {
			p := fmt.Sprintf("%s-%03d-", col, i)
			return p + strings.Repeat("x", 512-len(p))
		}
		var all []shRow
		for batch := range 3 {
			var rows []shRow
			for i := batch * 100; i < batch*100+100; i++ {
				chain := "even"
				if i%3 == 0 {
					chain = "odd"
				}
				cells := shCells(big(i, "a"), chain, big(i, "t"), big(i, "d"), big(i, "n"))
				rows = append(rows, shRow{2*i + 1, cells}) // slots 1, 3, ..., 599
			}
			c.setRows(t, rows...)
			all = append(all, rows...)
		}
		byIndex := map[int]shRow{}
		for _, r := range all {
			byIndex[r.Index] = r
		}
		rowBytes := func(r shRow) int {
			n := 0
			for _, cell := range r.Cells {
				n += len(cell)
			}
			return n
		}
		walk := func(query string, want []shRow) {
			t.Helper()
			var got []shRow
			offset, pages := 0, 0
			rev := c.rev(t)
			for {
				p := c.get(t, query+"&offset="+strconv.Itoa(offset))
				if p.Revision != rev {
					t.Fatalf("?%s: revision changed without a write", query)
				}
				size := 0
				for _, r := range p.Rows {
					size += rowBytes(r)
				}
				if len(p.Rows) > 200 || size > 256<<10 {
					t.Fatalf("?%s offset %d: page of %d rows and %d bytes of row data", query, offset, len(p.Rows), size)
				}
				if len(p.Rows) == 0 {
					t.Fatalf("?%s offset %d: empty page with next_offset %s", query, offset, shFmtNext(p.NextOffset))
				}
				got = append(got, p.Rows...)
				pages++
				if p.NextOffset == nil {
					break
				}
				// next_offset is the first matching row left out, and it
				// was left out only because it did not fit.
				if next := *p.NextOffset; next <= p.Rows[len(p.Rows)-1].Index || pages > 10 {
					t.Fatalf("?%s: next_offset %d after a page ending at %d", query, next, p.Rows[len(p.Rows)-1].Index)
				}
				offset = *p.NextOffset
				if i := slices.IndexFunc(want, func(r shRow) bool { return r.Index == offset }); i < 0 {
					t.Fatalf("?%s: next_offset %d is not a matching row", query, offset)
				}
				if len(p.Rows) < 200 && size+rowBytes(byIndex[offset]) <= 256<<10 {
					t.Fatalf("?%s: a page of %d rows (%d bytes) stopped before row %d, which fits", query, len(p.Rows), size, offset)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("?%s: walking next_offset returned %d rows, want %d", query, len(got), len(want))
			}
			if pages < 2 {
				t.Fatalf("?%s: %d rows came in one page", query, len(got))
			}
		}
		walk("view=sparse", all)
		walk("view=sparse&limit=1", all)
		var even []shRow
		for _, r := range all {
			if r.Cells[1] == "even" {
				even = append(even, r)
			}
		}
		walk("chain=even", even)

		// Small rows: the 200-row bound.
		d := e.ownerSheet(t)
		var small []shRow
		for batch := range 3 {
			var rows []shRow
			for i := batch * 100; i < batch*100+100; i++ {
				rows = append(rows, shRow{i + 10, shCells("addr", "chain", strconv.Itoa(i), "", "")})
			}
			d.setRows(t, rows...)
			small = append(small, rows...)
		}
		for _, q := range []string{"view=sparse", "address=addr", "address=addr&chain=chain"} {
			p := d.get(t, q)
			if len(p.Rows) != 200 || !reflect.DeepEqual(p.Rows, small[:200]) || p.NextOffset == nil || *p.NextOffset != small[200].Index {
				t.Errorf("%s ?%s: first page of %d rows, next_offset %s; want 200 rows and %d", d, q, len(p.Rows), shFmtNext(p.NextOffset), small[200].Index)
				continue
			}
			p = d.get(t, q+"&offset="+strconv.Itoa(*p.NextOffset))
			if !reflect.DeepEqual(p.Rows, small[200:]) || p.NextOffset != nil {
				t.Errorf("%s ?%s: second page of %d rows, next_offset %s", d, q, len(p.Rows), shFmtNext(p.NextOffset))
			}
		}
	})

	t.Run("read_bad_query", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			c.setRows(t, shRow{0, shCells("a", "b", "", "", "")})
			for _, q := range []string{"filter=x", "filter=", "filter", "view=sparse&filter=address", "filter=chain%3Dbitcoin&offset=0", "address=a&filter=a"} {
				r := c.do(t, "GET", q, nil)
				spCheck(t, c.String()+" ?"+q, r, http.StatusBadRequest, "")
				if r.Status == http.StatusBadRequest {
					shErrorBody(t, c.String()+" ?"+q, r)
				}
			}
			bad := []string{
				"offset=-1", "offset=1000", "offset=x", "offset=1.5", "offset=", "offset=+1", "offset=0x10", "offset=1e2", "offset=%201",
				"offset=99999999999999999999999", "offset=0&offset=0", "offset=0&offset=5",
				"limit=0", "limit=101", "limit=-1", "limit=x", "limit=", "limit=2.0", "limit=10&limit=10",
				"view=dense", "view=Sparse", "view=SPARSE", "view=sparse%20", "view=sparse&view=sparse", "view=sparse&limit=0",
				"foo=1", "Offset=0", "LIMIT=5", "page=2", "cursor=x", "offset=0&bogus", "address=a&addr=a",
			}
			for _, q := range bad {
				spCheck(t, c.String()+" ?"+q, c.do(t, "GET", q, nil), http.StatusUnprocessableEntity, "VALIDATION")
			}
			// Accepted edges.
			for _, q := range []string{"offset=0", "offset=999", "limit=1", "limit=100", "view=", "view=sparse", "address=", "chain="} {
				if r := c.do(t, "GET", q, nil); r.Status != http.StatusOK {
					t.Errorf("%s ?%s: %d %s", c, q, r.Status, r.Body)
				}
			}
		}
	})

	t.Run("patch_rows_and_headers", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			rev := c.rev(t)
			body := map[string]any{"expected_revision": rev, "rows": []shRow{
				{7, shCells("b", "bitcoin", "", "", "")},
				{0, shCells("a", "bitcoin", "tx", "2024-01-01", "hello")},
			}}
			p := c.patch(t, body)
			if p.SpaceID != c.id || p.Revision != rev+1 || !slices.Equal(p.Headers, shDefaultHeaders) {
				t.Fatalf("%s: PATCH answered %+v, want revision %d", c, p, rev+1)
			}
			shSameRows(t, c.String()+" updated_rows", p.UpdatedRows, body["rows"].([]shRow))
			v := c.get(t, "view=sparse")
			if v.Revision != rev+1 || !reflect.DeepEqual(v.Rows, []shRow{{0, shCells("a", "bitcoin", "tx", "2024-01-01", "hello")}, {7, shCells("b", "bitcoin", "", "", "")}}) {
				t.Fatalf("%s: after PATCH %s", c, v.raw)
			}

			// Blank cells clear content; five blank cells empty the slot
			// without renumbering.
			p = c.patch(t, map[string]any{"expected_revision": rev + 1, "rows": []shRow{{0, shCells("a", "bitcoin", "", "", "")}, {3, shBlank()}}})
			shSameRows(t, c.String()+" updated_rows with a clear", p.UpdatedRows, []shRow{{0, shCells("a", "bitcoin", "", "", "")}, {3, shBlank()}})
			p = c.patch(t, map[string]any{"expected_revision": rev + 2, "rows": []shRow{{0, shBlank()}}})
			shSameRows(t, c.String()+" cleared row", p.UpdatedRows, []shRow{{0, shBlank()}})
			v = c.get(t, "view=sparse")
			if v.Revision != rev+3 || !reflect.DeepEqual(v.Rows, []shRow{{7, shCells("b", "bitcoin", "", "", "")}}) {
				t.Fatalf("%s: after clearing slot 0: %s", c, v.raw)
			}
			shDense(t, c.String()+" dense after clearing", c.get(t, "limit=8"), 0, 8, shNext(8), map[int][]string{7: shCells("b", "bitcoin", "", "", "")})

			// An unchanged PATCH still counts as a write.
			p = c.patch(t, map[string]any{"expected_revision": rev + 3, "rows": []shRow{{7, shCells("b", "bitcoin", "", "", "")}}})
			if p.Revision != rev+4 {
				t.Fatalf("%s: unchanged PATCH revision %d, want %d", c, p.Revision, rev+4)
			}

			// Headers: only the fifth changes; a headers-only write has no rows.
			h := []string{"Address", "Blockchain", "Transaction ID", "Date", "Memo"}
			p = c.patch(t, map[string]any{"expected_revision": rev + 4, "headers": h})
			if p.Revision != rev+5 || !slices.Equal(p.Headers, h) || p.UpdatedRows == nil || len(p.UpdatedRows) != 0 {
				t.Fatalf("%s: headers PATCH answered %+v", c, p)
			}
			if v := c.get(t, ""); !slices.Equal(v.Headers, h) {
				t.Fatalf("%s: headers after PATCH %v", c, v.Headers)
			}
			for _, fifth := range []string{strings.Repeat("h", 60), strings.Repeat("é", 60), strings.Repeat("😀", 60), "Notes & <tags> 'ok'", "x"} {
				h := []string{"Address", "Blockchain", "Transaction ID", "Date", fifth}
				before := c.rev(t)
				p := c.patch(t, map[string]any{"expected_revision": before, "headers": h, "rows": []shRow{{1, shCells("h", "c", "", "", fifth)}}})
				if p.Revision != before+1 || !slices.Equal(p.Headers, h) || len(p.UpdatedRows) != 1 {
					t.Fatalf("%s: headers and rows PATCH (%q) answered %+v, want one revision step", c, fifth, p)
				}
			}

			// Cells up to 512 characters (code points) and 100 rows per request.
			for _, cell := range []string{strings.Repeat("x", 512), strings.Repeat("é", 512), strings.Repeat("😀", 512)} {
				p := c.patch(t, map[string]any{"expected_revision": c.rev(t), "rows": []shRow{{2, shCells(cell, cell, cell, cell, cell)}}})
				if got := p.UpdatedRows[0].Cells[4]; got != cell {
					t.Fatalf("%s: 512-character cell came back with %d characters", c, len([]rune(got)))
				}
			}
			// 100 rows of 512 characters that JSON escapes to six bytes each.
			var rows []shRow
			cell := strings.Repeat("<", 512)
			for i := range 100 {
				rows = append(rows, shRow{900 - i, shCells(cell, strconv.Itoa(i), cell, cell, cell)})
			}
			before := c.rev(t)
			p = c.patch(t, map[string]any{"expected_revision": before, "rows": rows})
			if p.Revision != before+1 || len(p.UpdatedRows) != 100 {
				t.Fatalf("%s: 100-row PATCH revision %d with %d rows", c, p.Revision, len(p.UpdatedRows))
			}
			if v := c.get(t, "offset=801&limit=100"); !reflect.DeepEqual(v.Rows[0], shRow{801, shCells(cell, "99", cell, cell, cell)}) || !reflect.DeepEqual(v.Rows[99], shRow{900, shCells(cell, "0", cell, cell, cell)}) {
				t.Fatalf("%s: the 100-row PATCH did not land in slots 801..900", c)
			}
		}
	})

	t.Run("patch_refused", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			c.setRows(t, shRow{0, shCells("keep", "bitcoin", "", "", "")})
			rev := c.rev(t)
			before := c.state(t)
			row := func(i int) shRow { return shRow{i, shCells("n", "c", "", "", "")} }
			many := func(n int) []shRow {
				out := make([]shRow, n)
				for i := range out {
					out[i] = row(i + 1)
				}
				return out
			}
			hdr := func(h ...string) map[string]any { return map[string]any{"expected_revision": rev, "headers": h} }
			rowsBody := func(rows ...any) map[string]any { return map[string]any{"expected_revision": rev, "rows": rows} }
			cases := []struct {
				what string
				body any
			}{
				{"first heading changed", hdr("Addr", "Blockchain", "Transaction ID", "Date", "Notes")},
				{"locked heading in other case", hdr("address", "Blockchain", "Transaction ID", "Date", "Notes")},
				{"fourth heading changed", hdr("Address", "Blockchain", "Transaction ID", "When", "Notes")},
				{"locked headings swapped", hdr("Blockchain", "Address", "Transaction ID", "Date", "Notes")},
				{"four headings", hdr("Address", "Blockchain", "Transaction ID", "Date")},
				{"six headings", hdr("Address", "Blockchain", "Transaction ID", "Date", "Notes", "More")},
				{"empty fifth heading", hdr("Address", "Blockchain", "Transaction ID", "Date", "")},
				{"61-character fifth heading", hdr("Address", "Blockchain", "Transaction ID", "Date", strings.Repeat("h", 61))},
				{"61 two-byte characters", hdr("Address", "Blockchain", "Transaction ID", "Date", strings.Repeat("é", 61))},
				{"fifth heading with a newline", hdr("Address", "Blockchain", "Transaction ID", "Date", "a\nb")},
				{"fifth heading with a tab", hdr("Address", "Blockchain", "Transaction ID", "Date", "a\tb")},
				{"fifth heading with NUL", hdr("Address", "Blockchain", "Transaction ID", "Date", "a\x00b")},
				{"fifth heading with a bidi override", hdr("Address", "Blockchain", "Transaction ID", "Date", "a\u202eb")},
				{"locked headings with valid rows", map[string]any{"expected_revision": rev, "headers": []string{"X", "Blockchain", "Transaction ID", "Date", "Notes"}, "rows": []shRow{row(1)}}},
				{"101 rows", map[string]any{"expected_revision": rev, "rows": many(101)}},
				{"no rows", map[string]any{"expected_revision": rev, "rows": []shRow{}}},
				{"duplicate index", rowsBody(row(3), row(4), row(3))},
				{"duplicate index with other cells", rowsBody(row(3), shRow{3, shBlank()})},
				{"index -1", rowsBody(row(-1))},
				{"index 1000", rowsBody(row(1000))},
				{"4 cells", rowsBody(map[string]any{"index": 1, "cells": []string{"a", "b", "c", "d"}})},
				{"6 cells", rowsBody(map[string]any{"index": 1, "cells": []string{"a", "b", "c", "d", "e", "f"}})},
				{"no cells", rowsBody(map[string]any{"index": 1, "cells": []string{}})},
				{"513-character cell", rowsBody(shRow{1, shCells("a", "b", "c", "d", strings.Repeat("x", 513))})},
				{"513 two-byte characters", rowsBody(shRow{1, shCells(strings.Repeat("é", 513), "b", "c", "d", "e")})},
				{"one bad row among good ones", rowsBody(row(1), row(2), map[string]any{"index": 5, "cells": []string{"a", "b", "c", "d"}})},
				{"nothing to write", map[string]any{"expected_revision": rev}},
			}
			for _, tc := range cases {
				spCheck(t, c.String()+" "+tc.what, c.do(t, "PATCH", "", tc.body), http.StatusUnprocessableEntity, "VALIDATION")
			}
			for _, stale := range []int64{rev - 1, rev + 1, rev + 1000, -1} {
				r := c.do(t, "PATCH", "", map[string]any{"expected_revision": stale, "rows": []shRow{row(1)}})
				spCheck(t, fmt.Sprintf("%s stale revision %d", c, stale), r, http.StatusConflict, "STALE_VERSION")
			}
			if after := c.state(t); after != before {
				t.Fatalf("%s: refused PATCHes changed the Sheet:\nbefore %s\nafter  %s", c, before, after)
			}
			// A revision from before an accepted write is stale afterwards.
			c.patch(t, map[string]any{"expected_revision": rev, "rows": []shRow{row(1)}})
			spCheck(t, c.String()+" revision reused", c.do(t, "PATCH", "", map[string]any{"expected_revision": rev, "rows": []shRow{row(2)}}), http.StatusConflict, "STALE_VERSION")
			if v := c.get(t, "view=sparse"); len(v.Rows) != 2 || v.Revision != rev+1 {
				t.Fatalf("%s: a stale PATCH changed the Sheet: %s", c, v.raw)
			}
		}
	})

	t.Run("put_upsert", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			rev := c.rev(t)
			p := c.put(t, rev, "bc1qone", "bitcoin", "tx1", "2024-01-01", "first")
			if p.SpaceID != c.id || p.Revision != rev+1 || p.Index != 0 || !p.Created || !slices.Equal(p.Cells, shCells("bc1qone", "bitcoin", "tx1", "2024-01-01", "first")) {
				t.Fatalf("%s: first PUT answered %+v", c, p)
			}
			// The unique exact match is updated, even with identical cells.
			p = c.put(t, rev+1, "bc1qone", "bitcoin", "tx1", "2024-01-01", "changed")
			if p.Revision != rev+2 || p.Index != 0 || p.Created || p.Cells[4] != "changed" {
				t.Fatalf("%s: updating PUT answered %+v", c, p)
			}
			p = c.put(t, rev+2, "bc1qone", "bitcoin", "tx1", "2024-01-01", "changed")
			if p.Revision != rev+3 || p.Index != 0 || p.Created {
				t.Fatalf("%s: identical PUT answered %+v, want a new revision", c, p)
			}
			// Blank non-key cells are saved as sent.
			p = c.put(t, rev+3, "bc1qone", "bitcoin", "", "", "")
			if p.Index != 0 || p.Created || !slices.Equal(p.Cells, shCells("bc1qone", "bitcoin", "", "", "")) {
				t.Fatalf("%s: PUT with blank cells answered %+v", c, p)
			}
			// Another chain, or another case, is another key.
			if p := c.put(t, c.rev(t), "bc1qone", "litecoin", "", "", ""); p.Index != 1 || !p.Created {
				t.Fatalf("%s: PUT with another chain answered %+v", c, p)
			}
			if p := c.put(t, c.rev(t), "BC1QONE", "bitcoin", "", "", ""); p.Index != 2 || !p.Created {
				t.Fatalf("%s: PUT with another case answered %+v", c, p)
			}
			// The first empty slot is used.
			c.setRows(t, shRow{3, shCells("x3", "c", "", "", "")}, shRow{5, shCells("x5", "c", "", "", "")}, shRow{1, shBlank()})
			if p := c.put(t, c.rev(t), "new1", "c", "", "", ""); p.Index != 1 || !p.Created {
				t.Fatalf("%s: PUT after clearing slot 1 answered %+v", c, p)
			}
			if p := c.put(t, c.rev(t), "new4", "c", "", "", ""); p.Index != 4 || !p.Created {
				t.Fatalf("%s: PUT with slots 0-3 and 5 stored answered %+v", c, p)
			}
			if p := c.put(t, c.rev(t), "new6", "c", "", "", ""); p.Index != 6 || !p.Created {
				t.Fatalf("%s: PUT with slots 0-5 stored answered %+v", c, p)
			}
			// A row stored by PATCH is matched too, wherever it sits.
			c.setRows(t, shRow{600, shCells("far", "c", "", "", "old")})
			if p := c.put(t, c.rev(t), "far", "c", "", "", "new"); p.Index != 600 || p.Created {
				t.Fatalf("%s: PUT of a PATCHed key answered %+v", c, p)
			}
			v := c.get(t, "view=sparse")
			want := []shRow{
				{0, shCells("bc1qone", "bitcoin", "", "", "")},
				{1, shCells("new1", "c", "", "", "")},
				{2, shCells("BC1QONE", "bitcoin", "", "", "")},
				{3, shCells("x3", "c", "", "", "")},
				{4, shCells("new4", "c", "", "", "")},
				{5, shCells("x5", "c", "", "", "")},
				{6, shCells("new6", "c", "", "", "")},
				{600, shCells("far", "c", "", "", "new")},
			}
			if !reflect.DeepEqual(v.Rows, want) {
				t.Fatalf("%s: Sheet after the PUTs %v, want %v", c, v.Rows, want)
			}

			// More than one match: CONFLICT with the spec's message.
			c.setRows(t, shRow{10, shCells("twin", "c", "", "", "a")}, shRow{11, shCells("twin", "c", "", "", "b")})
			before := c.state(t)
			r := c.do(t, "PUT", "", map[string]any{"expected_revision": c.rev(t), "cells": shCells("twin", "c", "", "", "z")})
			shConflict(t, c.String()+" PUT with two matches", r, "More than one row has this address and chain.")
			// Refused shapes.
			cur := c.rev(t)
			bad := []struct {
				what  string
				cells []string
			}{
				{"empty address", shCells("", "bitcoin", "", "", "")},
				{"empty chain", shCells("addr", "", "", "", "")},
				{"both keys empty", shCells("", "", "", "", "note")},
				{"4 cells", []string{"a", "b", "c", "d"}},
				{"6 cells", []string{"a", "b", "c", "d", "e", "f"}},
				{"no cells", []string{}},
				{"513-character cell", shCells("a", "b", strings.Repeat("x", 513), "", "")},
				{"513-character address", shCells(strings.Repeat("é", 513), "b", "", "", "")},
			}
			for _, b := range bad {
				spCheck(t, c.String()+" PUT "+b.what, c.do(t, "PUT", "", map[string]any{"expected_revision": cur, "cells": b.cells}), http.StatusUnprocessableEntity, "VALIDATION")
			}
			spCheck(t, c.String()+" PUT stale", c.do(t, "PUT", "", map[string]any{"expected_revision": cur - 1, "cells": shCells("fresh", "c", "", "", "")}), http.StatusConflict, "STALE_VERSION")
			if after := c.state(t); after != before {
				t.Fatalf("%s: refused PUTs changed the Sheet:\nbefore %s\nafter  %s", c, before, after)
			}
			// With one twin cleared the match is unique again.
			c.setRows(t, shRow{10, shBlank()})
			if p := c.put(t, c.rev(t), "twin", "c", "", "", "z"); p.Index != 11 || p.Created {
				t.Fatalf("%s: PUT after clearing a twin answered %+v", c, p)
			}
			// 512 characters are accepted in every cell.
			long := strings.Repeat("é", 512)
			if p := c.put(t, c.rev(t), long, long, long, long, long); !p.Created || p.Cells[0] != long {
				t.Fatalf("%s: PUT of 512-character cells answered created %v", c, p.Created)
			}
		}
	})

	t.Run("put_full_sheet", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		c := e.agentSheet(t)
		ow := shClient{c: e.owner(), id: c.id}
		for batch := range 10 {
			rows := make([]shRow, 0, 100)
			for i := batch * 100; i < batch*100+100; i++ {
				rows = append(rows, shRow{i, shCells(fmt.Sprintf("addr-%03d", i), "bitcoin", "", "", "")})
			}
			c.setRows(t, rows...)
		}
		if v := c.get(t, "offset=900"); len(v.Rows) != 100 || v.Rows[99].Cells[0] != "addr-999" || v.NextOffset != nil {
			t.Fatalf("last page of a full Sheet: %s", v.raw)
		}
		before := c.state(t)
		rev := c.rev(t)
		for _, cl := range []shClient{c, ow} {
			r := cl.do(t, "PUT", "", map[string]any{"expected_revision": rev, "cells": shCells("addr-new", "bitcoin", "", "", "")})
			shConflict(t, cl.String()+" PUT into a full Sheet", r, "Sheet has no empty row slots.")
			r = cl.do(t, "PUT", "", map[string]any{"expected_revision": rev, "cells": shCells("addr-000", "litecoin", "", "", "")})
			shConflict(t, cl.String()+" PUT of another chain into a full Sheet", r, "Sheet has no empty row slots.")
			// Compaction cannot make room: the Sheet is already compact.
			if cp := cl.compact(t, rev); cp.MovedRows != 0 || cp.Revision != rev {
				t.Fatalf("%s: compaction of a full Sheet answered %+v", cl, cp)
			}
		}
		if after := c.state(t); after != before || c.rev(t) != rev {
			t.Fatal("refused PUTs changed the full Sheet")
		}
		// Sparse paging over a full Sheet: five pages of 200.
		offset, pages := 0, 0
		for {
			p := c.get(t, "view=sparse&offset="+strconv.Itoa(offset))
			if len(p.Rows) != 200 || p.Rows[0].Index != offset {
				t.Fatalf("sparse page at %d of a full Sheet: %d rows", offset, len(p.Rows))
			}
			pages++
			if p.NextOffset == nil {
				break
			}
			offset = *p.NextOffset
		}
		if pages != 5 {
			t.Fatalf("a full Sheet took %d sparse pages, want 5", pages)
		}
		// A matching row is still updated in a full Sheet.
		if p := c.put(t, rev, "addr-500", "bitcoin", "tx", "", "updated"); p.Index != 500 || p.Created || p.Revision != rev+1 {
			t.Fatalf("PUT of a matching row into a full Sheet answered %+v", p)
		}
		// A delete frees the last slot, which the next new key takes.
		d := c.delete(t, rev+1, 0)
		if d.ShiftedRows != 999 || d.DeletedIndex != 0 || d.Revision != rev+2 {
			t.Fatalf("delete of slot 0 in a full Sheet answered %+v", d)
		}
		if p := ow.put(t, rev+2, "addr-new", "bitcoin", "", "", ""); p.Index != 999 || !p.Created {
			t.Fatalf("PUT after the delete answered %+v", p)
		}
		if p := c.put(t, rev+3, "addr-500", "bitcoin", "", "", ""); p.Index != 499 || p.Created {
			t.Fatalf("PUT of a shifted row answered %+v", p)
		}
		shConflict(t, "PUT into the refilled Sheet", c.do(t, "PUT", "", map[string]any{"expected_revision": rev + 4, "cells": shCells("one-more", "bitcoin", "", "", "")}), "Sheet has no empty row slots.")
	})

	t.Run("delete_shift", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			spCheck(t, c.String()+" delete in an empty Sheet", c.do(t, "DELETE", "", map[string]any{"expected_revision": c.rev(t), "index": 0}), http.StatusNotFound, "NOT_FOUND")
			a, b, cc, d := shCells("a", "x", "", "", ""), shCells("b", "x", "", "", ""), shCells("c", "x", "", "", ""), shCells("d", "x", "", "", "")
			c.setRows(t, shRow{0, a}, shRow{2, b}, shRow{3, cc}, shRow{7, d})
			rev := c.rev(t)
			del := c.delete(t, rev, 2)
			if del.SpaceID != c.id || del.Revision != rev+1 || del.DeletedIndex != 2 || del.ShiftedRows != 2 {
				t.Fatalf("%s: delete of slot 2 answered %+v", c, del)
			}
			shSparse(t, c.String()+" after deleting slot 2", c, []shRow{{0, a}, {2, cc}, {6, d}})
			// A blank slot: nothing is cleared, later rows still shift.
			del = c.delete(t, rev+1, 1)
			if del.ShiftedRows != 2 || del.Revision != rev+2 || del.DeletedIndex != 1 {
				t.Fatalf("%s: delete of blank slot 1 answered %+v", c, del)
			}
			shSparse(t, c.String()+" after deleting blank slot 1", c, []shRow{{0, a}, {1, cc}, {5, d}})
			// The last stored row: nothing shifts.
			del = c.delete(t, rev+2, 5)
			if del.ShiftedRows != 0 || del.Revision != rev+3 {
				t.Fatalf("%s: delete of the last row answered %+v", c, del)
			}
			shSparse(t, c.String()+" after deleting the last row", c, []shRow{{0, a}, {1, cc}})
			// Nothing at or after the index: 404, nothing changes.
			before := c.state(t)
			for _, idx := range []int{2, 3, 500, 999} {
				spCheck(t, fmt.Sprintf("%s delete of slot %d past the last row", c, idx), c.do(t, "DELETE", "", map[string]any{"expected_revision": rev + 3, "index": idx}), http.StatusNotFound, "NOT_FOUND")
			}
			for _, idx := range []int{-1, 1000} {
				spCheck(t, fmt.Sprintf("%s delete of index %d", c, idx), c.do(t, "DELETE", "", map[string]any{"expected_revision": rev + 3, "index": idx}), http.StatusUnprocessableEntity, "VALIDATION")
			}
			spCheck(t, c.String()+" stale delete", c.do(t, "DELETE", "", map[string]any{"expected_revision": rev + 2, "index": 0}), http.StatusConflict, "STALE_VERSION")
			if after := c.state(t); after != before {
				t.Fatalf("%s: refused deletes changed the Sheet:\nbefore %s\nafter  %s", c, before, after)
			}
			// Shifted rows keep their key: a PUT finds the row at its new slot.
			if p := c.put(t, rev+3, "c", "x", "", "", "found"); p.Index != 1 || p.Created {
				t.Fatalf("%s: PUT of a shifted row answered %+v", c, p)
			}
			// Slot 999 shifts nothing but clears itself.
			c.setRows(t, shRow{999, d})
			if del := c.delete(t, c.rev(t), 999); del.ShiftedRows != 0 || del.DeletedIndex != 999 {
				t.Fatalf("%s: delete of slot 999 answered %+v", c, del)
			}
			if v := c.get(t, "address=d"); len(v.Rows) != 0 {
				t.Fatalf("%s: slot 999 still holds its row: %s", c, v.raw)
			}
		}
	})

	t.Run("compact", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			rev := c.rev(t)
			if cp := c.compact(t, rev); cp.SpaceID != c.id || cp.Revision != rev || cp.MovedRows != 0 {
				t.Fatalf("%s: compaction of an empty Sheet answered %+v", c, cp)
			}
			c.setRows(t, shRow{0, shCells("a", "x", "", "", "")}, shRow{1, shCells("b", "x", "", "", "")}, shRow{2, shCells("c", "x", "", "", "")})
			rev = c.rev(t)
			if cp := c.compact(t, rev); cp.Revision != rev || cp.MovedRows != 0 {
				t.Fatalf("%s: compaction of a compact Sheet answered %+v", c, cp)
			}
			if c.rev(t) != rev {
				t.Fatalf("%s: an already-compact POST changed the revision", c)
			}
			spCheck(t, c.String()+" stale compaction", c.do(t, "POST", "", map[string]any{"expected_revision": rev - 1}), http.StatusConflict, "STALE_VERSION")

			rows := []shRow{
				{0, shCells("a", "x", "", "", "")},
				{5, shCells("e", "x", "", "", "")},
				{9, shCells("f", "x", "", "", "")},
				{500, shCells("g", "x", "", "", "")},
				{999, shCells("h", "x", "", "", "")},
			}
			c.setRows(t, shRow{1, shBlank()}, shRow{2, shBlank()}, rows[1], rows[2], rows[3], rows[4])
			rev = c.rev(t)
			spCheck(t, c.String()+" stale compaction", c.do(t, "POST", "", map[string]any{"expected_revision": rev - 1}), http.StatusConflict, "STALE_VERSION")
			cp := c.compact(t, rev)
			if cp.Revision != rev+1 || cp.MovedRows != 4 {
				t.Fatalf("%s: compaction answered %+v, want 4 moved rows and revision %d", c, cp, rev+1)
			}
			want := make([]shRow, len(rows))
			for i, r := range rows {
				want[i] = shRow{i, r.Cells}
			}
			shSparse(t, c.String()+" after compaction", c, want)
			if cp := c.compact(t, rev+1); cp.Revision != rev+1 || cp.MovedRows != 0 {
				t.Fatalf("%s: second compaction answered %+v", c, cp)
			}
			// Compacted rows keep their keys.
			if p := c.put(t, rev+1, "h", "x", "", "", "moved"); p.Index != 4 || p.Created {
				t.Fatalf("%s: PUT after compaction answered %+v", c, p)
			}
			if p := c.put(t, rev+2, "new", "x", "", "", ""); p.Index != 5 || !p.Created {
				t.Fatalf("%s: new PUT after compaction answered %+v", c, p)
			}
		}
	})

	t.Run("permissions", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		ow := e.owner()
		agentSheet := e.agentSheet(t) // created by the agent: write
		readSheet := e.ownerSheet(t)  // granted read below
		hidden := e.ownerSheet(t)     // grant none
		e.grant(t, readSheet.id, "read")
		alt := spID(e.agent(e.write).createSpace(t, "Coins", "altcoin"))
		for _, sh := range []shClient{agentSheet, readSheet, hidden} {
			shClient{c: ow, id: sh.id}.setRows(t, shRow{0, shCells("a", "b", "", "", "")}, shRow{4, shCells("c", "d", "", "", "")})
		}
		snap := func() string {
			var b strings.Builder
			for _, sh := range []shClient{agentSheet, readSheet, hidden} {
				b.WriteString(shClient{c: ow, id: sh.id}.state(t))
			}
			return b.String()
		}
		before := snap()
		writes := func(sh shClient) []shWrite { return shWrites(shClient{c: ow, id: sh.id}.rev(t)) }
		check := func(who string, c shClient, getStatus, writeStatus int, getCode, writeCode string) {
			t.Helper()
			r := c.do(t, "GET", "", nil)
			spCheck(t, who+" GET", r, getStatus, getCode)
			if getStatus == http.StatusOK {
				var v shSheet
				shDecodeSheet(t, r, &v)
				if v.SpaceID != c.id || len(v.Rows) != 100 || v.Rows[4].Cells[0] != "c" {
					t.Errorf("%s GET: %s", who, r.Body)
				}
			}
			for _, w := range writes(c) {
				spCheck(t, who+" "+w.method, c.do(t, w.method, "", w.body), writeStatus, writeCode)
			}
		}
		onSheet := func(key string, sh shClient) shClient { return shClient{c: e.agent(key), id: sh.id} }
		check("read key, write-granted Sheet", onSheet(e.read, agentSheet), http.StatusOK, http.StatusForbidden, "", "FORBIDDEN")
		check("read key, read-granted Sheet", onSheet(e.read, readSheet), http.StatusOK, http.StatusForbidden, "", "FORBIDDEN")
		check("write key, read-granted Sheet", onSheet(e.write, readSheet), http.StatusOK, http.StatusForbidden, "", "FORBIDDEN")
		check("write key, hidden Sheet", onSheet(e.write, hidden), http.StatusNotFound, http.StatusNotFound, "NOT_FOUND", "NOT_FOUND")
		spCheck(t, "read key GET hidden Sheet", onSheet(e.read, hidden).do(t, "GET", "", nil), http.StatusNotFound, "NOT_FOUND")
		if after := snap(); after != before {
			t.Fatalf("refused writes changed a Sheet:\nbefore %s\nafter  %s", before, after)
		}
		// Spaces that are not Sheet Spaces have no Sheet, for the agent and the owner.
		for _, id := range []string{e.first, alt, "no-such-space"} {
			for _, c := range []shClient{{c: e.agent(e.write), id: id}, {c: ow, id: id}} {
				spCheck(t, c.String()+" GET", c.do(t, "GET", "", nil), http.StatusNotFound, "NOT_FOUND")
				spCheck(t, c.String()+" GET sparse", c.do(t, "GET", "view=sparse", nil), http.StatusNotFound, "NOT_FOUND")
				for _, w := range shWrites(0) {
					spCheck(t, c.String()+" "+w.method, c.do(t, w.method, "", w.body), http.StatusNotFound, "NOT_FOUND")
				}
			}
		}
		// The owner reads and writes every Sheet, whatever its grant.
		for _, sh := range []shClient{readSheet, hidden} {
			oc := shClient{c: ow, id: sh.id}
			oc.setRows(t, shRow{9, shCells("owner", "x", "", "", "")})
			if v := oc.get(t, "address=owner"); len(v.Rows) != 1 {
				t.Fatalf("owner write on a Sheet granted below write: %s", v.raw)
			}
		}
		// Credentials: each API takes only its own.
		path := "/bookmark-spaces/" + agentSheet.id + "/sheet"
		for _, m := range []string{"GET", "PATCH", "PUT", "DELETE", "POST"} {
			var body any
			if m != "GET" {
				body = map[string]any{"expected_revision": 0}
			}
			spCheck(t, "no key "+m+" /v1", do(t, m, s.URL+"/v1"+path, "", body), http.StatusUnauthorized, "UNAUTHORIZED")
			spCheck(t, "no key "+m+" /owner/v1", do(t, m, s.URL+"/owner/v1"+path, "", body), http.StatusUnauthorized, "UNAUTHORIZED")
			spCheck(t, "owner secret "+m+" /v1", do(t, m, s.URL+"/v1"+path, e.acct.OwnerSecret, body), http.StatusUnauthorized, "UNAUTHORIZED")
			spCheck(t, "API key "+m+" /owner/v1", do(t, m, s.URL+"/owner/v1"+path, e.write, body), http.StatusUnauthorized, "UNAUTHORIZED")
			spCheck(t, "garbage key "+m+" /v1", do(t, m, s.URL+"/v1"+path, "not-a-key", body), http.StatusUnauthorized, "UNAUTHORIZED")
		}
		// Another account's key sees nothing of this Sheet.
		other := shSetup(t, s)
		oc := shClient{c: other.agent(other.write), id: agentSheet.id}
		spCheck(t, "another account GET", oc.do(t, "GET", "", nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "another account PATCH", oc.do(t, "PATCH", "", map[string]any{"expected_revision": agentSheet.rev(t), "rows": []shRow{{1, shCells("x", "y", "", "", "")}}}), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "another account's owner GET", shClient{c: other.owner(), id: agentSheet.id}.do(t, "GET", "", nil), http.StatusNotFound, "NOT_FOUND")

		// Grant changes apply on the next request.
		c := onSheet(e.write, agentSheet)
		e.grant(t, agentSheet.id, "read")
		spCheck(t, "PATCH after the grant fell to read", c.do(t, "PATCH", "", map[string]any{"expected_revision": c.rev(t), "rows": []shRow{{1, shCells("x", "y", "", "", "")}}}), http.StatusForbidden, "FORBIDDEN")
		e.grant(t, agentSheet.id, "none")
		spCheck(t, "GET after the grant fell to none", c.do(t, "GET", "", nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "PUT after the grant fell to none", c.do(t, "PUT", "", map[string]any{"expected_revision": 0, "cells": shCells("x", "y", "", "", "")}), http.StatusNotFound, "NOT_FOUND")
		e.grant(t, agentSheet.id, "write")
		c.setRows(t, shRow{1, shCells("x", "y", "", "", "")})
		onSheet(e.write2, agentSheet).setRows(t, shRow{2, shCells("second", "key", "", "", "")})
		if v := onSheet(e.read, agentSheet).get(t, "view=sparse"); len(v.Rows) != 4 {
			t.Fatalf("read key after writes by two keys: %s", v.raw)
		}
	})

	t.Run("space_delete", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		for _, cl := range []spClient{e.agent(e.write), e.owner()} {
			c := shClient{c: cl, id: spID(cl.createSpace(t, "Doomed grid", "sheet"))}
			if cl.owner {
				e.grant(t, c.id, "write") // so the agent can see what happens
			}
			del := func() response {
				t.Helper()
				return cl.do(t, "DELETE", "/bookmark-spaces/"+c.id, map[string]any{"expected_bookmark_revision": cl.list(t).rev, "expected_version": cl.version(t, c.id), "confirm_delete_cards": true})
			}
			c.setRows(t, shRow{3, shCells("a", "b", "", "", "")}, shRow{640, shCells("", "", "", "", "only a note")})
			before := c.state(t)
			for _, deleter := range []spClient{cl, e.agent(e.write2)} {
				r := deleter.do(t, "DELETE", "/bookmark-spaces/"+c.id, map[string]any{"expected_bookmark_revision": deleter.list(t).rev, "expected_version": deleter.version(t, c.id), "confirm_delete_cards": true})
				spCheck(t, c.String()+" delete of a Sheet Space with rows", r, http.StatusConflict, "")
				shErrorBody(t, c.String()+" delete of a Sheet Space with rows", r)
			}
			if !slices.Contains(spIDs(cl.list(t).spaces), c.id) {
				t.Fatalf("%s: a refused delete removed the Space", c)
			}
			if after := c.state(t); after != before {
				t.Fatalf("%s: a refused delete changed the Sheet:\nbefore %s\nafter  %s", c, before, after)
			}
			// Clearing one row is not enough.
			c.setRows(t, shRow{3, shBlank()})
			spCheck(t, c.String()+" delete with one row left", del(), http.StatusConflict, "")
			// Clearing the last row with five blank cells allows the delete.
			c.setRows(t, shRow{640, shBlank()})
			r := del()
			expect(t, r, http.StatusOK, "")
			if n := r.JSON(t)["deleted_card_count"]; n != float64(0) {
				t.Errorf("%s: deleted_card_count %v, want 0", c, n)
			}
			spCheck(t, c.String()+" GET after the delete", c.do(t, "GET", "", nil), http.StatusNotFound, "NOT_FOUND")
			if slices.Contains(spIDs(cl.list(t).spaces), c.id) {
				t.Fatalf("%s: the deleted Space is still listed", c)
			}

			// A custom fifth heading does not block deletion; nor does a
			// Sheet emptied by DELETE.
			c = shClient{c: cl, id: spID(cl.createSpace(t, "Headed grid", "sheet"))}
			c.patch(t, map[string]any{"expected_revision": c.rev(t), "headers": []string{"Address", "Blockchain", "Transaction ID", "Date", "My custom heading"}})
			c.setRows(t, shRow{0, shCells("a", "b", "", "", "")})
			c.delete(t, c.rev(t), 0)
			if v := c.get(t, ""); v.Headers[4] != "My custom heading" {
				t.Fatalf("%s: custom heading lost: %v", c, v.Headers)
			}
			expect(t, del(), http.StatusOK, "")
		}
	})

	t.Run("bad_input", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		c := e.agentSheet(t)
		c.setRows(t, shRow{0, shCells("a", "b", "", "", "")}, shRow{5, shCells("c", "d", "", "", "")})
		rev := c.rev(t)
		before := c.state(t)
		R := strconv.FormatInt(rev, 10)
		row := `{"index":1,"cells":["a","b","c","d","e"]}`
		cells := `["new","chain","","",""]`
		path := "/bookmark-spaces/" + c.id + "/sheet"
		routes := []spBadRoute{
			{
				name: "PATCH Sheet", method: "PATCH", path: path,
				valid: `{"expected_revision":` + R + `,"rows":[` + row + `]`,
				wrongTypes: []string{
					`{"expected_revision":` + R + `.5,"rows":[` + row + `]}`,
					`{"expected_revision":1.5,"rows":[` + row + `]}`,
					`{"expected_revision":"` + R + `","rows":[` + row + `]}`,
					`{"expected_revision":"1","rows":[` + row + `]}`,
					`{"expected_revision":true,"rows":[` + row + `]}`,
					`{"expected_revision":[` + R + `],"rows":[` + row + `]}`,
					`{"expected_revision":{"value":` + R + `},"rows":[` + row + `]}`,
					`{"expected_revision":99999999999999999999999,"rows":[` + row + `]}`,
					`{"expected_revision":` + R + `,"rows":` + row + `}`,
					`{"expected_revision":` + R + `,"rows":"` + R + `"}`,
					`{"expected_revision":` + R + `,"rows":[[1,["a","b","c","d","e"]]]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":"1","cells":["a","b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1.5,"cells":["a","b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":true,"cells":["a","b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":"a,b,c,d,e"}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":["a",2,"c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":[["a"],"b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":["a","b","c","d",false]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":{"0":"a"}}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":["a","b","c","d","e"],"note":"x"}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"Cells":["a","b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"headers":"Notes"}`,
					`{"expected_revision":` + R + `,"headers":["Address","Blockchain","Transaction ID","Date",5]}`,
					`{"expected_revision":` + R + `,"headers":{"4":"Notes"}}`,
				},
				missing: []string{
					`{"rows":[` + row + `]}`,
					`{"expected_revision":null,"rows":[` + row + `]}`,
					`{"expected_revision":` + R + `}`,
					`{"expected_revision":` + R + `,"rows":null}`,
					`{"expected_revision":` + R + `,"headers":null}`,
					`{"expected_revision":` + R + `,"rows":[]}`,
					`{"expected_revision":` + R + `,"headers":[]}`,
					`{"expected_revision":` + R + `,"rows":[{"cells":["a","b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":null,"cells":["a","b","c","d","e"]}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":null}]}`,
					`{"expected_revision":` + R + `,"rows":[{"index":1,"cells":[]}]}`,
					`{"expected_revision":` + R + `,"rows":[{}]}`,
					`{"expected_revision":` + R + `,"rows":[null]}`,
				},
			},
			{
				name: "PUT Sheet", method: "PUT", path: path,
				valid: `{"expected_revision":` + R + `,"cells":` + cells,
				wrongTypes: []string{
					`{"expected_revision":` + R + `.5,"cells":` + cells + `}`,
					`{"expected_revision":"` + R + `","cells":` + cells + `}`,
					`{"expected_revision":"1","cells":` + cells + `}`,
					`{"expected_revision":false,"cells":` + cells + `}`,
					`{"expected_revision":` + R + `,"cells":"new"}`,
					`{"expected_revision":` + R + `,"cells":{"0":"new"}}`,
					`{"expected_revision":` + R + `,"cells":["new",7,"","",""]}`,
					`{"expected_revision":` + R + `,"cells":["new","chain","","",{}]}`,
					`{"expected_revision":` + R + `,"cells":` + cells + `,"index":3}`,
					`{"expected_revision":` + R + `,"cells":` + cells + `,"created":true}`,
				},
				missing: []string{
					`{"cells":` + cells + `}`,
					`{"expected_revision":null,"cells":` + cells + `}`,
					`{"expected_revision":` + R + `}`,
					`{"expected_revision":` + R + `,"cells":null}`,
					`{"expected_revision":` + R + `,"cells":[]}`,
					`{"expected_revision":` + R + `,"cells":["","chain","","",""]}`,
					`{"expected_revision":` + R + `,"cells":["new","","","",""]}`,
				},
			},
			{
				name: "DELETE Sheet row", method: "DELETE", path: path,
				valid: `{"expected_revision":` + R + `,"index":0`,
				wrongTypes: []string{
					`{"expected_revision":` + R + `.5,"index":0}`,
					`{"expected_revision":"` + R + `","index":0}`,
					`{"expected_revision":"1","index":0}`,
					`{"expected_revision":` + R + `,"index":"0"}`,
					`{"expected_revision":` + R + `,"index":0.5}`,
					`{"expected_revision":` + R + `,"index":true}`,
					`{"expected_revision":` + R + `,"index":[0]}`,
					`{"expected_revision":` + R + `,"index":0,"cells":["a","b","c","d","e"]}`,
				},
				missing: []string{
					`{"index":0}`,
					`{"expected_revision":` + R + `}`,
					`{"expected_revision":null,"index":0}`,
					`{"expected_revision":` + R + `,"index":null}`,
					`{}`,
				},
			},
			{
				name: "POST Sheet compaction", method: "POST", path: path,
				valid: `{"expected_revision":` + R,
				wrongTypes: []string{
					`{"expected_revision":` + R + `.5}`,
					`{"expected_revision":"` + R + `"}`,
					`{"expected_revision":"1"}`,
					`{"expected_revision":false}`,
					`{"expected_revision":{}}`,
					`{"expected_revision":` + R + `,"moved_rows":0}`,
				},
				missing: []string{
					`{}`,
					`{"expected_revision":null}`,
				},
			},
		}
		spRunBadInput(t, s, e.spEnv, routes, true)
		// Over 2 MiB (the server-wide cap) is refused before it is read.
		big := `{"expected_revision":` + R + `,"rows":[{"index":1,"cells":["` + strings.Repeat("x", 2<<20) + `","","","",""]}]}`
		for _, u := range []struct{ path, bearer string }{{"/v1" + path, e.write}, {"/owner/v1" + path, e.acct.OwnerSecret}} {
			r, err := apDeclaredBody(s, "PATCH", u.path, u.bearer, "application/json", []byte(big))
			if err != nil {
				t.Errorf("PATCH over 2 MiB on %s: %v", u.path, err)
			} else {
				spCheck(t, "PATCH over 2 MiB on "+u.path, r, http.StatusUnprocessableEntity, "VALIDATION")
			}
		}
		if after := c.state(t); after != before || c.rev(t) != rev {
			t.Fatalf("bad input changed the Sheet:\nbefore %s\nafter  %s", before, after)
		}
		// The same Sheet still takes a valid write at the same revision.
		if p := c.put(t, rev, "new", "chain", "", "", ""); p.Revision != rev+1 || p.Index != 1 {
			t.Fatalf("PUT after the bad input answered %+v", p)
		}
	})

	t.Run("null_cells", func(t *testing.T) {
		t.Parallel()
		// A null is not a string: cells must be exactly 5 strings.
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			c.setRows(t, shRow{0, shCells("a", "b", "", "", "")})
			for _, b := range []struct{ method, body string }{
				{"PATCH", `{"expected_revision":%d,"rows":[{"index":1,"cells":["a",null,"c","d","e"]}]}`},
				{"PATCH", `{"expected_revision":%d,"rows":[{"index":0,"cells":[null,null,null,null,null]}]}`},
				{"PATCH", `{"expected_revision":%d,"headers":["Address","Blockchain","Transaction ID","Date",null]}`},
				{"PUT", `{"expected_revision":%d,"cells":["new","chain",null,"",""]}`},
			} {
				before := c.state(t)
				body := fmt.Sprintf(b.body, c.rev(t))
				spCheck(t, c.String()+" "+b.method+" "+body, c.do(t, b.method, "", body), http.StatusUnprocessableEntity, "VALIDATION")
				if after := c.state(t); after != before {
					t.Errorf("%s: %s %s changed the Sheet:\nbefore %s\nafter  %s", c, b.method, body, before, after)
				}
			}
		}
	})

	t.Run("put_after_first_row_by_patch", func(t *testing.T) {
		t.Parallel()
		// The first row a new Sheet gets by PATCH is an ordinary row: a PUT
		// of its key updates it, and a filter on its key returns it once.
		e := shSetup(t, s)
		for _, c := range e.both(t) {
			c.setRows(t, shRow{4, shCells("solo", "bitcoin", "", "", "first")})
			v := c.get(t, "address=solo&chain=bitcoin")
			if want := []shRow{{4, shCells("solo", "bitcoin", "", "", "first")}}; !reflect.DeepEqual(v.Rows, want) {
				t.Errorf("%s: GET ?address=solo&chain=bitcoin returned %v, want %v", c, v.Rows, want)
			}
			rev := c.rev(t)
			r := c.do(t, "PUT", "", map[string]any{"expected_revision": rev, "cells": shCells("solo", "bitcoin", "", "", "second")})
			if r.Status != http.StatusOK {
				t.Errorf("%s: PUT of the only row's key: %d %s, want 200 with created false and index 4", c, r.Status, r.Body)
				continue
			}
			var p shPut
			shDecode(t, "PUT", r, &p, shPutKeys)
			if p.Index != 4 || p.Created {
				t.Errorf("%s: PUT of the only row's key answered %+v", c, p)
			}
		}
	})

	t.Run("routes", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		c := e.agentSheet(t)
		spCheckRoutes(t, s, e.spEnv, []spRoute{
			{"/bookmark-spaces/" + c.id + "/sheet", []string{"GET", "PATCH", "PUT", "DELETE", "POST"}},
		}, nil)
		if v := c.get(t, "view=sparse"); len(v.Rows) != 0 {
			t.Fatalf("OPTIONS or a redirect changed the Sheet: %s", v.raw)
		}
	})

	t.Run("no_budget_when_limits_off", func(t *testing.T) {
		t.Parallel()
		// --limits off (the harness default): more than 30 writes a minute.
		e := shSetup(t, s)
		c := e.agentSheet(t)
		rev := c.rev(t)
		for i := range 35 {
			r := c.do(t, "PATCH", "", map[string]any{"expected_revision": rev + int64(i), "rows": []shRow{{i, shCells("a", strconv.Itoa(i), "", "", "")}}})
			if r.Status != http.StatusOK {
				t.Fatalf("write %d with --limits off: %d %s", i+1, r.Status, r.Body)
			}
		}
	})
}

// TestSheetsWriteBudget runs a server with --limits spec: 30 changed Sheet
// writes per minute per account, shared by every key and the owner; the
// 31st is 429 RATE_LIMITED with Retry-After, while reads and an
// already-compact POST still work and refused writes spend nothing.
// TestSheetCellsArePlainText: a cell is plain text (spec: Sheet), as a
// card note is: printable characters, newlines and tabs. Terminal escapes,
// bidi overrides and other control or invisible format characters, which
// names, notes and headings already refuse, are refused in cells too
// (issue 13), for the agent and the owner, by PATCH and by PUT, and
// nothing of the refused request is stored or echoed.
func TestSheetCellsArePlainText(t *testing.T) {
	t.Parallel()
	s := shStartServer(t)
	e := shSetup(t, s)
	refused := map[string]string{
		"terminal escape":        "\u001b[2J",
		"bidi override":          "\u202Eevil",
		"NUL":                    "a\x00b",
		"carriage return":        "a\rb",
		"DEL":                    "a\x7fb",
		"C1 control (NEL)":       "a\u0085b",
		"zero-width space":       "a\u200bb",
		"line separator":         "a\u2028b",
		"byte order mark":        "\ufeffa",
		"escape in the key cell": "\u001b]0;title\u0007",
	}
	accepted := []string{"line 1\nline 2", "a\tb", "é ü 漢字 🙂", "=SUM(A1:A9)", "<b>not markup</b> & 'quotes'", " spaced "}
	for _, c := range e.both(t) {
		before := c.state(t)
		rev := c.rev(t)
		for what, bad := range refused {
			r := c.do(t, "PATCH", "", map[string]any{"expected_revision": rev, "rows": []shRow{{3, shCells("addr", "chain", "", "", bad)}}})
			spCheck(t, c.String()+" PATCH with "+what, r, http.StatusUnprocessableEntity, "VALIDATION")
			if msg, _ := r.JSON(t)["error"].(string); strings.Contains(msg, bad) {
				t.Fatalf("%s: the refusal of a cell with %s echoes it: %q", c, what, msg)
			}
			r = c.do(t, "PUT", "", map[string]any{"expected_revision": rev, "cells": shCells(bad, "chain", "", "", "")})
			spCheck(t, c.String()+" PUT with "+what, r, http.StatusUnprocessableEntity, "VALIDATION")
		}
		if after := c.state(t); after != before {
			t.Fatalf("%s: refused cells changed the Sheet:\nbefore %s\nafter  %s", c, before, after)
		}
		for i, text := range accepted {
			c.setRows(t, shRow{i, shCells("addr-"+strconv.Itoa(i), "chain", "", "", text)})
			if p := c.put(t, c.rev(t), "put-"+strconv.Itoa(i), "chain", text, "", ""); p.Cells[2] != text {
				t.Fatalf("%s: PUT stored %q, sent %q", c, p.Cells[2], text)
			}
		}
		v := c.get(t, "view=sparse")
		for i, text := range accepted {
			if v.Rows[i].Cells[4] != text {
				t.Fatalf("%s: slot %d holds %q, sent %q", c, i, v.Rows[i].Cells[4], text)
			}
		}
	}
}

func TestSheetsWriteBudget(t *testing.T) {
	t.Parallel()
	s := shStartServer(t, "--limits", "account")

	t.Run("thirty_then_429", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		a := e.agentSheet(t) // will hold a gap
		b := e.agentSheet(t) // stays compact
		ao, bo := shClient{c: e.owner(), id: a.id}, shClient{c: e.owner(), id: b.id}
		writes := 0
		ok := func(what string, r response) {
			t.Helper()
			writes++
			if r.Status != http.StatusOK {
				t.Fatalf("write %d (%s): %d %s", writes, what, r.Status, r.Body)
			}
		}
		ok("agent PATCH with a gap", a.do(t, "PATCH", "", map[string]any{"expected_revision": a.rev(t), "rows": []shRow{{0, shCells("a", "x", "", "", "")}, {5, shCells("b", "x", "", "", "")}}}))
		for i := range 10 {
			ok("agent PUT", b.do(t, "PUT", "", map[string]any{"expected_revision": b.rev(t), "cells": shCells("addr-"+strconv.Itoa(i), "x", "", "", "")}))
		}
		// An already-compact POST spends nothing.
		bRev := b.rev(t)
		if cp := b.compact(t, bRev); cp.MovedRows != 0 || cp.Revision != bRev {
			t.Fatalf("already-compact POST answered %+v", cp)
		}
		ok("agent headers PATCH", a.do(t, "PATCH", "", map[string]any{"expected_revision": a.rev(t), "headers": []string{"Address", "Blockchain", "Transaction ID", "Date", "Memo"}}))
		ok("agent unchanged PATCH", a.do(t, "PATCH", "", map[string]any{"expected_revision": a.rev(t), "rows": []shRow{{0, shCells("a", "x", "", "", "")}}}))
		for range 7 {
			ok("agent identical PUT", b.do(t, "PUT", "", map[string]any{"expected_revision": b.rev(t), "cells": shCells("addr-0", "x", "", "", "")}))
		}
		// The owner's writes, of every kind, are not counted.
		ownerOK := func(what string, r response) {
			t.Helper()
			if r.Status != http.StatusOK {
				t.Fatalf("owner %s: %d %s", what, r.Status, r.Body)
			}
		}
		ownerOK("headers PATCH", ao.do(t, "PATCH", "", map[string]any{"expected_revision": ao.rev(t), "headers": []string{"Address", "Blockchain", "Transaction ID", "Date", "Owner's"}}))
		for range 5 {
			ownerOK("identical PUT", bo.do(t, "PUT", "", map[string]any{"expected_revision": bo.rev(t), "cells": shCells("addr-0", "x", "", "", "")}))
		}
		ok("agent DELETE of a blank slot", a.do(t, "DELETE", "", map[string]any{"expected_revision": a.rev(t), "index": 3}))
		ok("agent PATCH", a.do(t, "PATCH", "", map[string]any{"expected_revision": a.rev(t), "rows": []shRow{{9, shCells("c", "x", "", "", "")}}}))
		ok("second key's compaction that moves rows", shClient{c: e.agent(e.write2), id: a.id}.do(t, "POST", "", map[string]any{"expected_revision": a.rev(t)}))
		ok("agent PATCH making a gap", a.do(t, "PATCH", "", map[string]any{"expected_revision": a.rev(t), "rows": []shRow{{7, shCells("d", "x", "", "", "")}}}))
		// B stays compact: rows 0-9 from the PUTs, then 10, 11, ...
		for slot := 10; writes < 30; slot++ {
			ok("agent PATCH", b.do(t, "PATCH", "", map[string]any{"expected_revision": b.rev(t), "rows": []shRow{{slot, shCells("o", strconv.Itoa(slot), "", "", "")}}}))
		}

		before := a.state(t) + b.state(t)
		aRev, bRev := a.rev(t), b.rev(t)
		refused := []struct {
			what string
			c    shClient
			w    shWrite
		}{
			{"agent PATCH", a, shWrite{"PATCH", map[string]any{"expected_revision": aRev, "rows": []shRow{{1, shCells("late", "x", "", "", "")}}}}},
			{"agent headers PATCH", a, shWrite{"PATCH", map[string]any{"expected_revision": aRev, "headers": []string{"Address", "Blockchain", "Transaction ID", "Date", "Late"}}}},
			{"second key PATCH", shClient{c: e.agent(e.write2), id: b.id}, shWrite{"PATCH", map[string]any{"expected_revision": bRev, "rows": []shRow{{1, shCells("late", "x", "", "", "")}}}}},
			{"agent new PUT", b, shWrite{"PUT", map[string]any{"expected_revision": bRev, "cells": shCells("late", "x", "", "", "")}}},
			{"agent DELETE", a, shWrite{"DELETE", map[string]any{"expected_revision": aRev, "index": 0}}},
			{"agent compaction that would move rows", a, shWrite{"POST", map[string]any{"expected_revision": aRev}}},
		}
		for _, rf := range refused {
			r := rf.c.do(t, rf.w.method, "", rf.w.body)
			spCheck(t, "31st write: "+rf.what, r, http.StatusTooManyRequests, "RATE_LIMITED")
			shRetryAfter(t, "31st write: "+rf.what, r)
		}
		if after := a.state(t) + b.state(t); after != before {
			t.Fatalf("refused writes changed a Sheet:\nbefore %s\nafter  %s", before, after)
		}
		// Reads still work, for the keys and the owner.
		for _, c := range []shClient{a, b, ao, bo, {c: e.agent(e.read), id: a.id}} {
			c.get(t, "")
			c.get(t, "view=sparse")
			c.get(t, "address=a")
		}
		// An already-compact POST still works, for the agent and the owner.
		for _, c := range []shClient{b, bo} {
			if cp := c.compact(t, bRev); cp.MovedRows != 0 || cp.Revision != bRev {
				t.Fatalf("%s: already-compact POST with the budget spent answered %+v", c, cp)
			}
		}
		// Other routes are not part of the Sheet budget.
		e.agent(e.write).list(t)
		if r := e.agent(e.write).do(t, "PATCH", "/bookmark-spaces/"+a.id, map[string]any{"expected_bookmark_revision": e.agent(e.write).list(t).rev, "name": "Renamed grid"}); r.Status != http.StatusOK {
			t.Fatalf("Space rename with the Sheet budget spent: %d %s", r.Status, r.Body)
		}
		// The budget is per account.
		other := shSetup(t, s)
		oc := other.agentSheet(t)
		oc.setRows(t, shRow{0, shCells("other", "account", "", "", "")})
		// With the agents' budget spent, the owner still writes.
		ownerOK("PATCH", ao.do(t, "PATCH", "", map[string]any{"expected_revision": ao.rev(t), "rows": []shRow{{1, shCells("late", "x", "", "", "")}}}))
		ownerOK("identical PUT", bo.do(t, "PUT", "", map[string]any{"expected_revision": bo.rev(t), "cells": shCells("addr-0", "x", "", "", "")}))
		ownerOK("compaction that moves rows", ao.do(t, "POST", "", map[string]any{"expected_revision": ao.rev(t)}))
		spCheck(t, "agent write after the owner's", a.do(t, "PATCH", "", map[string]any{"expected_revision": a.rev(t), "rows": []shRow{{2, shCells("late", "x", "", "", "")}}}), http.StatusTooManyRequests, "RATE_LIMITED")
	})

	// Issue 13: the budget is the agents'. The owner's writes neither
	// spend it nor meet it, so agents cannot lock the owner out of a Sheet
	// for a minute, and the owner's work does not lock the agents out.
	t.Run("owner_writes_are_outside_the_budget", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		agent := e.agentSheet(t)
		owner := shClient{c: e.owner(), id: agent.id}
		write := func(c shClient, what string, slot int) response {
			t.Helper()
			return c.do(t, "PATCH", "", map[string]any{"expected_revision": c.rev(t), "rows": []shRow{{slot, shCells(what, strconv.Itoa(slot), "", "", "")}}})
		}
		// The owner writes more than the budget holds: every write is taken.
		for i := range 35 {
			if r := write(owner, "owner", i); r.Status != http.StatusOK {
				t.Fatalf("owner write %d with the budget unspent: %d %s", i+1, r.Status, r.Body)
			}
		}
		// The agents still have all 30 writes of the minute.
		for i := range 30 {
			if r := write(agent, "agent", 100+i); r.Status != http.StatusOK {
				t.Fatalf("agent write %d after 35 owner writes: %d %s", i+1, r.Status, r.Body)
			}
		}
		r := write(agent, "agent", 200)
		spCheck(t, "31st agent write", r, http.StatusTooManyRequests, "RATE_LIMITED")
		shRetryAfter(t, "31st agent write", r)
		// With the agents' budget spent, the owner still writes, with
		// every kind of Sheet write.
		if r := write(owner, "owner", 300); r.Status != http.StatusOK {
			t.Fatalf("owner PATCH with the agents' budget spent: %d %s", r.Status, r.Body)
		}
		owner.put(t, owner.rev(t), "owner-put", "x", "", "", "")
		owner.delete(t, owner.rev(t), 300)
		owner.compact(t, owner.rev(t))
		spCheck(t, "agent write after the owner's", write(agent, "agent", 201), http.StatusTooManyRequests, "RATE_LIMITED")
	})

	t.Run("refused_writes_spend_nothing", func(t *testing.T) {
		t.Parallel()
		e := shSetup(t, s)
		c := e.agentSheet(t)
		c.setRows(t, shRow{0, shCells("twin", "x", "", "", "")}, shRow{1, shCells("twin", "x", "", "", "")}) // 1
		rev := c.rev(t)
		for range 3 {
			spCheck(t, "stale PATCH", c.do(t, "PATCH", "", map[string]any{"expected_revision": rev - 1, "rows": []shRow{{5, shCells("a", "b", "", "", "")}}}), http.StatusConflict, "STALE_VERSION")
			spCheck(t, "locked heading", c.do(t, "PATCH", "", map[string]any{"expected_revision": rev, "headers": []string{"X", "Blockchain", "Transaction ID", "Date", "Notes"}}), http.StatusUnprocessableEntity, "VALIDATION")
			spCheck(t, "malformed body", c.do(t, "PATCH", "", `{"expected_revision":`), http.StatusUnprocessableEntity, "VALIDATION")
			shConflict(t, "PUT with two matches", c.do(t, "PUT", "", map[string]any{"expected_revision": rev, "cells": shCells("twin", "x", "", "", "")}), "More than one row has this address and chain.")
			spCheck(t, "DELETE with nothing to delete", c.do(t, "DELETE", "", map[string]any{"expected_revision": rev, "index": 50}), http.StatusNotFound, "NOT_FOUND")
			spCheck(t, "read-only key", shClient{c: e.agent(e.read), id: c.id}.do(t, "PATCH", "", map[string]any{"expected_revision": rev, "rows": []shRow{{5, shCells("a", "b", "", "", "")}}}), http.StatusForbidden, "FORBIDDEN")
			if cp := c.compact(t, rev); cp.MovedRows != 0 {
				t.Fatalf("compaction of a compact Sheet moved %d rows", cp.MovedRows)
			}
		}
		for i := 2; i <= 30; i++ {
			r := c.do(t, "PATCH", "", map[string]any{"expected_revision": c.rev(t), "rows": []shRow{{1 + i, shCells("row", strconv.Itoa(i), "", "", "")}}})
			if r.Status != http.StatusOK {
				t.Fatalf("write %d after 21 refused writes: %d %s", i, r.Status, r.Body)
			}
		}
		r := c.do(t, "PUT", "", map[string]any{"expected_revision": c.rev(t), "cells": shCells("late", "x", "", "", "")})
		spCheck(t, "31st write", r, http.StatusTooManyRequests, "RATE_LIMITED")
		shRetryAfter(t, "31st write", r)
	})
}

// shDefaultHeaders are the headings of a new Sheet.
var shDefaultHeaders = []string{"Address", "Blockchain", "Transaction ID", "Date", "Notes"}

// Response fields of the Sheet routes.
var (
	shSheetKeys     = []string{"space_id", "headers", "revision", "row_count", "column_count", "rows", "next_offset"}
	shPatchedKeys   = []string{"space_id", "headers", "revision", "updated_rows"}
	shPutKeys       = []string{"space_id", "revision", "index", "created", "cells"}
	shDeletedKeys   = []string{"space_id", "revision", "deleted_index", "shifted_rows"}
	shCompactedKeys = []string{"space_id", "revision", "moved_rows"}
)

// shStartServer starts the one server of a top-level test and drops the
// client's idle connections before the server stops.
func shStartServer(t *testing.T, extraArgs ...string) *server {
	t.Helper()
	s := startServer(t, extraArgs...)
	t.Cleanup(func() {
		httpClient.CloseIdleConnections()
		if tr, isTransport := http.DefaultTransport.(*http.Transport); isTransport {
			tr.CloseIdleConnections()
		}
	})
	return s
}

// shEnv is a fresh extended-plan account whose first (bitcoin) Space is
// write-granted, so the agent may create Sheet Spaces.
type shEnv struct {
	spEnv
}

func shSetup(t testing.TB, s *server) shEnv {
	t.Helper()
	return shEnv{spSetup(t, s, "extended", "write")}
}

// agentSheet creates a Sheet Space with the write key: it starts at write.
func (e shEnv) agentSheet(t testing.TB) shClient {
	t.Helper()
	c := e.agent(e.write)
	return shClient{c: c, id: spID(c.createSpace(t, "Agent grid", "sheet"))}
}

// ownerSheet creates a Sheet Space as the owner: it starts at grant none.
func (e shEnv) ownerSheet(t testing.TB) shClient {
	t.Helper()
	c := e.owner()
	return shClient{c: c, id: spID(c.createSpace(t, "Owner grid", "sheet"))}
}

// both returns a Sheet for the agent on /v1 and one for the owner on
// /owner/v1.
func (e shEnv) both(t testing.TB) []shClient {
	t.Helper()
	return []shClient{e.agentSheet(t), e.ownerSheet(t)}
}

// shClient is one caller on one Sheet.
type shClient struct {
	c  spClient
	id string
}

func (c shClient) String() string {
	who := "agent"
	if c.c.owner {
		who = "owner"
	}
	return who + " Sheet " + c.id
}

// do sends one request to the Sheet route; query is without the "?".
func (c shClient) do(t testing.TB, method, query string, body any) response {
	t.Helper()
	p := "/bookmark-spaces/" + c.id + "/sheet"
	if query != "" {
		p += "?" + query
	}
	return c.c.do(t, method, p, body)
}

// shRow is a row as the API shows and takes it.
type shRow struct {
	Index int      `json:"index"`
	Cells []string `json:"cells"`
}

// shSheet is a decoded Sheet GET.
type shSheet struct {
	SpaceID     string   `json:"space_id"`
	Headers     []string `json:"headers"`
	Revision    int64    `json:"revision"`
	RowCount    int      `json:"row_count"`
	ColumnCount int      `json:"column_count"`
	Rows        []shRow  `json:"rows"`
	NextOffset  *int     `json:"next_offset"`
	raw         []byte
}

type shPatched struct {
	SpaceID     string   `json:"space_id"`
	Headers     []string `json:"headers"`
	Revision    int64    `json:"revision"`
	UpdatedRows []shRow  `json:"updated_rows"`
}

type shPut struct {
	SpaceID  string   `json:"space_id"`
	Revision int64    `json:"revision"`
	Index    int      `json:"index"`
	Created  bool     `json:"created"`
	Cells    []string `json:"cells"`
}

type shDeleted struct {
	SpaceID      string `json:"space_id"`
	Revision     int64  `json:"revision"`
	DeletedIndex int    `json:"deleted_index"`
	ShiftedRows  int    `json:"shifted_rows"`
}

type shCompacted struct {
	SpaceID   string `json:"space_id"`
	Revision  int64  `json:"revision"`
	MovedRows int    `json:"moved_rows"`
}

// get reads the Sheet and checks its shape.
func (c shClient) get(t testing.TB, query string) shSheet {
	t.Helper()
	r := c.do(t, "GET", query, nil)
	var v shSheet
	shDecodeSheet(t, r, &v)
	if v.SpaceID != c.id {
		t.Fatalf("%s ?%s: space_id %q", c, query, v.SpaceID)
	}
	return v
}

// shDecodeSheet decodes a 200 Sheet GET and checks the Sheet shape.
func shDecodeSheet(t testing.TB, r response, v *shSheet) {
	t.Helper()
	shDecode(t, "Sheet GET", r, v, shSheetKeys)
	v.raw = r.Body
	if v.Rows == nil || len(v.Headers) != 5 || v.RowCount != 1000 || v.ColumnCount != 5 {
		t.Fatalf("Sheet GET has no rows array, or a wrong size: %s", r.Body)
	}
	var rows struct {
		Rows []map[string]any `json:"rows"`
	}
	json.Unmarshal(r.Body, &rows)
	for _, row := range rows.Rows {
		spKeys(t, "Sheet row", row, []string{"index", "cells"})
	}
	for i, row := range v.Rows {
		if len(row.Cells) != 5 || row.Index < 0 || row.Index > 999 {
			t.Fatalf("Sheet GET rows out of shape: %s", r.Body)
		}
		if i > 0 && row.Index <= v.Rows[i-1].Index {
			t.Errorf("Sheet GET rows out of slot order or repeated (index %d after %d): %.600s", row.Index, v.Rows[i-1].Index, r.Body)
			break
		}
	}
}

// shDecode expects a 200 whose body has exactly keys and decodes it into
// dst; an integer field that is not an integer fails the decode.
func shDecode(t testing.TB, what string, r response, dst any, keys []string) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200; body %s", what, r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	spKeys(t, what, r.JSON(t), keys)
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, r.Body)
	}
}

// rev is the Sheet's current revision.
func (c shClient) rev(t testing.TB) int64 {
	t.Helper()
	return c.get(t, "limit=1").Revision
}

// state is the Sheet as a sparse read shows it: headers, revision and the
// first 200 stored rows.
func (c shClient) state(t testing.TB) string {
	t.Helper()
	return string(c.get(t, "view=sparse").raw)
}

// patch sends a PATCH and expects 200.
func (c shClient) patch(t testing.TB, body map[string]any) shPatched {
	t.Helper()
	var p shPatched
	shDecode(t, c.String()+" PATCH", c.do(t, "PATCH", "", body), &p, shPatchedKeys)
	if p.SpaceID != c.id || p.UpdatedRows == nil || len(p.Headers) != 5 {
		t.Fatalf("%s PATCH answered %+v", c, p)
	}
	return p
}

// setRows PATCHes rows at the current revision and checks the revision
// moved by one.
func (c shClient) setRows(t testing.TB, rows ...shRow) {
	t.Helper()
	rev := c.rev(t)
	if p := c.patch(t, map[string]any{"expected_revision": rev, "rows": rows}); p.Revision != rev+1 {
		t.Fatalf("%s PATCH at revision %d answered revision %d", c, rev, p.Revision)
	}
}

// put sends a PUT upsert and expects 200.
func (c shClient) put(t testing.TB, rev int64, cells ...string) shPut {
	t.Helper()
	var p shPut
	shDecode(t, c.String()+" PUT", c.do(t, "PUT", "", map[string]any{"expected_revision": rev, "cells": cells}), &p, shPutKeys)
	if p.SpaceID != c.id || p.Revision != rev+1 {
		t.Fatalf("%s PUT at revision %d answered %+v", c, rev, p)
	}
	return p
}

// delete sends a DELETE of a slot and expects 200.
func (c shClient) delete(t testing.TB, rev int64, index int) shDeleted {
	t.Helper()
	var d shDeleted
	shDecode(t, c.String()+" DELETE", c.do(t, "DELETE", "", map[string]any{"expected_revision": rev, "index": index}), &d, shDeletedKeys)
	if d.SpaceID != c.id {
		t.Fatalf("%s DELETE answered %+v", c, d)
	}
	return d
}

// compact sends a compaction and expects 200.
func (c shClient) compact(t testing.TB, rev int64) shCompacted {
	t.Helper()
	var cp shCompacted
	shDecode(t, c.String()+" POST", c.do(t, "POST", "", map[string]any{"expected_revision": rev}), &cp, shCompactedKeys)
	if cp.SpaceID != c.id {
		t.Fatalf("%s POST answered %+v", c, cp)
	}
	return cp
}

// shWrite is one write request.
type shWrite struct {
	method string
	body   map[string]any
}

// shWrites is one valid write of each kind at rev.
func shWrites(rev int64) []shWrite {
	return []shWrite{
		{"PATCH", map[string]any{"expected_revision": rev, "rows": []shRow{{1, shCells("w", "x", "", "", "")}}}},
		{"PATCH", map[string]any{"expected_revision": rev, "headers": []string{"Address", "Blockchain", "Transaction ID", "Date", "W"}}},
		{"PUT", map[string]any{"expected_revision": rev, "cells": shCells("w", "x", "", "", "")}},
		{"DELETE", map[string]any{"expected_revision": rev, "index": 0}},
		{"POST", map[string]any{"expected_revision": rev}},
	}
}

func shCells(a, b, c, d, e string) []string { return []string{a, b, c, d, e} }

func shBlank() []string { return shCells("", "", "", "", "") }

func shNext(n int) *int { return &n }

func shFmtNext(n *int) string {
	if n == nil {
		return "null"
	}
	return strconv.Itoa(*n)
}

// shRowsOf returns the rows of a slot map in slot order.
func shRowsOf(m map[int][]string) []shRow {
	out := make([]shRow, 0, len(m))
	for i, cells := range m {
		out = append(out, shRow{i, cells})
	}
	slices.SortFunc(out, func(a, b shRow) int { return a.Index - b.Index })
	return out
}

// shDense checks a dense page: n slots from offset, blank unless in want,
// and next_offset.
func shDense(t testing.TB, what string, v shSheet, offset, n int, next *int, want map[int][]string) {
	t.Helper()
	if len(v.Rows) != n {
		t.Fatalf("%s: %d rows, want %d", what, len(v.Rows), n)
	}
	for i, r := range v.Rows {
		cells, stored := want[offset+i]
		if !stored {
			cells = shBlank()
		}
		if r.Index != offset+i || !slices.Equal(r.Cells, cells) {
			t.Fatalf("%s: row %d is %v, want index %d cells %q", what, i, r, offset+i, cells)
		}
	}
	if (next == nil) != (v.NextOffset == nil) || (next != nil && *next != *v.NextOffset) {
		t.Fatalf("%s: next_offset %s, want %s", what, shFmtNext(v.NextOffset), shFmtNext(next))
	}
}

// shSparse checks the stored rows of a Sheet holding fewer than 200.
func shSparse(t testing.TB, what string, c shClient, want []shRow) {
	t.Helper()
	v := c.get(t, "view=sparse")
	if !reflect.DeepEqual(v.Rows, want) || v.NextOffset != nil {
		t.Fatalf("%s: stored rows %v, want %v", what, v.Rows, want)
	}
}

// shSameRows compares rows by index, in any order.
func shSameRows(t testing.TB, what string, got, want []shRow) {
	t.Helper()
	sorted := func(rows []shRow) []shRow {
		out := slices.Clone(rows)
		slices.SortFunc(out, func(a, b shRow) int { return a.Index - b.Index })
		return out
	}
	if !reflect.DeepEqual(sorted(got), sorted(want)) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// shConflict expects 409 CONFLICT with the spec's exact message.
func shConflict(t testing.TB, what string, r response, message string) {
	t.Helper()
	spCheck(t, what, r, http.StatusConflict, "CONFLICT")
	if r.Status == http.StatusConflict {
		if m, _ := r.JSON(t)["error"].(string); m != message {
			t.Errorf("%s: message %q, want %q", what, m, message)
		}
	}
}

// shErrorBody checks an error body is exactly {"code","error"}, both
// nonempty strings.
func shErrorBody(t testing.TB, what string, r response) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Errorf("%s: error body is not JSON: %s", what, r.Body)
		return
	}
	code, _ := m["code"].(string)
	msg, _ := m["error"].(string)
	if len(m) != 2 || code == "" || msg == "" {
		t.Errorf("%s: error body %s, want {\"code\",\"error\"}", what, r.Body)
	}
}

// shRetryAfter checks a 429 carries Retry-After in whole seconds, 1 to 60.
func shRetryAfter(t testing.TB, what string, r response) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		return
	}
	h := r.Header.Get("Retry-After")
	n, err := strconv.Atoi(h)
	if err != nil || n < 1 || n > 60 || len(r.Header.Values("Retry-After")) != 1 {
		t.Errorf("%s: Retry-After %q, want one integer from 1 to 60", what, h)
	}
}
