package actors

import (
	"slices"
	"sort"
)

// Sheet is the grid of a sheet Space: 5 text columns and 1,000 fixed row
// slots. Only stored (nonempty) rows are kept, in slot order, so a Sheet
// costs what it holds. byKey indexes rows by Address + Blockchain (the
// first two cells) for upserts and filters; it holds row pointers, so
// shifting indexes never invalidates it. It is derived and rebuilt after a
// snapshot restore.
type Sheet struct {
	Headers  [sheetColumnCount]string `json:"headers"`
	Revision int64                    `json:"revision"`
	Rows     []*SheetRow              `json:"rows"`

	byKey map[sheetKey][]*SheetRow
}

// SheetRow is one stored row slot.
type SheetRow struct {
	Index int                      `json:"index"`
	Cells [sheetColumnCount]string `json:"cells"`
}

// sheetKey is a row's Address + Blockchain, matched exactly.
type sheetKey struct{ address, chain string }

func (r *SheetRow) key() sheetKey { return sheetKey{r.Cells[0], r.Cells[1]} }

func (r *SheetRow) blank() bool { return r.Cells == [sheetColumnCount]string{} }

const (
	sheetColumnCount    = 5
	sheetRowCount       = 1000
	sheetCellCharsMax   = 512
	sheetHeaderCharsMax = 60
	sheetPatchRowsMax   = 100
	sheetSparseRowsMax  = 200
	sheetSparseBytesMax = 256 << 10
)

// The Sheet bounds the edge sizes request bodies from.
const (
	SheetColumnCount    = sheetColumnCount
	SheetCellCharsMax   = sheetCellCharsMax
	SheetHeaderCharsMax = sheetHeaderCharsMax
	SheetPatchRowsMax   = sheetPatchRowsMax
)

// sheetLockedHeaders are the first four headings, which never change.
var sheetLockedHeaders = [sheetColumnCount - 1]string{"Address", "Blockchain", "Transaction ID", "Date"}

// sheetDefaultFifthHeader is the fifth heading of a new Sheet.
const sheetDefaultFifthHeader = "Notes"

func newSheet() *Sheet {
	s := &Sheet{Rows: []*SheetRow{}}
	copy(s.Headers[:], sheetLockedHeaders[:])
	s.Headers[sheetColumnCount-1] = sheetDefaultFifthHeader
	return s
}

// hasStoredRows reports whether any slot holds content; such a Sheet Space
// cannot be deleted.
func (s *Sheet) hasStoredRows() bool { return s != nil && len(s.Rows) > 0 }

// index returns the Address + Blockchain index, building it on first use.
func (s *Sheet) index() map[sheetKey][]*SheetRow {
	if s.byKey == nil {
		s.byKey = make(map[sheetKey][]*SheetRow, len(s.Rows))
		for _, r := range s.Rows {
			s.byKey[r.key()] = append(s.byKey[r.key()], r)
		}
	}
	return s.byKey
}

func (s *Sheet) indexAdd(r *SheetRow) {
	idx := s.index()
	idx[r.key()] = append(idx[r.key()], r)
}

func (s *Sheet) indexRemove(r *SheetRow) {
	idx := s.index()
	k := r.key()
	rows := slices.DeleteFunc(idx[k], func(x *SheetRow) bool { return x == r })
	if len(rows) == 0 {
		delete(idx, k)
	} else {
		idx[k] = rows
	}
}

// find returns the position in Rows of the first stored row at or after
// slot index, and whether that row sits exactly at index.
func (s *Sheet) find(index int) (int, bool) {
	pos := sort.Search(len(s.Rows), func(i int) bool { return s.Rows[i].Index >= index })
	return pos, pos < len(s.Rows) && s.Rows[pos].Index == index
}

// row returns the stored row at slot index, or nil for a blank slot.
func (s *Sheet) row(index int) *SheetRow {
	if pos, found := s.find(index); found {
		return s.Rows[pos]
	}
	return nil
}

// set writes cells into slot index: five blank cells empty the slot.
func (s *Sheet) set(index int, cells [sheetColumnCount]string) {
	s.index() // build the index from the rows as they are, before they change
	pos, found := s.find(index)
	blank := cells == [sheetColumnCount]string{}
	switch {
	case found && blank:
		s.indexRemove(s.Rows[pos])
		s.Rows = slices.Delete(s.Rows, pos, pos+1)
	case found:
		s.indexRemove(s.Rows[pos])
		s.Rows[pos].Cells = cells
		s.indexAdd(s.Rows[pos])
	case !blank:
		r := &SheetRow{Index: index, Cells: cells}
		s.Rows = slices.Insert(s.Rows, pos, r)
		s.indexAdd(r)
	}
}

// firstEmptySlot returns the lowest blank slot, or -1 when all are stored.
// Rows are in slot order, so the first gap is found without scanning past it.
func (s *Sheet) firstEmptySlot() int {
	for i, r := range s.Rows {
		if r.Index != i {
			return i
		}
	}
	if len(s.Rows) < sheetRowCount {
		return len(s.Rows)
	}
	return -1
}

// deleteAndShift clears slot index and moves every later stored row up by
// one slot. It returns how many rows moved, and false when there was
// nothing to clear or move.
func (s *Sheet) deleteAndShift(index int) (shifted int, changed bool) {
	pos, found := s.find(index)
	if found {
		s.indexRemove(s.Rows[pos])
		s.Rows = slices.Delete(s.Rows, pos, pos+1)
	}
	for _, r := range s.Rows[pos:] {
		r.Index--
	}
	shifted = len(s.Rows) - pos
	return shifted, found || shifted > 0
}

// compact moves stored rows to the first slots, keeping their order, and
// returns how many rows moved.
func (s *Sheet) compact() int {
	moved := 0
	for i, r := range s.Rows {
		if r.Index != i {
			r.Index = i
			moved++
		}
	}
	return moved
}

// checkInvariants panics when the Sheet is corrupt: a programmer error that
// must not reach a snapshot. Tests and the fuzzer call it after every step.
func (s *Sheet) checkInvariants() {
	if s.Revision < 0 {
		panic("actors: sheet revision below zero")
	}
	for i, r := range s.Rows {
		if r.Index < 0 || r.Index >= sheetRowCount {
			panic("actors: sheet row index out of range")
		}
		if i > 0 && s.Rows[i-1].Index >= r.Index {
			panic("actors: sheet rows out of slot order")
		}
		if r.blank() {
			panic("actors: blank sheet row stored")
		}
	}
	count := 0
	for k, rows := range s.index() {
		for _, r := range rows {
			if r.key() != k || !slices.Contains(s.Rows, r) {
				panic("actors: sheet index does not match its rows")
			}
		}
		count += len(rows)
	}
	if count != len(s.Rows) {
		panic("actors: sheet index does not cover its rows")
	}
}
