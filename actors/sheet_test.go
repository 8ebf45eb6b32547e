package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Unit tests of the Sheet: reads (dense, sparse, filters, paging), the four
// writes (PATCH, PUT, DELETE, compaction), the Sheet-write budget, the
// Sheet Space delete rule and the snapshot round trip. Every refused
// command goes through mustFail/mustFailCmd, which compare the account's
// JSON byte for byte before and after.

// sheetFixture is an extended-plan account whose first (bitcoin) Space is
// write-granted, with a write key w, a read key r and a Sheet Space created
// by w (so granted write).
type sheetFixture struct {
	*testAccount
	w, r Principal
	id   string
}

func newSheetFixture(t *testing.T) *sheetFixture {
	t.Helper()
	ta, w, r := extendedWithWriter(t)
	id := ta.createSpace(w, "Sheet", SpaceSheet).ID
	return &sheetFixture{testAccount: ta, w: w, r: r, id: id}
}

// addSheet creates another Sheet Space in the same account.
func (f *sheetFixture) addSheet(name string) string {
	f.t.Helper()
	return f.createSpace(f.w, name, SpaceSheet).ID
}

func (f *sheetFixture) sheetOf(id string) *Sheet {
	f.t.Helper()
	s := f.storedSpace(id)
	if s == nil || s.Sheet == nil {
		f.t.Fatalf("space %s has no Sheet", id)
	}
	return s.Sheet
}

func (f *sheetFixture) sheet() *Sheet { return f.sheetOf(f.id) }
func (f *sheetFixture) rev() int64    { return f.sheet().Revision }

// sw is the common part of a write on the fixture's Sheet at its current
// revision.
func (f *sheetFixture) sw() SheetWrite { return f.swOf(f.id) }

func (f *sheetFixture) swOf(id string) SheetWrite {
	return SheetWrite{SpaceID: id, ExpectedRevision: f.sheetOf(id).Revision, PlainTextCells: true}
}

func (f *sheetFixture) patch(rows ...SheetRowInput) *PatchSheet {
	return &PatchSheet{SheetWrite: f.sw(), Rows: rows}
}

func (f *sheetFixture) put(cells ...string) *PutSheetRow {
	return &PutSheetRow{SheetWrite: f.sw(), Cells: cells}
}

func (f *sheetFixture) del(index int) *DeleteSheetRow {
	return &DeleteSheetRow{SheetWrite: f.sw(), Index: index}
}

func (f *sheetFixture) compact() *CompactSheet { return &CompactSheet{SheetWrite: f.sw()} }

func rowIn(index int, cells [sheetColumnCount]string) SheetRowInput {
	return SheetRowInput{Index: index, Cells: cells[:]}
}

// rc is the content of a test row: a unique address, chain "btc".
func rc(i int) [sheetColumnCount]string {
	return [sheetColumnCount]string{fmt.Sprintf("addr-%03d", i), "btc", fmt.Sprintf("tx-%d", i), "2026-03-01", fmt.Sprintf("note %d", i)}
}

func blankCells() [sheetColumnCount]string { return [sheetColumnCount]string{} }

// sl is the cells of an array as the slice a request carries.
func sl(c [sheetColumnCount]string) []string { return c[:] }

// setRows stores cells at the given slots through PATCHes of at most 100
// rows (no budget), and checks the Sheet afterwards.
func (f *sheetFixture) setRows(rows map[int][sheetColumnCount]string) {
	f.t.Helper()
	f.setRowsOf(f.id, rows)
}

func (f *sheetFixture) setRowsOf(id string, rows map[int][sheetColumnCount]string) {
	f.t.Helper()
	var batch []SheetRowInput
	flush := func() {
		if len(batch) > 0 {
			f.mustOK(f.w, &PatchSheet{SheetWrite: f.swOf(id), Rows: batch})
			batch = nil
		}
	}
	for i := range sheetRowCount {
		if cells, set := rows[i]; set {
			batch = append(batch, rowIn(i, cells))
			if len(batch) == sheetPatchRowsMax {
				flush()
			}
		}
	}
	flush()
	invariantsHold(f.t, f.sheetOf(id))
}

// fill stores rc(i) in slots 0 to n-1.
func (f *sheetFixture) fill(n int) {
	f.t.Helper()
	rows := map[int][sheetColumnCount]string{}
	for i := range n {
		rows[i] = rc(i)
	}
	f.setRows(rows)
}

// stored is the Sheet's content as slot -> cells.
func (f *sheetFixture) stored() map[int][sheetColumnCount]string {
	m := map[int][sheetColumnCount]string{}
	for _, r := range f.sheet().Rows {
		m[r.Index] = r.Cells
	}
	return m
}

// wantStored checks the Sheet holds exactly want, in slot order, with a
// consistent index.
func (f *sheetFixture) wantStored(want map[int][sheetColumnCount]string) {
	f.t.Helper()
	s := f.sheet()
	invariantsHold(f.t, s)
	if len(s.Rows) != len(want) {
		f.t.Fatalf("sheet holds %d rows, want %d: %s", len(s.Rows), len(want), bodyJSON(f.t, s.Rows))
	}
	for _, r := range s.Rows {
		cells, ok := want[r.Index]
		if !ok || cells != r.Cells {
			f.t.Fatalf("slot %d holds %q, want %q (present %v)", r.Index, r.Cells, cells, ok)
		}
	}
	// The Address + Blockchain index lists exactly the rows with each key.
	for _, r := range s.Rows {
		n := 0
		for _, x := range s.Rows {
			if x.key() == r.key() {
				n++
			}
		}
		if got := len(s.index()[r.key()]); got != n {
			f.t.Fatalf("index holds %d rows for %v, want %d", got, r.key(), n)
		}
	}
}

// invariantsHold runs checkInvariants and turns its panic into a test
// failure, so one corrupt Sheet fails one test instead of the whole run.
func invariantsHold(t testing.TB, s *Sheet) {
	t.Helper()
	if msg := invariantsPanic(s); msg != "" {
		t.Fatalf("sheet invariants: %s", msg)
	}
}

func invariantsPanic(s *Sheet) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	s.checkInvariants()
	return ""
}

// readAs runs a Sheet read with cred, defaulting the Space and the limit.
func (f *sheetFixture) readAs(cred Credential, q SheetQuery) SheetView {
	f.t.Helper()
	if q.SpaceID == "" {
		q.SpaceID = f.id
	}
	if q.Limit == 0 {
		q.Limit = 100 // the edge's default
	}
	v := bodyAs[SheetView](f.t, f.mustQuery(cred, q))
	checkSheetViewShape(f.t, v)
	return v
}

func (f *sheetFixture) read(q SheetQuery) SheetView {
	f.t.Helper()
	return f.readAs(f.keyCred(f.w), q)
}

func checkSheetViewShape(t *testing.T, v SheetView) {
	t.Helper()
	if v.RowCount != 1000 || v.ColumnCount != 5 || len(v.Headers) != 5 || v.Rows == nil {
		t.Fatalf("sheet view shape: row_count %d column_count %d headers %q rows nil %v", v.RowCount, v.ColumnCount, v.Headers, v.Rows == nil)
	}
	for i, r := range v.Rows {
		if len(r.Cells) != 5 || r.Index < 0 || r.Index > 999 {
			t.Fatalf("row %d of the view: index %d with %d cells", i, r.Index, len(r.Cells))
		}
		if i > 0 && v.Rows[i-1].Index >= r.Index {
			t.Fatalf("view rows out of slot order at %d: %d then %d", i, v.Rows[i-1].Index, r.Index)
		}
	}
}

func indexesOf(rows []SheetRowView) []int {
	out := []int{}
	for _, r := range rows {
		out = append(out, r.Index)
	}
	return out
}

func intsEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func seq(from, to int) []int { // [from, to)
	out := []int{}
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func nextOffsetIs(got *int, want int) bool { return got != nil && *got == want }

func fmtNext(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// sparseAll pages through a sparse (or filtered) read until next_offset is
// null and returns the pages' indexes and next offsets.
func (f *sheetFixture) sparseAll(q SheetQuery) (pages [][]int, nexts []string) {
	f.t.Helper()
	q.Sparse = true
	for range 100 {
		v := f.read(q)
		pages = append(pages, indexesOf(v.Rows))
		nexts = append(nexts, fmtNext(v.NextOffset))
		if v.NextOffset == nil {
			return pages, nexts
		}
		if *v.NextOffset <= q.Offset {
			f.t.Fatalf("next_offset %d does not advance past offset %d", *v.NextOffset, q.Offset)
		}
		q.Offset = *v.NextOffset
	}
	f.t.Fatalf("sparse paging does not end")
	return nil, nil
}

var defaultHeaders = []string{"Address", "Blockchain", "Transaction ID", "Date", "Notes"}

// ---- Reads ----

func TestSheetReadOfANewSheet(t *testing.T) {
	f := newSheetFixture(t)
	v := f.read(SheetQuery{})
	if v.SpaceID != f.id || v.Revision != 0 || strings.Join(v.Headers, "|") != strings.Join(defaultHeaders, "|") {
		t.Fatalf("new sheet view %+v", v)
	}
	if len(v.Rows) != 100 || !intsEqual(indexesOf(v.Rows), seq(0, 100)) || !nextOffsetIs(v.NextOffset, 100) {
		t.Fatalf("dense page of a new sheet: %d rows, next %s", len(v.Rows), fmtNext(v.NextOffset))
	}
	got := bodyJSON(t, SheetView{SpaceID: v.SpaceID, Headers: v.Headers, Revision: v.Revision, RowCount: v.RowCount, ColumnCount: v.ColumnCount, Rows: v.Rows[:2], NextOffset: v.NextOffset})
	want := `{"space_id":"` + f.id + `","headers":["Address","Blockchain","Transaction ID","Date","Notes"],"revision":0,"row_count":1000,"column_count":5,` +
		`"rows":[{"index":0,"cells":["","","","",""]},{"index":1,"cells":["","","","",""]}],"next_offset":100}`
	if got != want {
		t.Fatalf("view encodes as\n%s\nwant\n%s", got, want)
	}
	sp := f.read(SheetQuery{Sparse: true})
	if got := bodyJSON(t, sp); got != `{"space_id":"`+f.id+`","headers":["Address","Blockchain","Transaction ID","Date","Notes"],"revision":0,"row_count":1000,"column_count":5,"rows":[],"next_offset":null}` {
		t.Fatalf("sparse read of a new sheet encodes as %s", got)
	}
}

func TestSheetDenseRead(t *testing.T) {
	f := newSheetFixture(t)
	rows := map[int][sheetColumnCount]string{0: rc(0), 5: rc(5), 99: rc(99), 100: rc(100), 955: rc(955), 999: rc(999)}
	rows[7] = [sheetColumnCount]string{"", "", "", "", "only a note"}
	f.setRows(rows)
	check := func(offset, limit int, wantLen int, wantNext *int) SheetView {
		t.Helper()
		v := f.read(SheetQuery{Offset: offset, Limit: limit})
		if len(v.Rows) != wantLen || !intsEqual(indexesOf(v.Rows), seq(offset, offset+wantLen)) {
			t.Fatalf("dense offset %d limit %d: indexes %v, want %d from %d", offset, limit, indexesOf(v.Rows), wantLen, offset)
		}
		if fmtNext(v.NextOffset) != fmtNext(wantNext) {
			t.Fatalf("dense offset %d limit %d: next_offset %s, want %s", offset, limit, fmtNext(v.NextOffset), fmtNext(wantNext))
		}
		for _, r := range v.Rows {
			want := rows[r.Index] // blank slots: 5 empty strings
			if len(r.Cells) != 5 || [sheetColumnCount]string(r.Cells) != want {
				t.Fatalf("dense slot %d: %q, want %q", r.Index, r.Cells, want)
			}
		}
		return v
	}
	check(0, 100, 100, ptr(100))
	check(0, 1, 1, ptr(1))
	check(3, 10, 10, ptr(13))
	check(950, 100, 50, nil) // the spec's example: 50 rows, then null
	check(900, 100, 100, nil)
	check(990, 10, 10, nil)
	check(989, 10, 10, ptr(999))
	check(999, 1, 1, nil)
	check(999, 100, 1, nil)

	// Paging with next_offset visits every slot exactly once.
	var all []int
	offset := 0
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("dense paging does not end")
		}
		v := f.read(SheetQuery{Offset: offset, Limit: 100})
		all = append(all, indexesOf(v.Rows)...)
		if v.NextOffset == nil {
			break
		}
		offset = *v.NextOffset
	}
	if !intsEqual(all, seq(0, 1000)) {
		t.Fatalf("dense paging visited %d slots", len(all))
	}
	// A blank row in the encoding: five empty strings, never null.
	v := f.read(SheetQuery{Offset: 1, Limit: 1})
	if got := bodyJSON(t, v.Rows); got != `[{"index":1,"cells":["","","","",""]}]` {
		t.Fatalf("blank dense row encodes as %s", got)
	}
}

func TestSheetSparseRead(t *testing.T) {
	f := newSheetFixture(t)
	rows := map[int][sheetColumnCount]string{3: rc(3), 10: rc(10), 500: rc(500), 999: rc(999)}
	rows[11] = [sheetColumnCount]string{"", "", "", "", "note only"}
	f.setRows(rows)
	check := func(offset, limit int, want []int) {
		t.Helper()
		v := f.read(SheetQuery{Offset: offset, Limit: limit, Sparse: true})
		if !intsEqual(indexesOf(v.Rows), want) || v.NextOffset != nil {
			t.Fatalf("sparse offset %d: %v next %s, want %v null", offset, indexesOf(v.Rows), fmtNext(v.NextOffset), want)
		}
		for _, r := range v.Rows {
			if [sheetColumnCount]string(r.Cells) != rows[r.Index] {
				t.Fatalf("sparse row %d: %q", r.Index, r.Cells)
			}
		}
	}
	check(0, 100, []int{3, 10, 11, 500, 999})
	check(0, 1, []int{3, 10, 11, 500, 999}) // limit is validated but ignored
	check(3, 1, []int{3, 10, 11, 500, 999})
	check(4, 100, []int{10, 11, 500, 999})
	check(12, 100, []int{500, 999})
	check(999, 100, []int{999})
	check(501, 100, []int{999})
	// Nothing stored at or after the offset: an empty array, not null.
	f.mustOK(f.w, f.del(999))
	v := f.read(SheetQuery{Offset: 600, Sparse: true})
	if got := bodyJSON(t, v.Rows); got != `[]` || v.NextOffset != nil {
		t.Fatalf("empty sparse page: rows %s next %s", got, fmtNext(v.NextOffset))
	}
}

func TestSheetSparseRowCap(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(1000)
	pages, nexts := f.sparseAll(SheetQuery{})
	if strings.Join(nexts, ",") != "200,400,600,800,null" {
		t.Fatalf("full sheet sparse next offsets %v", nexts)
	}
	for i, p := range pages {
		if !intsEqual(p, seq(200*i, 200*i+200)) {
			t.Fatalf("page %d: %v", i, p)
		}
	}

	// With gaps, next_offset is the index of the first row left out.
	g := newSheetFixture(t)
	rows := map[int][sheetColumnCount]string{}
	for k := range 250 {
		rows[2*k+1] = rc(2*k + 1)
	}
	g.setRows(rows)
	pages, nexts = g.sparseAll(SheetQuery{})
	if strings.Join(nexts, ",") != "401,null" || len(pages[0]) != 200 || pages[0][199] != 399 || len(pages[1]) != 50 || pages[1][0] != 401 || pages[1][49] != 499 {
		t.Fatalf("gapped sparse paging: next %v, page sizes %d %d", nexts, len(pages[0]), len(pages[1]))
	}
	// Starting on a blank slot just before it is the same page.
	a, b := g.read(SheetQuery{Offset: 400, Sparse: true}), g.read(SheetQuery{Offset: 401, Sparse: true})
	if bodyJSON(t, a) != bodyJSON(t, b) {
		t.Fatalf("offset 400 and 401 differ")
	}
	// Exactly 200 rows: one page, null.
	h := newSheetFixture(t)
	h.fill(200)
	if _, nexts := h.sparseAll(SheetQuery{}); strings.Join(nexts, ",") != "null" {
		t.Fatalf("200 rows: next offsets %v", nexts)
	}
	h.setRows(map[int][sheetColumnCount]string{700: rc(700)})
	if pages, nexts := h.sparseAll(SheetQuery{}); strings.Join(nexts, ",") != "700,null" || !intsEqual(pages[1], []int{700}) {
		t.Fatalf("201 rows: next offsets %v", nexts)
	}
}

func cellBytes(rows []SheetRowView) int {
	n := 0
	for _, r := range rows {
		for _, c := range r.Cells {
			n += len(c)
		}
	}
	return n
}

func TestSheetSparseByteCap(t *testing.T) {
	// 512 four-byte characters per cell: 10,240 bytes per row, so 25 rows
	// (256,000 bytes) fit in 256 KiB and the 26th does not.
	f := newSheetFixture(t)
	big := strings.Repeat("\U0001D11E", 512)
	rows := map[int][sheetColumnCount]string{}
	for i := range 60 {
		rows[i] = [sheetColumnCount]string{big, big, big, big, big}
	}
	f.setRows(rows)
	pages, nexts := f.sparseAll(SheetQuery{})
	if strings.Join(nexts, ",") != "25,50,null" || !intsEqual(pages[0], seq(0, 25)) || !intsEqual(pages[1], seq(25, 50)) || !intsEqual(pages[2], seq(50, 60)) {
		t.Fatalf("4-byte rows: next offsets %v pages %v", nexts, pages)
	}
	v := f.read(SheetQuery{Sparse: true})
	if n := cellBytes(v.Rows); n != 256000 || n > sheetSparseBytesMax {
		t.Fatalf("page holds %d bytes of cells", n)
	}
	// The cap applies to filtered pages too, by index and by scan.
	for _, q := range []SheetQuery{{Address: ptr(big), Chain: ptr(big)}, {Address: ptr(big)}, {Chain: ptr(big)}} {
		if _, nexts := f.sparseAll(q); strings.Join(nexts, ",") != "25,50,null" {
			t.Fatalf("filtered 4-byte rows: next offsets %v", nexts)
		}
	}

	// ASCII: 2,560 bytes per full row; 102 rows are 261,120 bytes and a
	// row of exactly the remaining 1,024 bytes still fits (the cap is
	// inclusive); the next row does not.
	g := newSheetFixture(t)
	a512 := strings.Repeat("a", 512)
	rows = map[int][sheetColumnCount]string{}
	for i := range 102 {
		rows[i] = [sheetColumnCount]string{a512, a512, a512, a512, a512}
	}
	rows[102] = [sheetColumnCount]string{a512, a512, "", "", ""}
	rows[103] = [sheetColumnCount]string{"x", "", "", "", ""}
	rows[104] = [sheetColumnCount]string{"y", "", "", "", ""}
	g.setRows(rows)
	v = g.read(SheetQuery{Sparse: true})
	if len(v.Rows) != 103 || !nextOffsetIs(v.NextOffset, 103) || cellBytes(v.Rows) != sheetSparseBytesMax {
		t.Fatalf("ASCII page: %d rows, %d bytes, next %s", len(v.Rows), cellBytes(v.Rows), fmtNext(v.NextOffset))
	}
	v = g.read(SheetQuery{Offset: 103, Sparse: true})
	if !intsEqual(indexesOf(v.Rows), []int{103, 104}) || v.NextOffset != nil {
		t.Fatalf("ASCII second page %v next %s", indexesOf(v.Rows), fmtNext(v.NextOffset))
	}
	// One byte more and row 102 is left out.
	g.setRows(map[int][sheetColumnCount]string{102: {a512, a512, "z", "", ""}})
	v = g.read(SheetQuery{Sparse: true})
	if len(v.Rows) != 102 || !nextOffsetIs(v.NextOffset, 102) {
		t.Fatalf("ASCII page over the cap: %d rows, next %s", len(v.Rows), fmtNext(v.NextOffset))
	}
}

