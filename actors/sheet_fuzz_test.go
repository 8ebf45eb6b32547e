package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzSheetOperations reads the fuzz input as a sequence of Sheet
// operations (PATCH of rows and headers, PUT, DELETE, compaction, dense and
// sparse or filtered reads, clock steps and snapshot round trips) with
// small address and chain alphabets, so that matches, duplicates, full
// Sheets and the write budget all come up. After every step it checks the
// Sheet's invariants and compares the Sheet, every result and every error
// with a reference model that stores all 1,000 slots as a plain array.
func FuzzSheetOperations(f *testing.F) {
	// A PATCH insert first, then a PUT of the same key and a filtered read.
	f.Add([]byte{0, 0, 0, 2, 5, 1, 3, 0, 5, 8, 0x07, 0})
	// Fill the Sheet with bulk PATCHes, then PUT, DELETE and compact.
	f.Add([]byte{1, 0, 0, 0, 99, 1, 0, 0, 100, 99, 1, 0, 1, 200, 99, 1, 0, 1, 44, 99, 1, 0, 2, 88, 99,
		1, 0, 2, 244, 99, 1, 0, 3, 32, 99, 1, 0, 3, 120, 99, 1, 0, 3, 208, 99, 1, 0, 3, 252, 99,
		3, 0, 0x45, 4, 0, 0x05, 4, 0, 2, 5, 0, 7, 6, 0, 8, 0, 1, 0, 9})
	// Budget: 30 enforced PUTs 100 ms apart; half a second later the 31st
	// waits 56.4 s (Retry-After 57); at exactly 60 s after the first one
	// a write fits again.
	put, tick := []byte{3, 1, 5}, func(halfSeconds byte) []byte { return []byte{9, halfSeconds} }
	spend := bytes.Repeat(put, 30)
	spend = append(spend, tick(1)...)
	spend = append(spend, put...)
	spend = append(spend, tick(112)...)
	spend = append(spend, tick(0)...)
	spend = append(spend, tick(0)...)
	spend = append(spend, put...)
	spend = append(spend, put...)
	f.Add(spend)
	// A full Sheet: PUT without a match, DELETE at 0, PUT into slot 999.
	f.Add([]byte{11, 1, 3, 0, 0x05, 3, 0, 0xe6, 5, 0, 0, 3, 0, 0xe6, 3, 0, 0xe6, 6, 0, 8, 0x81, 0, 11, 0, 3, 0, 0x05})
	// Gaps, deletes that shift, compaction, filtered reads.
	f.Add([]byte{0, 0, 2, 3, 0x25, 5, 0x26, 9, 0x31, 5, 0, 3, 6, 0, 8, 0, 1, 0x15, 8, 0, 2, 0x25, 7, 0, 3, 20})
	// Big cells: the byte cap of sparse pages.
	f.Add([]byte{1, 0x80, 0, 0, 60, 8, 0, 0, 0, 1, 0x80, 0, 100, 40, 8, 0, 0, 0, 10})
	// Headers, stale revisions, the read key, a snapshot round trip.
	f.Add([]byte{2, 0, 1, 2, 0x1e, 2, 2, 0x60, 3, 0x60, 0x05, 10, 0, 0, 3, 5, 3, 0x1f, 0x19, 3, 0, 0x19})

	f.Fuzz(func(t *testing.T, data []byte) {
		fx := newSheetFixture(t)
		run := &sheetFuzzRun{t: t, fx: fx, in: data, at: fx.at + sec(1)}
		copy(run.model.headers[:], defaultHeaders)
		for ops := 0; run.more() && ops < 400; ops++ {
			run.step()
			run.verify()
		}
	})
}

// sheetModel is the reference: every slot as five strings.
type sheetModel struct {
	slots   [sheetRowCount][sheetColumnCount]string
	headers [sheetColumnCount]string
	rev     int64
	counted []int64 // times of the counted writes (EnforceBudget)
}

type sheetFuzzRun struct {
	t       *testing.T
	fx      *sheetFixture
	in      []byte
	pos     int
	at      int64
	model   sheetModel
	lastRev int64
}

func (r *sheetFuzzRun) more() bool { return r.pos < len(r.in) }

