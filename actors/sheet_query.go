package actors

import "slices"

// SheetQuery is GET /bookmark-spaces/{space_id}/sheet. The edge has parsed
// and bounded the parameters; Address and Chain, when set, are exact
// filters on the first two cells and imply the sparse view.
type SheetQuery struct {
	SpaceID string
	Offset  int
	Limit   int
	Sparse  bool
	Address *string
	Chain   *string
}

// SheetView is the Sheet shape of the spec.
type SheetView struct {
	SpaceID     string         `json:"space_id"`
	Headers     []string       `json:"headers"`
	Revision    int64          `json:"revision"`
	RowCount    int            `json:"row_count"`
	ColumnCount int            `json:"column_count"`
	Rows        []SheetRowView `json:"rows"`
	NextOffset  *int           `json:"next_offset"`
}

func (q SheetQuery) answer(a *Account, who Principal, capability Level, _ int64) (SheetView, *Error) {
	s, err := a.sheetSpace(q.SpaceID, who, capability, false)
	if err != nil {
		return SheetView{}, err
	}
	sheet := s.Sheet
	v := SheetView{SpaceID: s.ID, Headers: sheet.headersView(), Revision: sheet.Revision, RowCount: sheetRowCount, ColumnCount: sheetColumnCount}
	if q.Sparse || q.Address != nil || q.Chain != nil {
		v.Rows, v.NextOffset = sheet.sparsePage(q.Offset, q.matcher())
	} else {
		v.Rows, v.NextOffset = sheet.densePage(q.Offset, q.Limit)
	}
	return v, nil
}

// matcher returns the rows a filtered read walks: for both filters, the
// index's rows for that key in slot order; otherwise every stored row, with
// a per-row test for a single filter.
func (q SheetQuery) matcher() rowSource {
	if q.Address != nil && q.Chain != nil {
		return rowSource{byKey: &sheetKey{*q.Address, *q.Chain}}
	}
	return rowSource{address: q.Address, chain: q.Chain}
}

type rowSource struct {
	byKey          *sheetKey
	address, chain *string
}

func (m rowSource) match(r *SheetRow) bool {
	return (m.address == nil || r.Cells[0] == *m.address) && (m.chain == nil || r.Cells[1] == *m.chain)
}

// densePage returns limit slots from offset, blanks included.
func (s *Sheet) densePage(offset, limit int) ([]SheetRowView, *int) {
	end := min(offset+limit, sheetRowCount)
	rows := make([]SheetRowView, 0, end-offset)
	pos, _ := s.find(offset)
	for i := offset; i < end; i++ {
		if pos < len(s.Rows) && s.Rows[pos].Index == i {
			rows = append(rows, s.Rows[pos].view())
			pos++
		} else {
			rows = append(rows, SheetRowView{Index: i, Cells: make([]string, sheetColumnCount)})
		}
	}
	if end >= sheetRowCount {
		return rows, nil
	}
	return rows, &end
}

// sparsePage returns matching stored rows from slot offset on, at most
// sheetSparseRowsMax rows and sheetSparseBytesMax bytes of cell data, and
// the index of the first matching row left out (nil when none is).
func (s *Sheet) sparsePage(offset int, src rowSource) ([]SheetRowView, *int) {
	var candidates []*SheetRow
	if src.byKey != nil {
		candidates = slices.Clone(s.index()[*src.byKey])
		slices.SortFunc(candidates, func(x, y *SheetRow) int { return x.Index - y.Index })
		from, _ := slices.BinarySearchFunc(candidates, offset, func(r *SheetRow, i int) int { return r.Index - i })
		candidates = candidates[from:]
	} else {
		pos, _ := s.find(offset)
		candidates = s.Rows[pos:]
	}
	rows := []SheetRowView{}
	size := 0
	for _, r := range candidates {
		if !src.match(r) {
			continue
		}
		rowBytes := 0
		for _, c := range r.Cells {
			rowBytes += len(c)
		}
		if len(rows) == sheetSparseRowsMax || (len(rows) > 0 && size+rowBytes > sheetSparseBytesMax) {
			next := r.Index
			return rows, &next
		}
		size += rowBytes
		rows = append(rows, r.view())
	}
	return rows, nil
}

// view renders a row. Views never alias the state: the edge encodes them
// after the actor has moved on to the next command.
func (r *SheetRow) view() SheetRowView {
	cells := r.Cells
	return SheetRowView{Index: r.Index, Cells: cells[:]}
}

func (s *Sheet) headersView() []string {
	h := s.Headers
	return h[:]
}