// filterFixture stores rows whose keys differ in case and in one cell only.
func filterFixture(t *testing.T) (*sheetFixture, map[int][sheetColumnCount]string) {
	f := newSheetFixture(t)
	rows := map[int][sheetColumnCount]string{
		0:   {"A", "btc", "t0", "", ""},
		1:   {"A", "eth", "t1", "", ""},
		2:   {"a", "btc", "t2", "", ""},
		3:   {"A", "btc", "t3", "", ""},
		4:   {"B", "btc", "t4", "", ""},
		5:   {"A", "BTC", "t5", "", ""},
		6:   {"A ", "btc", "t6", "", ""},
		7:   {"", "", "", "", "note only"},
		8:   {"", "btc", "", "", ""},
		600: {"A", "btc", "t600", "", ""},
	}
	f.setRows(rows)
	return f, rows
}

func TestSheetReadFilters(t *testing.T) {
	f, rows := filterFixture(t)
	cases := []struct {
		name            string
		address, chainF *string
		offset          int
		want            []int
	}{
		{"address and chain", ptr("A"), ptr("btc"), 0, []int{0, 3, 600}},
		{"address and chain from offset", ptr("A"), ptr("btc"), 1, []int{3, 600}},
		{"address and chain from the last match", ptr("A"), ptr("btc"), 600, []int{600}},
		{"address and chain after the last match", ptr("A"), ptr("btc"), 601, []int{}},
		{"address only", ptr("A"), nil, 0, []int{0, 1, 3, 5, 600}},
		{"address only from offset", ptr("A"), nil, 4, []int{5, 600}},
		{"chain only", nil, ptr("btc"), 0, []int{0, 2, 3, 4, 6, 8, 600}},
		{"lower-case address", ptr("a"), nil, 0, []int{2}},
		{"upper-case chain", nil, ptr("BTC"), 0, []int{5}},
		{"upper-case chain with address", ptr("A"), ptr("BTC"), 0, []int{5}},
		{"trailing space is not trimmed", ptr("A "), ptr("btc"), 0, []int{6}},
		{"no such address", ptr("C"), nil, 0, []int{}},
		{"no such pair", ptr("B"), ptr("eth"), 0, []int{}},
		{"empty address matches rows with an empty first cell", ptr(""), nil, 0, []int{7, 8}},
		{"empty pair", ptr(""), ptr(""), 0, []int{7}},
		{"empty address with chain", ptr(""), ptr("btc"), 0, []int{8}},
	}
	for _, c := range cases {
		for _, sparse := range []bool{false, true} {
			for _, limit := range []int{1, 100} {
				// Filters imply the sparse view: the flag and the limit do not matter.
				v := f.read(SheetQuery{Offset: c.offset, Limit: limit, Sparse: sparse, Address: c.address, Chain: c.chainF})
				if !intsEqual(indexesOf(v.Rows), c.want) || v.NextOffset != nil {
					t.Fatalf("%s (sparse %v, limit %d): %v next %s, want %v null", c.name, sparse, limit, indexesOf(v.Rows), fmtNext(v.NextOffset), c.want)
				}
				for _, r := range v.Rows {
					if [sheetColumnCount]string(r.Cells) != rows[r.Index] {
						t.Fatalf("%s: row %d cells %q", c.name, r.Index, r.Cells)
					}
				}
				if got := bodyJSON(t, v.Rows); len(c.want) == 0 && got != "[]" {
					t.Fatalf("%s: empty filtered rows encode as %s", c.name, got)
				}
			}
		}
	}
	// The index follows edits: a key changed by PATCH moves between filters.
	f.mustOK(f.w, f.patch(rowIn(3, [sheetColumnCount]string{"B", "btc", "t3", "", ""})))
	if v := f.read(SheetQuery{Address: ptr("A"), Chain: ptr("btc")}); !intsEqual(indexesOf(v.Rows), []int{0, 600}) {
		t.Fatalf("after re-keying row 3: %v", indexesOf(v.Rows))
	}
	if v := f.read(SheetQuery{Address: ptr("B"), Chain: ptr("btc")}); !intsEqual(indexesOf(v.Rows), []int{3, 4}) {
		t.Fatalf("after re-keying row 3, B: %v", indexesOf(v.Rows))
	}
	// ... and DELETE's shift: row 600 moves to 599 and is still found.
	f.mustOK(f.w, f.del(100))
	if v := f.read(SheetQuery{Address: ptr("A"), Chain: ptr("btc"), Offset: 1}); !intsEqual(indexesOf(v.Rows), []int{599}) {
		t.Fatalf("after a shift: %v", indexesOf(v.Rows))
	}
}

func TestSheetFilteredPaging(t *testing.T) {
	// 250 rows match (A, btc) at odd slots; the even slots hold (B, btc).
	f := newSheetFixture(t)
	rows := map[int][sheetColumnCount]string{}
	for i := range 500 {
		addr := "B"
		if i%2 == 1 {
			addr = "A"
		}
		rows[i] = [sheetColumnCount]string{addr, "btc", fmt.Sprint(i), "", ""}
	}
	// The matches were written in a scrambled order, so the index's lists
	// are not in slot order.
	f.mustOK(f.w, f.patch(rowIn(301, [sheetColumnCount]string{"A", "btc", "x", "", ""})))
	f.mustOK(f.w, f.patch(rowIn(7, [sheetColumnCount]string{"A", "btc", "y", "", ""})))
	f.setRows(rows)
	f.mustOK(f.w, f.patch(rowIn(5, [sheetColumnCount]string{"A", "btc", "5", "", "edited"})))
	rows[5] = [sheetColumnCount]string{"A", "btc", "5", "", "edited"}
	odd := []int{}
	for i := 1; i < 500; i += 2 {
		odd = append(odd, i)
	}
	for _, q := range []SheetQuery{{Address: ptr("A"), Chain: ptr("btc")}, {Address: ptr("A")}} {
		pages, nexts := f.sparseAll(q)
		if strings.Join(nexts, ",") != "401,null" || !intsEqual(pages[0], odd[:200]) || !intsEqual(pages[1], odd[200:]) {
			t.Fatalf("filter %s/%s: next offsets %v", fmtStr(q.Address), fmtStr(q.Chain), nexts)
		}
	}
	// The chain filter matches all 500: three pages.
	pages, nexts := f.sparseAll(SheetQuery{Chain: ptr("btc")})
	if strings.Join(nexts, ",") != "200,400,null" || !intsEqual(pages[2], seq(400, 500)) {
		t.Fatalf("chain filter: next offsets %v", nexts)
	}
	// Index and scan agree on every page start.
	for offset := 0; offset < 1000; offset += 37 {
		a := f.read(SheetQuery{Offset: offset, Address: ptr("A"), Chain: ptr("btc")})
		b := f.read(SheetQuery{Offset: offset, Address: ptr("A")})
		if bodyJSON(t, a) != bodyJSON(t, b) {
			t.Fatalf("offset %d: index and scan disagree", offset)
		}
	}
	f.wantStored(rows)
}