func (r *sheetFuzzRun) next() byte {
	if r.pos >= len(r.in) {
		return 0
	}
	b := r.in[r.pos]
	r.pos++
	return b
}

func (r *sheetFuzzRun) next16() int { return int(r.next())<<8 | int(r.next()) }

// index picks a slot: mostly low slots (so rows collide), some anywhere,
// some at the end, a few out of range.
func (r *sheetFuzzRun) index() int {
	switch b := r.next(); {
	case b < 160:
		return int(b % 16)
	case b < 240:
		return r.next16() % sheetRowCount
	case b < 250:
		return sheetRowCount - 10 + int(b%10)
	case b%2 == 0:
		return -1
	default:
		return sheetRowCount
	}
}

func (r *sheetFuzzRun) offset() int {
	i := r.index()
	return min(max(i, 0), sheetRowCount-1)
}

var (
	fuzzAddresses = []string{"", "A", "a", "B"}
	fuzzChains    = []string{"", "btc", "BTC"}
	fuzzOthers    = []string{"", "x", "é", "n"}
	fuzzFifths    = []string{"Notes", "Memo", "", "a\nb", strings.Repeat("n", 61), strings.Repeat("é", 60), "N", "a\u200bb"}
	fuzzLongOK    = strings.Repeat("é", 512)
	fuzzLongBad   = strings.Repeat("é", 513)
	fuzzBig       = strings.Repeat("\U0001D11E", 512)
)

// cells picks a row's content from the small alphabets; 0 is a blank row,
// 254 a 512-character cell and 255 a 513-character one.
func (r *sheetFuzzRun) cells() [sheetColumnCount]string {
	b := r.next()
	c := [sheetColumnCount]string{fuzzAddresses[b%4], fuzzChains[(b/4)%3], fuzzOthers[(b/12)%4], "", fuzzOthers[(b/48)%4]}
	switch b {
	case 0:
		c = [sheetColumnCount]string{}
	case 254:
		c[3] = fuzzLongOK
	case 255:
		c[3] = fuzzLongBad
	}
	return c
}

func cellsValid(c [sheetColumnCount]string) bool {
	for _, s := range c {
		if charCount(s) > 512 {
			return false
		}
	}
	return true
}

func fifthValid(s string) bool {
	return s != "" && charCount(s) <= 60 && isPrintable(s)
}

// writeFlags: bit 0 sets EnforceBudget; bits 1-4 all set make the
// revision stale; bits 5-6 both set send the write with the read key.
type writeFlags struct {
	budget, stale, readKey bool
}

func (r *sheetFuzzRun) flags() writeFlags {
	b := r.next()
	return writeFlags{budget: b&1 == 1, stale: b&0x1e == 0x1e, readKey: b&0x60 == 0x60}
}

// expectation is the model's answer to a write before it is applied:
// either an error code (with the exact message or Retry-After when the
// spec fixes them), or success.
type expectation struct {
	code       Code
	message    string
	retryAfter int
}

// gate is the checks every write shares, in the rules' order: access and
// revision first; the write's own checks are done by the caller; the
// budget last (counted reports whether the write would be counted).
func (r *sheetFuzzRun) gate(fl writeFlags) *expectation {
	if fl.readKey {
		return &expectation{code: CodeForbidden}
	}
	if fl.stale {
		return &expectation{code: CodeStaleVersion}
	}
	return nil
}

func (r *sheetFuzzRun) budget(fl writeFlags) *expectation {
	if !fl.budget {
		return nil
	}
	window := int64(sheetWriteWindow)
	var live []int64
	for _, t := range r.model.counted {
		if t > r.at-window {
			live = append(live, t)
		}
	}
	r.model.counted = live
	if len(live) < 30 {
		return nil
	}
	wait := live[0] + window - r.at
	secs := int((wait + int64(time.Second) - 1) / int64(time.Second))
	return &expectation{code: CodeRateLimited, retryAfter: max(secs, 1)}
}

func (r *sheetFuzzRun) accept(fl writeFlags) {
	r.model.rev++
	if fl.budget {
		r.model.counted = append(r.model.counted, r.at)
	}
}