func fmtStr(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestSheetReadAccess(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(3)
	w, r, o := f.keyCred(f.w), f.keyCred(f.r), f.ownerCred()
	for _, cred := range []Credential{w, r, o} {
		v := f.readAs(cred, SheetQuery{Sparse: true})
		if len(v.Rows) != 3 || v.Revision != 1 {
			t.Fatalf("read by %v: %d rows revision %d", cred.Kind, len(v.Rows), v.Revision)
		}
		// A Space that is not a Sheet Space, and an unknown Space: 404.
		wantCode(t, f.query(cred, SheetQuery{SpaceID: testFirstSpaceID, Limit: 100}), CodeNotFound)
		wantCode(t, f.query(cred, SheetQuery{SpaceID: "space-unknown", Limit: 100}), CodeNotFound)
	}
	alt := f.createSpace(f.w, "Alt", SpaceAltcoin).ID
	wantCode(t, f.query(w, SheetQuery{SpaceID: alt, Limit: 100}), CodeNotFound)

	f.grantSpace(f.id, LevelRead)
	for _, cred := range []Credential{w, r} {
		f.readAs(cred, SheetQuery{})
	}
	f.grantSpace(f.id, LevelNone)
	for _, cred := range []Credential{w, r} {
		for _, q := range []SheetQuery{{SpaceID: f.id, Limit: 100}, {SpaceID: f.id, Sparse: true}, {SpaceID: f.id, Address: ptr("addr-000"), Chain: ptr("btc")}} {
			e := wantCode(t, f.query(cred, q), CodeNotFound)
			mustNotMention(t, "hidden sheet error", e.Message, "addr-000", "Sheet")
		}
	}
	f.readAs(o, SheetQuery{}) // the owner needs no grant
	// After a downgrade only the first Space is accessible.
	f.grantSpace(f.id, LevelWrite)
	f.mustOK(f.owner, &SetPlan{Plan: PlanBase})
	for _, cred := range []Credential{w, r, o} {
		wantCode(t, f.query(cred, SheetQuery{SpaceID: f.id, Limit: 100}), CodeNotFound)
	}
}

func TestSheetPagingAcrossARevisionChange(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(150)
	first := f.read(SheetQuery{Limit: 100})
	f.mustOK(f.w, f.put("addr-120", "btc", "changed", "", ""))
	second := f.read(SheetQuery{Offset: *first.NextOffset, Limit: 100})
	if second.Revision != first.Revision+1 {
		t.Fatalf("revision %d then %d: a client cannot detect the change", first.Revision, second.Revision)
	}
	if second.Rows[20].Cells[2] != "changed" {
		t.Fatalf("second page does not show the new content: %q", second.Rows[20].Cells)
	}
	sp1 := f.read(SheetQuery{Sparse: true, Limit: 1})
	f.mustOK(f.w, f.del(0))
	sp2 := f.read(SheetQuery{Sparse: true, Offset: 100})
	if sp2.Revision != sp1.Revision+1 || sp2.Rows[0].Cells[0] != "addr-101" {
		t.Fatalf("sparse after delete: revision %d->%d first row %q", sp1.Revision, sp2.Revision, sp2.Rows[0].Cells)
	}
}

func TestSheetViewsDoNotAliasTheState(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(2)
	before := f.snapshot()
	v := f.read(SheetQuery{Sparse: true})
	v.Rows[0].Cells[0] = "mutated"
	v.Headers[4] = "mutated"
	d := f.read(SheetQuery{Limit: 3})
	d.Rows[1].Cells[1] = "mutated"
	if !bytes.Equal(before, f.snapshot()) {
		t.Fatalf("editing a read's rows changed the state")
	}
	pv := bodyAs[SheetPatchedView](t, f.mustOK(f.w, f.patch(rowIn(5, rc(5)))))
	put := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("addr-000", "btc", "p", "", "")))
	before = f.snapshot()
	pv.UpdatedRows[0].Cells[0] = "mutated"
	pv.Headers[0] = "mutated"
	put.Cells[0] = "mutated"
	if !bytes.Equal(before, f.snapshot()) {
		t.Fatalf("editing a write's result changed the state")
	}
}

// ---- PATCH ----

func TestSheetPatchRows(t *testing.T) {
	f := newSheetFixture(t)
	res := f.mustOK(f.w, f.patch(rowIn(5, rc(5)), rowIn(1, rc(1)), rowIn(3, [sheetColumnCount]string{"", "", "", "", "n"})))
	want := `{"space_id":"` + f.id + `","headers":["Address","Blockchain","Transaction ID","Date","Notes"],"revision":1,"updated_rows":[` +
		`{"index":5,"cells":["addr-005","btc","tx-5","2026-03-01","note 5"]},` +
		`{"index":1,"cells":["addr-001","btc","tx-1","2026-03-01","note 1"]},` +
		`{"index":3,"cells":["","","","","n"]}]}`
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != want {
		t.Fatalf("patch result %d\n%s\nwant\n%s", res.Status, got, want)
	}
	stored := map[int][sheetColumnCount]string{1: rc(1), 3: {"", "", "", "", "n"}, 5: rc(5)}
	f.wantStored(stored)

	// Five blank cells empty the slot; later rows keep their indexes.
	res = f.mustOK(f.w, f.patch(rowIn(3, blankCells()), rowIn(0, rc(0))))
	want = `{"space_id":"` + f.id + `","headers":["Address","Blockchain","Transaction ID","Date","Notes"],"revision":2,"updated_rows":[` +
		`{"index":3,"cells":["","","","",""]},{"index":0,"cells":["addr-000","btc","tx-0","2026-03-01","note 0"]}]}`
	if got := bodyJSON(t, res.Body); got != want {
		t.Fatalf("clearing patch result\n%s\nwant\n%s", got, want)
	}
	delete(stored, 3)
	stored[0] = rc(0)
	f.wantStored(stored)

	// Blank cells clear only their own cells.
	part := [sheetColumnCount]string{"addr-005", "", "", "", "kept"}
	f.mustOK(f.w, f.patch(rowIn(5, part)))
	stored[5] = part
	f.wantStored(stored)

	// Clearing a blank slot, and rewriting identical content: accepted, and
	// each PATCH bumps the revision exactly once.
	for i, p := range []*PatchSheet{f.patch(rowIn(900, blankCells())), f.patch(rowIn(0, rc(0)), rowIn(1, rc(1))), f.patch(rowIn(0, rc(0)))} {
		r0 := f.rev()
		p.ExpectedRevision = r0
		v := bodyAs[SheetPatchedView](t, f.mustOK(f.w, p))
		if v.Revision != r0+1 || f.rev() != r0+1 {
			t.Fatalf("unchanged patch %d: revision %d -> %d (view %d)", i, r0, f.rev(), v.Revision)
		}
	}
	f.wantStored(stored)

	// Every slot from 0 to 999 is writable; 100 rows at once.
	var hundred []SheetRowInput
	for i := 900; i < 1000; i++ {
		hundred = append(hundred, rowIn(i, rc(i)))
		stored[i] = rc(i)
	}
	v := bodyAs[SheetPatchedView](t, f.mustOK(f.w, f.patch(hundred...)))
	if len(v.UpdatedRows) != 100 || v.UpdatedRows[0].Index != 900 || v.UpdatedRows[99].Index != 999 {
		t.Fatalf("100-row patch returned %d rows", len(v.UpdatedRows))
	}
	f.wantStored(stored)
}

func TestSheetPatchCellLimits(t *testing.T) {
	f := newSheetFixture(t)
	// Plain text, saved verbatim: formulas are not evaluated.
	ok := []string{strings.Repeat("a", 512), strings.Repeat("é", 512), strings.Repeat("\U0001D11E", 512), strings.Repeat("\u4e2d", 512), "=SUM(A1:A2)"}
	for i, c := range ok {
		cells := [sheetColumnCount]string{c, c, c, c, c}
		v := bodyAs[SheetPatchedView](t, f.mustOK(f.w, f.patch(rowIn(i, cells))))
		if v.UpdatedRows[0].Cells[4] != c {
			t.Fatalf("cell %d not saved verbatim", i)
		}
		if got := f.sheet().row(i).Cells; got != cells {
			t.Fatalf("stored cell %d differs", i)
		}
	}
	bad := []string{strings.Repeat("a", 513), strings.Repeat("é", 513), strings.Repeat("\U0001D11E", 513), "\xff", "ok\xc3"}
	for _, c := range bad {
		for col := range 5 {
			cells := [sheetColumnCount]string{"x", "y", "", "", ""}
			cells[col] = c
			f.mustFail(CodeValidation, f.w, f.patch(rowIn(10, cells)))
			// One bad row spoils the whole PATCH.
			f.mustFail(CodeValidation, f.w, f.patch(rowIn(11, rc(11)), rowIn(10, cells)))
		}
	}
}

func TestSheetPatchValidation(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(3)
	p := func(headers []string, rows ...SheetRowInput) *PatchSheet {
		return &PatchSheet{SheetWrite: f.sw(), Headers: headers, Rows: rows}
	}
	var rows101 []SheetRowInput
	for i := range 101 {
		rows101 = append(rows101, rowIn(i, rc(i)))
	}
	five := func(s ...string) []string { return s }
	cases := map[string]*PatchSheet{
		"nothing":                   p(nil),
		"empty rows, no headers":    {SheetWrite: f.sw(), Rows: []SheetRowInput{}},
		"101 rows":                  p(nil, rows101...),
		"duplicate index":           p(nil, rowIn(4, rc(4)), rowIn(5, rc(5)), rowIn(4, rc(6))),
		"duplicate blank index":     p(nil, rowIn(4, blankCells()), rowIn(4, blankCells())),
		"index -1":                  p(nil, rowIn(-1, rc(0))),
		"index 1000":                p(nil, rowIn(1000, rc(0))),
		"four cells":                p(nil, SheetRowInput{Index: 4, Cells: []string{"a", "b", "c", "d"}}),
		"six cells":                 p(nil, SheetRowInput{Index: 4, Cells: []string{"a", "b", "c", "d", "e", "f"}}),
		"no cells":                  p(nil, SheetRowInput{Index: 4}),
		"empty cells":               p(nil, SheetRowInput{Index: 4, Cells: []string{}}),
		"empty headers":             p([]string{}),
		"four headers":              p(five("Address", "Blockchain", "Transaction ID", "Date")),
		"six headers":               p(five("Address", "Blockchain", "Transaction ID", "Date", "Notes", "More")),
		"renamed first":             p(five("Addr", "Blockchain", "Transaction ID", "Date", "Notes")),
		"lower-case first":          p(five("address", "Blockchain", "Transaction ID", "Date", "Notes")),
		"renamed second":            p(five("Address", "Chain", "Transaction ID", "Date", "Notes")),
		"renamed third":             p(five("Address", "Blockchain", "Transaction Id", "Date", "Notes")),
		"renamed fourth":            p(five("Address", "Blockchain", "Transaction ID", "Date ", "Notes")),
		"empty fifth":               p(five("Address", "Blockchain", "Transaction ID", "Date", "")),
		"61 characters":             p(five("Address", "Blockchain", "Transaction ID", "Date", strings.Repeat("n", 61))),
		"61 multi-byte":             p(five("Address", "Blockchain", "Transaction ID", "Date", strings.Repeat("é", 61))),
		"newline in fifth":          p(five("Address", "Blockchain", "Transaction ID", "Date", "a\nb")),
		"tab in fifth":              p(five("Address", "Blockchain", "Transaction ID", "Date", "a\tb")),
		"zero-width space in fifth": p(five("Address", "Blockchain", "Transaction ID", "Date", "a\u200bb")),
		"invalid UTF-8 fifth":       p(five("Address", "Blockchain", "Transaction ID", "Date", "a\xff")),
		"good headers, bad row":     p(five("Address", "Blockchain", "Transaction ID", "Date", "Memo"), rowIn(1000, rc(0))),
		"bad headers, good row":     p(five("Address", "Blockchain", "Transaction ID", "Date", ""), rowIn(4, rc(4))),
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f.t = t
			f.mustFail(CodeValidation, f.w, c)
			f.mustFail(CodeValidation, f.owner, c)
		})
	}
	f.t = t
	f.wantStored(map[int][sheetColumnCount]string{0: rc(0), 1: rc(1), 2: rc(2)})
	if f.rev() != 1 || f.sheet().Headers[4] != "Notes" {
		t.Fatalf("refused patches changed the sheet: revision %d headers %q", f.rev(), f.sheet().Headers)
	}
}

func TestSheetPatchHeaders(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(2)
	h := func(fifth string) []string {
		return []string{"Address", "Blockchain", "Transaction ID", "Date", fifth}
	}
	res := f.mustOK(f.w, &PatchSheet{SheetWrite: f.sw(), Headers: h("Memo")})
	if got := bodyJSON(t, res.Body); got != `{"space_id":"`+f.id+`","headers":["Address","Blockchain","Transaction ID","Date","Memo"],"revision":2,"updated_rows":[]}` {
		t.Fatalf("headers-only patch result %s", got)
	}
	if v := f.read(SheetQuery{}); v.Headers[4] != "Memo" || v.Revision != 2 {
		t.Fatalf("read after header patch: %q revision %d", v.Headers, v.Revision)
	}
	// The same headers again: accepted, revision +1.
	if v := bodyAs[SheetPatchedView](t, f.mustOK(f.w, &PatchSheet{SheetWrite: f.sw(), Headers: h("Memo")})); v.Revision != 3 || len(v.UpdatedRows) != 0 {
		t.Fatalf("unchanged headers: %+v", v)
	}
	for _, fifth := range []string{"N", strings.Repeat("n", 60), strings.Repeat("é", 60), "Notes & more (2026)", "Notes"} {
		v := bodyAs[SheetPatchedView](t, f.mustOK(f.w, &PatchSheet{SheetWrite: f.sw(), Headers: h(fifth)}))
		if v.Headers[4] != fifth || f.sheet().Headers[4] != fifth {
			t.Fatalf("fifth heading %q not saved", fifth)
		}
	}
	// Headers and rows together: one revision.
	r0 := f.rev()
	v := bodyAs[SheetPatchedView](t, f.mustOK(f.w, &PatchSheet{SheetWrite: f.sw(), Headers: h("Comment"), Rows: []SheetRowInput{rowIn(1, blankCells()), rowIn(7, rc(7))}}))
	if v.Revision != r0+1 || v.Headers[4] != "Comment" || len(v.UpdatedRows) != 2 || v.UpdatedRows[0].Index != 1 || v.UpdatedRows[1].Index != 7 {
		t.Fatalf("headers and rows: %+v", v)
	}
	f.wantStored(map[int][sheetColumnCount]string{0: rc(0), 7: rc(7)})
	if f.sheet().Headers != [sheetColumnCount]string{"Address", "Blockchain", "Transaction ID", "Date", "Comment"} {
		t.Fatalf("stored headers %q", f.sheet().Headers)
	}
}

// Each write kind is refused for every principal and grant that may not
// write, and for a stale revision.
func TestSheetWritesAccess(t *testing.T) {
	f := newSheetFixture(t)
	f.setRows(map[int][sheetColumnCount]string{0: rc(0), 2: rc(2)})
	writes := func(rev int64, space string) map[string]Payload {
		sw := SheetWrite{SpaceID: space, ExpectedRevision: rev}
		return map[string]Payload{
			"patch":   &PatchSheet{SheetWrite: sw, Rows: []SheetRowInput{rowIn(1, rc(1))}},
			"put":     &PutSheetRow{SheetWrite: sw, Cells: []string{"n", "btc", "", "", ""}},
			"delete":  &DeleteSheetRow{SheetWrite: sw, Index: 0},
			"compact": &CompactSheet{SheetWrite: sw},
		}
	}
	check := func(code Code, who Principal, rev int64, space string) {
		t.Helper()
		for name, w := range writes(rev, space) {
			t.Run(fmt.Sprintf("%s %s by %s rev %d", code, name, who.KeyID, rev), func(t *testing.T) {
				f.t = t
				f.mustFail(code, who, w)
			})
		}
		f.t = t
	}
	rev := f.rev()
	// A read-only key is refused first, whatever the grant or revision.
	for _, g := range []Level{LevelWrite, LevelRead, LevelNone} {
		f.grantSpace(f.id, g)
		check(CodeForbidden, f.r, rev, f.id)
		check(CodeForbidden, f.r, rev+5, f.id)
	}
	f.grantSpace(f.id, LevelRead)
	check(CodeForbidden, f.w, rev, f.id)
	f.grantSpace(f.id, LevelNone)
	check(CodeNotFound, f.w, rev, f.id)
	f.grantSpace(f.id, LevelWrite)
	// A Space that is not a Sheet Space has no Sheet.
	check(CodeNotFound, f.w, 0, testFirstSpaceID)
	check(CodeNotFound, f.owner, 0, testFirstSpaceID)
	check(CodeNotFound, f.w, 0, "space-unknown")
	// Stale revisions, older and newer.
	for _, stale := range []int64{rev - 1, rev + 1, -1, 0} {
		check(CodeStaleVersion, f.w, stale, f.id)
		check(CodeStaleVersion, f.owner, stale, f.id)
	}
	// The owner needs no grant.
	f.grantSpace(f.id, LevelNone)
	f.mustOK(f.owner, f.put("o", "btc", "", "", ""))
	f.wantStored(map[int][sheetColumnCount]string{0: rc(0), 1: {"o", "btc", "", "", ""}, 2: rc(2)})
}

// ---- PUT ----

func TestSheetPutValidation(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(2)
	for _, cells := range [][]string{
		{"", "btc", "x", "", ""},
		{"addr", "", "x", "", ""},
		{"", "", "", "", "note"},
		{"", "", "", "", ""},
		{"addr", "btc", "", ""},
		{"addr", "btc", "", "", "", ""},
		nil,
		{},
		{"addr", "btc", strings.Repeat("x", 513), "", ""},
		{strings.Repeat("é", 513), "btc", "", "", ""},
		{"addr", "btc\xff", "", "", ""},
	} {
		f.mustFail(CodeValidation, f.w, f.put(cells...))
	}
	// A key of 512 multi-byte characters is fine.
	long := strings.Repeat("é", 512)
	v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put(long, long, long, long, long)))
	if !v.Created || v.Index != 2 {
		t.Fatalf("put of 512-character cells: %+v", v)
	}
}

func TestSheetPutUpsert(t *testing.T) {
	f := newSheetFixture(t)
	stored := map[int][sheetColumnCount]string{0: rc(0), 1: rc(1), 3: rc(3), 5: rc(5)}
	f.setRows(stored)
	r0 := f.rev()

	// No match: the first empty slot.
	res := f.mustOK(f.w, f.put("new-1", "btc", "t", "d", "n"))
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != fmt.Sprintf(`{"space_id":"%s","revision":%d,"index":2,"created":true,"cells":["new-1","btc","t","d","n"]}`, f.id, r0+1) {
		t.Fatalf("create by put: %d %s", res.Status, got)
	}
	stored[2] = [sheetColumnCount]string{"new-1", "btc", "t", "d", "n"}
	if v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("new-2", "btc", "", "", ""))); !v.Created || v.Index != 4 || v.Revision != r0+2 {
		t.Fatalf("second create: %+v", v)
	}
	stored[4] = [sheetColumnCount]string{"new-2", "btc", "", "", ""}
	if v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("new-3", "btc", "", "", ""))); !v.Created || v.Index != 6 {
		t.Fatalf("third create: %+v", v)
	}
	stored[6] = [sheetColumnCount]string{"new-3", "btc", "", "", ""}
	f.wantStored(stored)

	// The unique exact match is updated in place, other cells replaced.
	res = f.mustOK(f.w, f.put("addr-003", "btc", "tx-new", "", ""))
	if got := bodyJSON(t, res.Body); got != fmt.Sprintf(`{"space_id":"%s","revision":%d,"index":3,"created":false,"cells":["addr-003","btc","tx-new","",""]}`, f.id, r0+4) {
		t.Fatalf("update by put: %s", got)
	}
	stored[3] = [sheetColumnCount]string{"addr-003", "btc", "tx-new", "", ""}
	// Identical cells: still a write, revision +1, created false.
	for range 2 {
		rv := f.rev()
		v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("addr-003", "btc", "tx-new", "", "")))
		if v.Created || v.Index != 3 || v.Revision != rv+1 || f.rev() != rv+1 {
			t.Fatalf("identical put: %+v (revision was %d)", v, rv)
		}
	}
	f.wantStored(stored)

	// Matching is exact and case-sensitive on both key cells.
	for _, key := range [][2]string{{"ADDR-003", "btc"}, {"addr-003", "BTC"}, {"addr-003 ", "btc"}, {"addr-003", "eth"}} {
		v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put(key[0], key[1], "", "", "")))
		if !v.Created || f.stored()[3] != stored[3] {
			t.Fatalf("put %q matched addr-003/btc: %+v", key, v)
		}
		stored[v.Index] = [sheetColumnCount]string{key[0], key[1], "", "", ""}
	}
	f.wantStored(stored)

	// A row re-keyed by PATCH is found by its new key only.
	f.mustOK(f.w, f.patch(rowIn(0, [sheetColumnCount]string{"moved", "btc", "", "", ""})))
	stored[0] = [sheetColumnCount]string{"moved", "btc", "", "", ""}
	if v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("moved", "btc", "1", "", ""))); v.Created || v.Index != 0 {
		t.Fatalf("put by new key: %+v", v)
	}
	stored[0] = [sheetColumnCount]string{"moved", "btc", "1", "", ""}
	v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("addr-000", "btc", "", "", "")))
	if !v.Created || v.Index == 0 {
		t.Fatalf("put by old key matched the re-keyed row: %+v", v)
	}
	stored[v.Index] = [sheetColumnCount]string{"addr-000", "btc", "", "", ""}
	// A row cleared by PATCH no longer matches and its slot is reused.
	f.mustOK(f.w, f.patch(rowIn(1, blankCells())))
	delete(stored, 1)
	if v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("addr-001", "btc", "", "", ""))); !v.Created || v.Index != 1 {
		t.Fatalf("put after clearing row 1: %+v", v)
	}
	stored[1] = [sheetColumnCount]string{"addr-001", "btc", "", "", ""}
	f.wantStored(stored)
}