func (r *sheetFuzzRun) sw(fl writeFlags) SheetWrite {
	rev := r.model.rev
	if fl.stale {
		rev += int64(r.pos%3) - 1 // rev-1 or rev+1 (or rev+1 again)
		if rev == r.model.rev {
			rev++
		}
	}
	return SheetWrite{SpaceID: r.fx.id, ExpectedRevision: rev, EnforceBudget: fl.budget, PlainTextCells: true}
}

// exec runs a write and checks a refusal against want: the code, the
// exact message or Retry-After where fixed, and an unchanged account.
func (r *sheetFuzzRun) exec(fl writeFlags, p Payload, want *expectation) Result {
	t := r.t
	t.Helper()
	who := r.fx.w
	if fl.readKey {
		who = r.fx.r
	}
	before := r.fx.snapshot()
	res := r.fx.run(r.fx.cmdAt(r.at, who, p))
	if want == nil {
		if res.err != nil {
			t.Fatalf("%T %s: refused with %v, the model accepts it", p, bodyJSON(t, p), res.err)
		}
		return res
	}
	if res.err == nil {
		t.Fatalf("%T %s: accepted (%s), the model expects %s", p, bodyJSON(t, p), bodyJSON(t, res.Body), want.code)
	}
	if res.err.Code != want.code {
		t.Fatalf("%T %s: error %v, the model expects %s", p, bodyJSON(t, p), res.err, want.code)
	}
	if want.message != "" && res.err.Message != want.message {
		t.Fatalf("%T: message %q, want %q", p, res.err.Message, want.message)
	}
	if want.code == CodeRateLimited && res.err.RetryAfter != want.retryAfter {
		t.Fatalf("%T: Retry-After %d, the model expects %d", p, res.err.RetryAfter, want.retryAfter)
	}
	if after := r.fx.snapshot(); !bytes.Equal(before, after) {
		t.Fatalf("%T refused with %s but changed the account", p, want.code)
	}
	return res
}