func TestSheetPutConflicts(t *testing.T) {
	f := newSheetFixture(t)
	f.setRows(map[int][sheetColumnCount]string{2: {"dup", "btc", "a", "", ""}, 9: {"dup", "btc", "b", "", ""}, 4: {"dup", "eth", "", "", ""}})
	e := f.mustFail(CodeConflict, f.w, f.put("dup", "btc", "c", "", ""))
	if e.Message != "More than one row has this address and chain." {
		t.Fatalf("duplicate-match message %q", e.Message)
	}
	// Only the exact pair is ambiguous.
	if v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("dup", "eth", "x", "", ""))); v.Created || v.Index != 4 {
		t.Fatalf("put dup/eth: %+v", v)
	}
	// Resolving the duplicate (clearing one) makes the pair unique again.
	f.mustOK(f.w, f.patch(rowIn(2, blankCells())))
	if v := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("dup", "btc", "c", "", ""))); v.Created || v.Index != 9 {
		t.Fatalf("put after resolving the duplicate: %+v", v)
	}

	// A full Sheet: a match is still updated; no match is a CONFLICT.
	g := newSheetFixture(t)
	g.fill(1000)
	e = g.mustFail(CodeConflict, g.w, g.put("nobody", "btc", "", "", ""))
	if e.Message != "Sheet has no empty row slots." {
		t.Fatalf("full-sheet message %q", e.Message)
	}
	if v := bodyAs[SheetPutView](t, g.mustOK(g.w, g.put("addr-999", "btc", "last", "", ""))); v.Created || v.Index != 999 {
		t.Fatalf("update in a full sheet: %+v", v)
	}
	if v := bodyAs[SheetPutView](t, g.mustOK(g.w, g.put("addr-000", "btc", "first", "", ""))); v.Created || v.Index != 0 {
		t.Fatalf("update in a full sheet: %+v", v)
	}
	// Duplicates in a full Sheet: the duplicate message.
	g.mustOK(g.w, g.patch(rowIn(500, rc(501))))
	e = g.mustFail(CodeConflict, g.w, g.put("addr-501", "btc", "", "", ""))
	if e.Message != sheetDuplicateMatchMessage {
		t.Fatalf("duplicates in a full sheet: %q", e.Message)
	}
	// Freeing the last slot lets a create in.
	g.mustOK(g.w, g.patch(rowIn(999, blankCells())))
	if v := bodyAs[SheetPutView](t, g.mustOK(g.w, g.put("nobody", "btc", "", "", ""))); !v.Created || v.Index != 999 {
		t.Fatalf("create into the only empty slot: %+v", v)
	}
	invariantsHold(t, g.sheet())
}

// ---- DELETE ----

func TestSheetDeleteShifts(t *testing.T) {
	f := newSheetFixture(t)
	f.setRows(map[int][sheetColumnCount]string{0: rc(0), 1: rc(1), 2: rc(2), 5: rc(5), 9: rc(9), 998: rc(998)})
	r0 := f.rev()
	res := f.mustOK(f.w, f.del(1))
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != fmt.Sprintf(`{"space_id":"%s","revision":%d,"deleted_index":1,"shifted_rows":4}`, f.id, r0+1) {
		t.Fatalf("delete result %d %s", res.Status, got)
	}
	// Later rows move up one slot; the gaps between them remain.
	f.wantStored(map[int][sheetColumnCount]string{0: rc(0), 1: rc(2), 4: rc(5), 8: rc(9), 997: rc(998)})

	// A blank chosen slot still shifts the later rows.
	v := bodyAs[SheetDeletedView](t, f.mustOK(f.w, f.del(2)))
	if v.DeletedIndex != 2 || v.ShiftedRows != 3 || v.Revision != r0+2 {
		t.Fatalf("delete of a blank slot: %+v", v)
	}
	f.wantStored(map[int][sheetColumnCount]string{0: rc(0), 1: rc(2), 3: rc(5), 7: rc(9), 996: rc(998)})

	// The Address + Blockchain index follows the shift: PUT finds each
	// moved row at its new slot.
	for key, at := range map[string]int{"addr-002": 1, "addr-005": 3, "addr-009": 7, "addr-998": 996} {
		pv := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put(key, "btc", "found", "", "")))
		if pv.Created || pv.Index != at {
			t.Fatalf("put %s after shift: %+v, want index %d", key, pv, at)
		}
	}
	// Deleting the last stored row shifts nothing.
	if v := bodyAs[SheetDeletedView](t, f.mustOK(f.w, f.del(996))); v.ShiftedRows != 0 {
		t.Fatalf("delete of the last row: %+v", v)
	}
	// Nothing at or after the index: 404; out of range: 422.
	for _, i := range []int{8, 500, 996, 999} {
		f.mustFail(CodeNotFound, f.w, f.del(i))
	}
	for _, i := range []int{-1, 1000, 1 << 30} {
		f.mustFail(CodeValidation, f.w, f.del(i))
	}
	// Deleting a blank slot right before the last row moves it.
	if v := bodyAs[SheetDeletedView](t, f.mustOK(f.w, f.del(4))); v.ShiftedRows != 1 {
		t.Fatalf("delete before the last row: %+v", v)
	}
	f.wantStored(map[int][sheetColumnCount]string{
		0: rc(0), 1: {"addr-002", "btc", "found", "", ""}, 3: {"addr-005", "btc", "found", "", ""}, 6: {"addr-009", "btc", "found", "", ""},
	})

	// An empty Sheet: 404 everywhere.
	e := newSheetFixture(t)
	for _, i := range []int{0, 500, 999} {
		e.mustFail(CodeNotFound, e.w, e.del(i))
	}
	e.mustFail(CodeValidation, e.w, e.del(1000))
}

func TestSheetDeleteInAFullSheet(t *testing.T) {
	f := newSheetFixture(t)
	f.fill(1000)
	v := bodyAs[SheetDeletedView](t, f.mustOK(f.w, f.del(0)))
	if v.ShiftedRows != 999 || v.DeletedIndex != 0 {
		t.Fatalf("delete index 0 of a full sheet: %+v", v)
	}
	want := map[int][sheetColumnCount]string{}
	for i := range 999 {
		want[i] = rc(i + 1)
	}
	f.wantStored(want)
	if pv := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("addr-999", "btc", "", "", ""))); pv.Created || pv.Index != 998 {
		t.Fatalf("put of the last row after shift: %+v", pv)
	}
	if pv := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put("addr-000", "btc", "", "", ""))); !pv.Created || pv.Index != 999 {
		t.Fatalf("create after delete in a full sheet: %+v", pv)
	}
	if v := bodyAs[SheetDeletedView](t, f.mustOK(f.w, f.del(999))); v.ShiftedRows != 0 {
		t.Fatalf("delete of slot 999: %+v", v)
	}
	f.mustFail(CodeNotFound, f.w, f.del(999))
}

// ---- Compaction ----

func TestSheetCompaction(t *testing.T) {
	f := newSheetFixture(t)
	f.setRows(map[int][sheetColumnCount]string{2: rc(2), 5: rc(5), 7: rc(7), 900: rc(900)})
	r0 := f.rev()
	audit := len(f.a.Audit)
	res := f.mustOK(f.w, f.compact())
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != fmt.Sprintf(`{"space_id":"%s","revision":%d,"moved_rows":4}`, f.id, r0+1) {
		t.Fatalf("compaction result %d %s", res.Status, got)
	}
	if len(f.a.Audit) != audit+1 {
		t.Fatalf("compaction recorded %d events", len(f.a.Audit)-audit)
	}
	f.wantStored(map[int][sheetColumnCount]string{0: rc(2), 1: rc(5), 2: rc(7), 3: rc(900)})
	for key, at := range map[string]int{"addr-002": 0, "addr-005": 1, "addr-007": 2, "addr-900": 3} {
		f.mustOK(f.w, f.patch(rowIn(at, [sheetColumnCount]string{key, "btc", "", "", ""})))
		pv := bodyAs[SheetPutView](t, f.mustOK(f.w, f.put(key, "btc", "found", "", "")))
		if pv.Created || pv.Index != at {
			t.Fatalf("put %s after compaction: %+v", key, pv)
		}
	}

	// Only the rows that move are counted.
	g := newSheetFixture(t)
	g.setRows(map[int][sheetColumnCount]string{0: rc(0), 1: rc(1), 5: rc(5), 6: rc(6)})
	if v := bodyAs[SheetCompactedView](t, g.mustOK(g.w, g.compact())); v.MovedRows != 2 {
		t.Fatalf("partial compaction: %+v", v)
	}
	g.wantStored(map[int][sheetColumnCount]string{0: rc(0), 1: rc(1), 2: rc(5), 3: rc(6)})
}