func (r *sheetFuzzRun) step() {
	t := r.t
	r.at += int64(100 * time.Millisecond)
	switch op := r.next() % 12; op {
	case 0: // PATCH of a few rows, maybe with headers
		fl := r.flags()
		n := 1 + int(r.next()%4)
		var rows []SheetRowInput
		for range n {
			rows = append(rows, rowIn(r.index(), r.cells()))
		}
		var headers []string
		if r.next()%4 == 0 {
			headers = append(slicesClone(defaultHeaders[:4]), fuzzFifths[r.next()%byte(len(fuzzFifths))])
		}
		r.patch(fl, headers, rows)
	case 1: // bulk PATCH of up to 100 consecutive rows
		fl := r.flags()
		start, count, pattern := r.next16()%sheetRowCount, 1+int(r.next()%100), r.next()
		var rows []SheetRowInput
		for i := start; i < min(start+count, sheetRowCount); i++ {
			c := [sheetColumnCount]string{fuzzAddresses[(i+int(pattern))%4], fuzzChains[(i/4+int(pattern))%3], fmt.Sprint(i), "", ""}
			if pattern&0x80 != 0 {
				c = [sheetColumnCount]string{fuzzBig, fuzzBig, fuzzBig, fuzzBig, fuzzBig}
			} else if pattern&0x40 != 0 && (i+int(pattern))%7 == 0 {
				c = [sheetColumnCount]string{}
			}
			rows = append(rows, rowIn(i, c))
		}
		r.patch(fl, nil, rows)
	case 2: // headers-only PATCH
		fl := r.flags()
		headers := append(slicesClone(defaultHeaders[:4]), fuzzFifths[r.next()%byte(len(fuzzFifths))])
		if r.next()%8 == 0 {
			headers[r.next()%4] = "Changed"
		}
		r.patch(fl, headers, nil)
	case 3, 4: // PUT
		fl := r.flags()
		r.put(fl, r.cells())
	case 5: // DELETE
		fl := r.flags()
		r.del(fl, r.index())
	case 6: // compaction
		fl := r.flags()
		r.compact(fl)
	case 7: // dense read
		offset, limit := r.offset(), 1+int(r.next()%100)
		r.readDense(offset, limit)
	case 8: // sparse or filtered read, one page or all of them
		b := r.next()
		offset := r.offset()
		var addr, chain *string
		if b&1 != 0 {
			addr = ptr(fuzzAddresses[(b>>2)%4])
		}
		if b&2 != 0 {
			chain = ptr(fuzzChains[(b>>4)%3])
		}
		r.readSparse(offset, addr, chain, b&0x80 != 0)
	case 9: // the clock moves on
		r.at += int64(r.next()) * int64(time.Second/2)
	case 10: // a snapshot round trip: the index is rebuilt from the rows
		snap := r.fx.snapshot()
		var back Account
		if err := json.Unmarshal(snap, &back); err != nil {
			t.Fatal(err)
		}
		if again, err := json.Marshal(&back); err != nil || !bytes.Equal(snap, again) {
			t.Fatalf("snapshot round trip changed the account (%v)", err)
		}
		r.fx.a = &back
	case 11: // fill every blank slot, 100 slots per PATCH, so the Sheet is full
		pattern := int(r.next())
		for start := 0; start < sheetRowCount; start += 100 {
			var rows []SheetRowInput
			for i := start; i < start+100; i++ {
				if r.model.slots[i] == ([sheetColumnCount]string{}) {
					// Odd patterns use keys no PUT sends, so a PUT finds
					// no match; even ones mostly the PUT alphabet.
					c := [sheetColumnCount]string{fmt.Sprint("F", i), "btc", "f", "", ""}
					if pattern%2 == 0 && (i+pattern)%4 != 0 {
						c[0], c[1] = fuzzAddresses[1+(i+pattern)%3], fuzzChains[1+(i/3+pattern)%2]
					}
					rows = append(rows, rowIn(i, c))
				}
			}
			if len(rows) > 0 {
				r.patch(writeFlags{}, nil, rows)
			}
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

func (r *sheetFuzzRun) patch(fl writeFlags, headers []string, rows []SheetRowInput) {
	t := r.t
	p := &PatchSheet{SheetWrite: r.sw(fl), Headers: headers, Rows: rows}
	want := r.gate(fl)
	if want == nil {
		valid := len(rows) <= 100 && (headers != nil || len(rows) > 0)
		if headers != nil {
			valid = valid && len(headers) == 5 && headers[0] == "Address" && headers[1] == "Blockchain" && headers[2] == "Transaction ID" && headers[3] == "Date" && fifthValid(headers[4])
		}
		seen := map[int]bool{}
		for _, row := range rows {
			valid = valid && row.Index >= 0 && row.Index < sheetRowCount && !seen[row.Index] && cellsValid([sheetColumnCount]string(row.Cells))
			seen[row.Index] = true
		}
		if !valid {
			want = &expectation{code: CodeValidation}
		}
	}
	if want == nil {
		want = r.budget(fl)
	}
	res := r.exec(fl, p, want)
	if want != nil {
		return
	}
	r.accept(fl)
	if headers != nil {
		copy(r.model.headers[:], headers)
	}
	for _, row := range rows {
		r.model.slots[row.Index] = [sheetColumnCount]string(row.Cells)
	}
	v := bodyAs[SheetPatchedView](t, res)
	if v.Revision != r.model.rev || v.SpaceID != r.fx.id || [sheetColumnCount]string(v.Headers) != r.model.headers || len(v.UpdatedRows) != len(rows) {
		t.Fatalf("patch result %s", bodyJSON(t, v))
	}
	for i, row := range rows {
		if u := v.UpdatedRows[i]; u.Index != row.Index || len(u.Cells) != 5 || [sheetColumnCount]string(u.Cells) != [sheetColumnCount]string(row.Cells) {
			t.Fatalf("updated row %d: %s, want %d %q", i, bodyJSON(t, u), row.Index, row.Cells)
		}
	}
}

func (r *sheetFuzzRun) put(fl writeFlags, cells [sheetColumnCount]string) {
	t := r.t
	p := &PutSheetRow{SheetWrite: r.sw(fl), Cells: sl(cells)}
	want := r.gate(fl)
	index, created := -1, false
	if want == nil {
		switch {
		case !cellsValid(cells) || cells[0] == "" || cells[1] == "":
			want = &expectation{code: CodeValidation}
		default:
			var matches []int
			for i, c := range &r.model.slots {
				if c[0] == cells[0] && c[1] == cells[1] {
					matches = append(matches, i)
				}
			}
			switch len(matches) {
			case 0:
				created = true
				for i, c := range &r.model.slots {
					if c == ([sheetColumnCount]string{}) {
						index = i
						break
					}
				}
				if index < 0 {
					want = &expectation{code: CodeConflict, message: "Sheet has no empty row slots."}
				}
			case 1:
				index = matches[0]
			default:
				want = &expectation{code: CodeConflict, message: "More than one row has this address and chain."}
			}
		}
	}
	if want == nil {
		want = r.budget(fl)
	}
	res := r.exec(fl, p, want)
	if want != nil {
		return
	}
	r.accept(fl)
	r.model.slots[index] = cells
	v := bodyAs[SheetPutView](t, res)
	if v.Revision != r.model.rev || v.SpaceID != r.fx.id || v.Index != index || v.Created != created || len(v.Cells) != 5 || [sheetColumnCount]string(v.Cells) != cells {
		t.Fatalf("put result %s, want index %d created %v revision %d", bodyJSON(t, v), index, created, r.model.rev)
	}
}

func (r *sheetFuzzRun) del(fl writeFlags, index int) {
	t := r.t
	p := &DeleteSheetRow{SheetWrite: r.sw(fl), Index: index}
	want := r.gate(fl)
	shifted := 0
	if want == nil {
		if index < 0 || index >= sheetRowCount {
			want = &expectation{code: CodeValidation}
		} else {
			found := false
			for i := index; i < sheetRowCount; i++ {
				if r.model.slots[i] != ([sheetColumnCount]string{}) {
					found = true
					if i > index {
						shifted++
					}
				}
			}
			if !found {
				want = &expectation{code: CodeNotFound}
			}
		}
	}
	if want == nil {
		want = r.budget(fl)
	}
	res := r.exec(fl, p, want)
	if want != nil {
		return
	}
	r.accept(fl)
	copy(r.model.slots[index:], r.model.slots[index+1:])
	r.model.slots[sheetRowCount-1] = [sheetColumnCount]string{}
	v := bodyAs[SheetDeletedView](t, res)
	if v.Revision != r.model.rev || v.SpaceID != r.fx.id || v.DeletedIndex != index || v.ShiftedRows != shifted {
		t.Fatalf("delete result %s, want shifted %d revision %d", bodyJSON(t, v), shifted, r.model.rev)
	}
}

func (r *sheetFuzzRun) compact(fl writeFlags) {
	t := r.t
	p := &CompactSheet{SheetWrite: r.sw(fl)}
	want := r.gate(fl)
	var packed [sheetRowCount][sheetColumnCount]string
	n, moved := 0, 0
	for i, c := range &r.model.slots {
		if c != ([sheetColumnCount]string{}) {
			if i != n {
				moved++
			}
			packed[n] = c
			n++
		}
	}
	if want == nil && moved > 0 {
		want = r.budget(fl)
	}
	res := r.exec(fl, p, want)
	if want != nil {
		return
	}
	if moved > 0 {
		r.accept(fl)
		r.model.slots = packed
	}
	v := bodyAs[SheetCompactedView](t, res)
	if v.Revision != r.model.rev || v.SpaceID != r.fx.id || v.MovedRows != moved {
		t.Fatalf("compaction result %s, want moved %d revision %d", bodyJSON(t, v), moved, r.model.rev)
	}
}

func (r *sheetFuzzRun) query(q SheetQuery) SheetView {
	r.t.Helper()
	q.SpaceID = r.fx.id
	res := RunQuery(r.fx.a, r.fx.keyCred(r.fx.r), q)
	v := bodyAs[SheetView](r.t, res)
	checkSheetViewShape(r.t, v)
	if v.Revision != r.model.rev || [sheetColumnCount]string(v.Headers) != r.model.headers || v.SpaceID != r.fx.id {
		r.t.Fatalf("read shows revision %d headers %q, the model %d %q", v.Revision, v.Headers, r.model.rev, r.model.headers)
	}
	return v
}

func (r *sheetFuzzRun) readDense(offset, limit int) {
	t := r.t
	v := r.query(SheetQuery{Offset: offset, Limit: limit})
	end := min(offset+limit, sheetRowCount)
	if len(v.Rows) != end-offset {
		t.Fatalf("dense offset %d limit %d: %d rows", offset, limit, len(v.Rows))
	}
	for i, row := range v.Rows {
		if row.Index != offset+i || [sheetColumnCount]string(row.Cells) != r.model.slots[offset+i] {
			t.Fatalf("dense slot %d: %s, the model %q", offset+i, bodyJSON(t, row), r.model.slots[offset+i])
		}
	}
	want := "null"
	if end < sheetRowCount {
		want = fmt.Sprint(end)
	}
	if fmtNext(v.NextOffset) != want {
		t.Fatalf("dense offset %d limit %d: next_offset %s, want %s", offset, limit, fmtNext(v.NextOffset), want)
	}
}

// sparse is the model's page: matching nonblank slots from offset, at most
// 200 rows and 256 KiB of cell bytes (the first row always fits), and the
// first matching slot left out.
func (m *sheetModel) sparse(offset int, addr, chain *string) ([]int, *int) {
	idx := []int{}
	size := 0
	for i := offset; i < sheetRowCount; i++ {
		c := m.slots[i]
		if c == ([sheetColumnCount]string{}) || (addr != nil && c[0] != *addr) || (chain != nil && c[1] != *chain) {
			continue
		}
		n := 0
		for _, s := range c {
			n += len(s)
		}
		if len(idx) == 200 || (len(idx) > 0 && size+n > 256<<10) {
			return idx, &i
		}
		size += n
		idx = append(idx, i)
	}
	return idx, nil
}

func (r *sheetFuzzRun) readSparse(offset int, addr, chain *string, all bool) {
	t := r.t
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("sparse paging does not end")
		}
		v := r.query(SheetQuery{Offset: offset, Limit: 1 + offset%100, Sparse: true, Address: addr, Chain: chain})
		want, next := r.model.sparse(offset, addr, chain)
		if !intsEqual(indexesOf(v.Rows), want) || fmtNext(v.NextOffset) != fmtNext(next) {
			t.Fatalf("sparse offset %d filters %s/%s: %v next %s, the model %v next %s", offset, fmtStr(addr), fmtStr(chain),
				indexesOf(v.Rows), fmtNext(v.NextOffset), want, fmtNext(next))
		}
		for _, row := range v.Rows {
			if [sheetColumnCount]string(row.Cells) != r.model.slots[row.Index] {
				t.Fatalf("sparse row %d: %q, the model %q", row.Index, row.Cells, r.model.slots[row.Index])
			}
		}
		if !all || v.NextOffset == nil {
			return
		}
		offset = *v.NextOffset
	}
}

// verify checks the Sheet against its invariants and the model.
func (r *sheetFuzzRun) verify() {
	t := r.t
	s := r.fx.sheet()
	s.checkInvariants() // panics on a corrupt Sheet
	if s.Revision < r.lastRev {
		t.Fatalf("revision went down from %d to %d", r.lastRev, s.Revision)
	}
	r.lastRev = s.Revision
	if s.Revision != r.model.rev || s.Headers != r.model.headers {
		t.Fatalf("sheet revision %d headers %q, the model %d %q", s.Revision, s.Headers, r.model.rev, r.model.headers)
	}
	idx := s.index()
	pos := 0
	for i, want := range &r.model.slots {
		var got [sheetColumnCount]string
		if pos < len(s.Rows) && s.Rows[pos].Index == i {
			row := s.Rows[pos]
			got = row.Cells
			pos++
			// The row is listed once, under its own key.
			n := 0
			for _, x := range idx[row.key()] {
				if x == row {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("row %d is in the index %d times", i, n)
			}
		}
		if got != want {
			t.Fatalf("slot %d holds %q, the model %q", i, got, want)
		}
	}
	if pos != len(s.Rows) {
		t.Fatalf("sheet holds rows outside 0-999: %d of %d checked", pos, len(s.Rows))
	}
	total := 0
	for _, rows := range idx {
		total += len(rows)
	}
	if total != len(s.Rows) {
		t.Fatalf("index holds %d rows, the sheet %d", total, len(s.Rows))
	}
}