func TestSheetCompactionOfACompactSheet(t *testing.T) {
	for _, n := range []int{0, 1, 3, 1000} {
		f := newSheetFixture(t)
		f.fill(n)
		r0 := f.rev()
		before := f.snapshot()
		res := f.mustOK(f.w, f.compact())
		if got := bodyJSON(t, res.Body); got != fmt.Sprintf(`{"space_id":"%s","revision":%d,"moved_rows":0}`, f.id, r0) {
			t.Fatalf("%d rows: compaction result %s", n, got)
		}
		if !bytes.Equal(before, f.snapshot()) {
			t.Fatalf("%d rows: a compaction that moved nothing changed the account", n)
		}
		if n == 1000 {
			// Compaction cannot make room in a full Sheet.
			e := f.mustFail(CodeConflict, f.w, f.put("nobody", "btc", "", "", ""))
			if e.Message != sheetFullMessage {
				t.Fatalf("full sheet after compaction: %q", e.Message)
			}
		}
	}
}

// ---- Budget ----

// sheetWritePayload is any of the four Sheet writes.
type sheetWritePayload interface {
	*PatchSheet | *PutSheetRow | *DeleteSheetRow | *CompactSheet
}

// budget stamps a write payload with EnforceBudget.
func budget[P sheetWritePayload](p P) P {
	switch v := any(p).(type) {
	case *PatchSheet:
		v.EnforceBudget = true
	case *PutSheetRow:
		v.EnforceBudget = true
	case *DeleteSheetRow:
		v.EnforceBudget = true
	case *CompactSheet:
		v.EnforceBudget = true
	}
	return p
}

func sec(s float64) int64 { return int64(s * float64(time.Second)) }

func (f *sheetFixture) okAt(at int64, p Payload) Result {
	f.t.Helper()
	res := f.run(f.cmdAt(at, f.w, p))
	if res.err != nil {
		f.t.Fatalf("%T at %+.3fs: %v", p, float64(at-t0)/1e9, res.err)
	}
	return res
}

func (f *sheetFixture) limitedAt(at int64, p Payload, retryAfter int) {
	f.t.Helper()
	e := f.mustFailCmd(CodeRateLimited, f.cmdAt(at, f.w, p))
	if e.RetryAfter != retryAfter || e.RetryAfter < 1 {
		f.t.Fatalf("%T: Retry-After %d, want %d", p, e.RetryAfter, retryAfter)
	}
}

func TestSheetBudget(t *testing.T) {
	f := newSheetFixture(t)
	empty := f.addSheet("Other")
	f.fill(10)
	// Rows 100-104 leave a gap for a compaction; rows 200 and 201 share a
	// key for a duplicate-match CONFLICT.
	f.setRows(map[int][sheetColumnCount]string{100: rc(100), 101: rc(101), 102: rc(102), 103: rc(103), 104: rc(104), 200: rc(200), 201: rc(200)})
	if len(f.a.SheetWrites) != 0 {
		t.Fatalf("writes without EnforceBudget were counted: %v", f.a.SheetWrites)
	}
	T := f.at + sec(10)
	n := 0
	next := func() int64 { n++; return T + sec(float64(n-1)) }
	// 10 unchanged PATCHes and 10 identical PUTs count.
	for range 10 {
		f.okAt(next(), budget(f.patch(rowIn(0, rc(0)))))
	}
	for range 10 {
		if v := bodyAs[SheetPutView](t, f.okAt(next(), budget(f.put(sl(rc(1))...)))); v.Created {
			t.Fatalf("identical put created a row")
		}
	}
	// 5 DELETEs count: rows 5-9 go, the later rows move up five slots.
	for range 5 {
		f.okAt(next(), budget(f.del(5)))
	}
	// A compaction that moves rows counts ...
	if v := bodyAs[SheetCompactedView](t, f.okAt(next(), budget(f.compact()))); v.MovedRows != 7 {
		t.Fatalf("compaction moved %d rows", v.MovedRows)
	}
	// ... an already-compact one does not.
	if v := bodyAs[SheetCompactedView](t, f.okAt(T+sec(25.5), budget(f.compact()))); v.MovedRows != 0 {
		t.Fatalf("second compaction moved %d rows", v.MovedRows)
	}
	// 4 creating PUTs: 30 counted writes at T+0s ... T+29s.
	for i := range 4 {
		if v := bodyAs[SheetPutView](t, f.okAt(next(), budget(f.put(fmt.Sprint("new-", i), "btc", "", "", "")))); !v.Created || v.Index != 12+i {
			t.Fatalf("create %d: %+v", i, v)
		}
	}
	if n != 30 || len(f.a.SheetWrites) != 30 {
		t.Fatalf("%d writes made, %d counted", n, len(f.a.SheetWrites))
	}
	// Every counted kind is refused now, with the seconds until T+0s
	// leaves the window, and changes nothing.
	f.limitedAt(T+sec(30), budget(f.patch(rowIn(0, rc(0)))), 30)
	f.limitedAt(T+sec(30.2), budget(f.patch(rowIn(50, rc(50)))), 30)
	f.limitedAt(T+sec(31), budget(&PatchSheet{SheetWrite: f.sw(), Headers: []string{"Address", "Blockchain", "Transaction ID", "Date", "Memo"}}), 29)
	f.limitedAt(T+sec(45), budget(f.put(sl(rc(1))...)), 15)
	f.limitedAt(T+sec(45), budget(f.put("fresh", "btc", "", "", "")), 15)
	f.limitedAt(T+sec(50), budget(f.del(0)), 10)
	f.limitedAt(T+sec(59), budget(f.del(15)), 1)
	// A write without EnforceBudget is never limited: it opens a gap.
	f.okAt(T+sec(59.1), f.patch(rowIn(3, blankCells())))
	f.limitedAt(T+sec(59.5), budget(f.compact()), 1)
	// An already-compact POST is allowed with the budget spent.
	if v := bodyAs[SheetCompactedView](t, f.okAt(T+sec(59.6), budget(&CompactSheet{SheetWrite: f.swOf(empty)}))); v.MovedRows != 0 || v.Revision != 0 {
		t.Fatalf("compaction of an empty sheet: %+v", v)
	}
	// Other refusals keep their own codes: the budget is consulted last.
	f.mustFailCmd(CodeValidation, f.cmdAt(T+sec(59.7), f.w, budget(f.patch(rowIn(1000, rc(0))))))
	f.mustFailCmd(CodeValidation, f.cmdAt(T+sec(59.7), f.w, budget(f.put("", "btc", "", "", ""))))
	f.mustFailCmd(CodeNotFound, f.cmdAt(T+sec(59.7), f.w, budget(f.del(999))))
	f.mustFailCmd(CodeStaleVersion, f.cmdAt(T+sec(59.7), f.w, budget(&PutSheetRow{SheetWrite: SheetWrite{SpaceID: f.id, ExpectedRevision: f.rev() - 1}, Cells: sl(rc(1))})))
	f.mustFailCmd(CodeForbidden, f.cmdAt(T+sec(59.7), f.r, budget(f.put(sl(rc(1))...))))
	if e := f.mustFailCmd(CodeConflict, f.cmdAt(T+sec(59.8), f.w, budget(f.put(sl(rc(200))...)))); e.Message != sheetDuplicateMatchMessage {
		t.Fatalf("conflict with the budget spent: %q", e.Message)
	}

	// At T+60s the first write leaves the window: one write fits, then the
	// next waits for T+1s to leave.
	f.okAt(T+sec(60), budget(f.patch(rowIn(0, rc(0)))))
	f.limitedAt(T+sec(60), budget(f.patch(rowIn(0, rc(0)))), 1)
	f.limitedAt(T+sec(60.999), budget(f.patch(rowIn(0, rc(0)))), 1)
	if v := bodyAs[SheetCompactedView](t, f.okAt(T+sec(61), budget(f.compact()))); v.MovedRows == 0 {
		t.Fatalf("compaction at T+61s moved nothing")
	}
	// After a full window, 30 more writes at one instant, then Retry-After 60.
	later := T + sec(200)
	for range 30 {
		f.okAt(later, budget(f.put("burst", "btc", "", "", "")))
	}
	f.limitedAt(later, budget(f.put("burst", "btc", "", "", "")), 60)
	f.limitedAt(later+sec(59.001), budget(f.put("burst", "btc", "", "", "")), 1)
	f.okAt(later+sec(60), budget(f.put("burst", "btc", "", "", "")))
	if len(f.a.SheetWrites) > sheetWritesPerWindow {
		t.Fatalf("budget holds %d times", len(f.a.SheetWrites))
	}
	invariantsHold(t, f.sheet())
}

func TestSheetBudgetOffNeverLimits(t *testing.T) {
	f := newSheetFixture(t)
	at := f.at + sec(1)
	for i := range 100 {
		f.okAt(at, f.put("same", "btc", fmt.Sprint(i), "", ""))
		f.okAt(at, f.patch(rowIn(1, rc(i))))
	}
	if len(f.a.SheetWrites) != 0 || f.rev() != 200 {
		t.Fatalf("unenforced writes: counted %d, revision %d", len(f.a.SheetWrites), f.rev())
	}
	// They used nothing of the budget: 30 enforced writes still fit.
	for range 30 {
		f.okAt(at, budget(f.put("same", "btc", "", "", "")))
	}
	f.limitedAt(at, budget(f.put("same", "btc", "", "", "")), 60)
	// And unenforced writes continue while the budget is spent.
	f.okAt(at, f.put("same", "btc", "again", "", ""))
}

func TestSheetBudgetIsPerAccount(t *testing.T) {
	f := newSheetFixture(t)
	other := f.addSheet("Second")
	at := f.at + sec(1)
	for i := range 30 {
		id := f.id
		if i%2 == 1 {
			id = other
		}
		// The key's and the owner's writes share the account's budget.
		who := f.w
		if i%3 == 0 {
			who = f.owner
		}
		res := f.run(f.cmdAt(at+sec(float64(i)), who, budget(&PutSheetRow{SheetWrite: f.swOf(id), Cells: []string{"a", "btc", fmt.Sprint(i), "", ""}})))
		if res.err != nil {
			t.Fatalf("write %d: %v", i, res.err)
		}
	}
	for _, id := range []string{f.id, other} {
		f.limitedAt(at+sec(30), budget(&PutSheetRow{SheetWrite: f.swOf(id), Cells: []string{"a", "btc", "", "", ""}}), 30)
		e := f.mustFailCmd(CodeRateLimited, f.cmdAt(at+sec(30), f.owner, budget(&PatchSheet{SheetWrite: f.swOf(id), Rows: []SheetRowInput{rowIn(3, rc(3))}})))
		if e.RetryAfter != 30 {
			t.Fatalf("owner Retry-After %d", e.RetryAfter)
		}
	}
	// Another account has its own budget.
	g := newSheetFixture(t)
	for range 30 {
		g.okAt(at+sec(30), budget(g.put("a", "btc", "", "", "")))
	}
	g.limitedAt(at+sec(30), budget(g.put("a", "btc", "", "", "")), 60)
}

// ---- Sheet Space delete ----

func TestSheetSpaceDeleteNeedsNoStoredRows(t *testing.T) {
	f := newSheetFixture(t)
	del := func() *DeleteSpace {
		return &DeleteSpace{SpaceID: f.id, ExpectedBookmarkRevision: f.revision(), ExpectedVersion: f.spaceVersion(f.id), ConfirmDeleteCards: true}
	}
	// A row in the last slot, holding only a note, blocks the delete.
	f.mustOK(f.w, f.patch(rowIn(999, [sheetColumnCount]string{"", "", "", "", "note"})))
	for _, p := range []Principal{f.w, f.owner} {
		f.mustFail(CodeConflict, p, del())
	}
	f.mustOK(f.w, f.del(999))
	f.mustOK(f.w, f.put("a", "btc", "", "", ""))
	for _, p := range []Principal{f.w, f.owner} {
		f.mustFail(CodeConflict, p, del())
	}
	// Emptied, with a custom fifth heading: deletable.
	f.mustOK(f.w, &PatchSheet{SheetWrite: f.sw(), Headers: []string{"Address", "Blockchain", "Transaction ID", "Date", "Memo"}, Rows: []SheetRowInput{rowIn(0, blankCells())}})
	if len(f.sheet().Rows) != 0 || f.sheet().Headers[4] != "Memo" {
		t.Fatalf("sheet not emptied")
	}
	res := f.mustOK(f.w, del())
	if v := bodyAs[SpaceDeletedView](t, res); !v.Deleted || v.DeletedCardCount != 0 || f.storedSpace(f.id) != nil {
		t.Fatalf("delete of an empty sheet space: %+v", v)
	}
	wantCode(t, f.query(f.keyCred(f.w), SheetQuery{SpaceID: f.id, Limit: 100}), CodeNotFound)
	f.mustFail(CodeNotFound, f.w, &PutSheetRow{SheetWrite: SheetWrite{SpaceID: f.id}, Cells: []string{"a", "btc", "", "", ""}})
}

// ---- Snapshot ----

func TestSheetSnapshotRoundTrip(t *testing.T) {
	f := newSheetFixture(t)
	rows := map[int][sheetColumnCount]string{}
	for i := range 300 {
		rows[3*i] = rc(i)
	}
	rows[1] = [sheetColumnCount]string{"dup", "btc", "1", "", ""}
	rows[2] = [sheetColumnCount]string{"dup", "btc", "2", "", ""}
	f.setRows(rows)
	f.mustOK(f.w, &PatchSheet{SheetWrite: f.sw(), Headers: []string{"Address", "Blockchain", "Transaction ID", "Date", "Memo"}})
	f.okAt(f.at+sec(1), budget(f.put(sl(rc(5))...)))

	snap := f.snapshot()
	var back Account
	if err := json.Unmarshal(snap, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snap, again) {
		t.Fatalf("account with a Sheet does not survive a JSON round trip")
	}
	_, s := back.space(f.id)
	if s.Sheet.byKey != nil {
		t.Fatalf("the index was restored from JSON")
	}
	invariantsHold(t, s.Sheet)

	// The original and the restored copy answer the same commands the same
	// way; on the copy the index is rebuilt from the rows.
	g := &sheetFixture{testAccount: &testAccount{t: t, id: f.testAccount.id, a: &back, at: f.at, keys: f.keys, owner: f.owner, seq: f.seq}, w: f.w, r: f.r, id: f.id}
	for _, fx := range []*sheetFixture{f, g} {
		if v := bodyAs[SheetPutView](t, fx.mustOK(fx.w, fx.put("addr-010", "btc", "restored", "", ""))); v.Created || v.Index != 30 {
			t.Fatalf("put on the restored copy: %+v", v)
		}
		if e := fx.mustFail(CodeConflict, fx.w, fx.put("dup", "btc", "", "", "")); e.Message != sheetDuplicateMatchMessage {
			t.Fatalf("duplicates on the restored copy: %q", e.Message)
		}
		if v := bodyAs[SheetPutView](t, fx.mustOK(fx.w, fx.put("new", "btc", "", "", ""))); !v.Created || v.Index != 4 {
			t.Fatalf("create on the restored copy: %+v", v)
		}
		fx.mustOK(fx.w, fx.del(0))
		if v := fx.read(SheetQuery{Address: ptr("addr-010"), Chain: ptr("btc")}); !intsEqual(indexesOf(v.Rows), []int{29}) {
			t.Fatalf("filter on the restored copy: %v", indexesOf(v.Rows))
		}
		invariantsHold(t, fx.sheet())
	}
	if !bytes.Equal(f.snapshot(), g.snapshot()) {
		t.Fatalf("the original and the restored copy diverged")
	}
	// The budget survives the round trip too.
	if len(back.SheetWrites) != 1 {
		t.Fatalf("restored budget %v", back.SheetWrites)
	}
}

// The first write to a Sheet that has not built its Address + Blockchain
// index yet (a new Sheet, or one restored from a snapshot) may be a PATCH
// that stores a new row. That row must be indexed once: a PUT with its key
// updates it, a filtered read lists it once, and a replica restored from a
// snapshot in between answers exactly like one that was not.
func TestSheetFirstPatchInsertIsIndexedOnce(t *testing.T) {
	check := func(t *testing.T, f *sheetFixture) {
		t.Helper()
		f.mustOK(f.w, f.patch(rowIn(0, [sheetColumnCount]string{"A", "btc", "", "", ""})))
		if n := len(f.sheet().index()[sheetKey{"A", "btc"}]); n != 1 {
			t.Errorf("index holds the row %d times", n)
		}
		if v := f.read(SheetQuery{Address: ptr("A"), Chain: ptr("btc")}); !intsEqual(indexesOf(v.Rows), []int{0}) {
			t.Errorf("filtered read lists %v, want [0]", indexesOf(v.Rows))
		}
		res := f.apply(f.w, f.put("A", "btc", "updated", "", ""))
		if res.err != nil {
			t.Fatalf("PUT of the only row with this key: %v", res.err)
		}
		if v := bodyAs[SheetPutView](t, res); v.Created || v.Index != 0 {
			t.Fatalf("PUT of the only row with this key: %+v", v)
		}
		invariantsHold(t, f.sheet())
	}
	t.Run("new sheet", func(t *testing.T) {
		check(t, newSheetFixture(t))
	})
	t.Run("restored sheet", func(t *testing.T) {
		f := newSheetFixture(t)
		f.mustOK(f.w, f.put("B", "btc", "", "", ""))
		f.mustOK(f.w, f.del(0))
		var back Account
		if err := json.Unmarshal(f.snapshot(), &back); err != nil {
			t.Fatal(err)
		}
		f.a = &back
		check(t, f)
	})
	t.Run("replicas agree", func(t *testing.T) {
		f := newSheetFixture(t)
		f.mustOK(f.w, f.patch(rowIn(0, [sheetColumnCount]string{"A", "btc", "", "", ""})))
		// Replica g restarts from a snapshot taken after the PATCH.
		var back Account
		if err := json.Unmarshal(f.snapshot(), &back); err != nil {
			t.Fatal(err)
		}
		g := &sheetFixture{testAccount: &testAccount{t: t, id: f.testAccount.id, a: &back, at: f.at, keys: f.keys, owner: f.owner, seq: f.seq}, w: f.w, r: f.r, id: f.id}
		put := func(fx *sheetFixture) string {
			res := fx.apply(fx.w, fx.put("A", "btc", "x", "", ""))
			if res.err != nil {
				return string(res.err.Code) + ": " + res.err.Message
			}
			return bodyJSON(t, res.Body)
		}
		if a, b := put(f), put(g); a != b {
			t.Fatalf("the same PUT answers differently:\nlive replica     %s\nrestored replica %s", a, b)
		}
		if !bytes.Equal(f.snapshot(), g.snapshot()) {
			t.Fatalf("replicas diverged after the same PUT")
		}
	})
}
