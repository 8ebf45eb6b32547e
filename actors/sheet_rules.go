package actors

import (
	"unicode/utf8"
)

// Sheet write rules. Every write needs a write-capable key, write on the
// Space and the Sheet's current revision; an accepted write bumps the
// revision once and, when EnforceBudget is set (an agent's write on a
// server with the spec's limits), spends one unit of the account's
// Sheet-write budget.

// The spec's exact CONFLICT messages; clients are told not to branch on them.
const (
	sheetDuplicateMatchMessage = "More than one row has this address and chain."
	sheetFullMessage           = "Sheet has no empty row slots."
)

// SheetRowInput is one row of a PATCH as the client sent it.
type SheetRowInput struct {
	Index int      `json:"index"`
	Cells []string `json:"cells"`
}

// sheetCells checks a row's cells: exactly five strings, each at most
// sheetCellCharsMax characters of plain text (isPlainText) when the write
// asks for plain text, as every write since issue 13 does.
func (w SheetWrite) sheetCells(cells []string) ([sheetColumnCount]string, *Error) {
	var out [sheetColumnCount]string
	if len(cells) != sheetColumnCount {
		return out, Errorf(CodeValidation, "cells must be exactly %d strings", sheetColumnCount)
	}
	for i, c := range cells {
		if !utf8.ValidString(c) || charCount(c) > sheetCellCharsMax || w.PlainTextCells && !isPlainText(c) {
			return out, Errorf(CodeValidation, "cell %d must be at most %d characters of plain text (printable characters, newline and tab)", i, sheetCellCharsMax)
		}
		out[i] = c
	}
	return out, nil
}

func sheetIndex(index int) *Error {
	if index < 0 || index >= sheetRowCount {
		return Errorf(CodeValidation, "index must be 0 to %d", sheetRowCount-1)
	}
	return nil
}

// sheetSpace finds the Sheet of a Space the principal may read (write when
// forWrite). A Space that is not a Sheet Space has no Sheet: 404.
func (a *Account) sheetSpace(id string, who Principal, capability Level, forWrite bool) (*Space, *Error) {
	var s *Space
	var err *Error
	if forWrite {
		_, s, err = a.writableSpace(id, who, capability)
	} else {
		_, s, err = a.readableSpace(id, who, capability)
	}
	if err != nil {
		return nil, err
	}
	if s.Type != SpaceSheet || s.Sheet == nil {
		return nil, Errorf(CodeNotFound, "this Space is not a Sheet Space")
	}
	return s, nil
}

// SheetWrite is what every Sheet write carries besides its own fields.
// The edge decides the two flags and the command carries them, so that
// every replica, and every replay of the log, decides alike:
//
//   - EnforceBudget: the write spends and meets the account's Sheet-write
//     budget. The edge sets it for an agent's write on a server running
//     with the spec's limits; the budget is the agents', so an owner's
//     write does not carry it (since issue 13; older entries did).
//   - PlainTextCells: the cells must be plain text. Every edge sets it
//     since issue 13; older entries lack it and are applied as they were
//     then, when any valid UTF-8 was taken, so a replayed log reaches the
//     state it reached.
type SheetWrite struct {
	SpaceID          string `json:"space_id"`
	ExpectedRevision int64  `json:"expected_revision"`
	EnforceBudget    bool   `json:"enforce_budget,omitempty"`
	PlainTextCells   bool   `json:"plain_text_cells,omitempty"`
}

// begin runs the checks every Sheet write shares, in order: access, then the
// revision. The budget is checked by each rule once it knows the write
// changes something.
func (w SheetWrite) begin(a *Account, c *Command, capability Level) (*Space, *Error) {
	s, err := a.sheetSpace(w.SpaceID, c.Principal, capability, true)
	if err != nil {
		return nil, err
	}
	if w.ExpectedRevision != s.Sheet.Revision {
		return nil, errStaleVersion
	}
	return s, nil
}

func (w SheetWrite) budget(a *Account, c *Command) *Error {
	if !w.EnforceBudget {
		return nil
	}
	return a.sheetBudgetCheck(c.At)
}

// commit bumps the revision, spends the budget and records the change.
func (w SheetWrite) commit(a *Account, c *Command, s *Space) {
	s.Sheet.Revision++
	if w.EnforceBudget {
		a.sheetBudgetSpend(c.At)
	}
	a.recordEvent(c, EventCardsChanged, ResourceRef{Kind: ResourceSpace, ID: s.ID})
}

// PatchSheet writes headers and/or rows by index.
type PatchSheet struct {
	SheetWrite
	Headers []string        `json:"headers,omitempty"`
	Rows    []SheetRowInput `json:"rows,omitempty"`
}

func (*PatchSheet) Kind() Kind { return KindPatchSheet }

func (p *PatchSheet) validate() (headers *[sheetColumnCount]string, rows map[int][sheetColumnCount]string, err *Error) {
	if p.Headers == nil && len(p.Rows) == 0 {
		return nil, nil, Errorf(CodeValidation, "send headers, rows (1 to %d) or both", sheetPatchRowsMax)
	}
	if p.Headers != nil {
		h, err := sheetHeaders(p.Headers)
		if err != nil {
			return nil, nil, err
		}
		headers = &h
	}
	if len(p.Rows) > sheetPatchRowsMax {
		return nil, nil, Errorf(CodeValidation, "rows must hold 1 to %d entries", sheetPatchRowsMax)
	}
	rows = make(map[int][sheetColumnCount]string, len(p.Rows))
	for _, r := range p.Rows {
		if err := sheetIndex(r.Index); err != nil {
			return nil, nil, err
		}
		if _, dup := rows[r.Index]; dup {
			return nil, nil, Errorf(CodeValidation, "row index %d appears more than once", r.Index)
		}
		cells, err := p.sheetCells(r.Cells)
		if err != nil {
			return nil, nil, err
		}
		rows[r.Index] = cells
	}
	return headers, rows, nil
}

// sheetHeaders checks a full header array: the first four unchanged, the
// fifth 1 to 60 printable characters.
func sheetHeaders(h []string) ([sheetColumnCount]string, *Error) {
	var out [sheetColumnCount]string
	if len(h) != sheetColumnCount {
		return out, Errorf(CodeValidation, "headers must be the full array of %d strings", sheetColumnCount)
	}
	for i, locked := range sheetLockedHeaders {
		if h[i] != locked {
			return out, Errorf(CodeValidation, "the first four headings are locked: %q, %q, %q, %q", sheetLockedHeaders[0], sheetLockedHeaders[1], sheetLockedHeaders[2], sheetLockedHeaders[3])
		}
	}
	fifth := h[sheetColumnCount-1]
	if !utf8.ValidString(fifth) || fifth == "" || charCount(fifth) > sheetHeaderCharsMax || !isPrintable(fifth) {
		return out, Errorf(CodeValidation, "the fifth heading must be 1 to %d printable characters", sheetHeaderCharsMax)
	}
	copy(out[:], h)
	return out, nil
}

func (p *PatchSheet) apply(a *Account, c *Command, capability Level) Result {
	s, err := p.begin(a, c, capability)
	if err != nil {
		return fail(err)
	}
	headers, rows, err := p.validate()
	if err != nil {
		return fail(err)
	}
	if err := p.budget(a, c); err != nil {
		return fail(err)
	}
	sheet := s.Sheet
	if headers != nil {
		sheet.Headers = *headers
	}
	updated := make([]SheetRowView, 0, len(p.Rows))
	for _, r := range p.Rows {
		cells := rows[r.Index]
		sheet.set(r.Index, cells)
		updated = append(updated, SheetRowView{Index: r.Index, Cells: cells[:]})
	}
	p.commit(a, c, s)
	return ok(SheetPatchedView{SpaceID: s.ID, Headers: sheet.headersView(), Revision: sheet.Revision, UpdatedRows: updated})
}

// SheetRowView is a row as the API shows it.
type SheetRowView struct {
	Index int      `json:"index"`
	Cells []string `json:"cells"`
}

// SheetPatchedView is the body of a Sheet PATCH.
type SheetPatchedView struct {
	SpaceID     string         `json:"space_id"`
	Headers     []string       `json:"headers"`
	Revision    int64          `json:"revision"`
	UpdatedRows []SheetRowView `json:"updated_rows"`
}

// PutSheetRow upserts a row by its Address + Blockchain: the unique exact
// match is updated, or else the first empty slot is used.
type PutSheetRow struct {
	SheetWrite
	Cells []string `json:"cells"`
}

func (*PutSheetRow) Kind() Kind { return KindPutSheetRow }

func (p *PutSheetRow) apply(a *Account, c *Command, capability Level) Result {
	s, err := p.begin(a, c, capability)
	if err != nil {
		return fail(err)
	}
	cells, err := p.sheetCells(p.Cells)
	if err != nil {
		return fail(err)
	}
	if cells[0] == "" || cells[1] == "" {
		return fail(Errorf(CodeValidation, "the Address and Blockchain cells must both be nonempty"))
	}
	sheet := s.Sheet
	matches := sheet.index()[sheetKey{cells[0], cells[1]}]
	index := -1
	switch {
	case len(matches) > 1:
		return fail(Errorf(CodeConflict, sheetDuplicateMatchMessage))
	case len(matches) == 1:
		index = matches[0].Index
	default:
		if index = sheet.firstEmptySlot(); index < 0 {
			return fail(Errorf(CodeConflict, sheetFullMessage))
		}
	}
	if err := p.budget(a, c); err != nil {
		return fail(err)
	}
	sheet.set(index, cells)
	p.commit(a, c, s)
	return ok(SheetPutView{SpaceID: s.ID, Revision: sheet.Revision, Index: index, Created: len(matches) == 0, Cells: cells[:]})
}

// SheetPutView is the body of a Sheet PUT.
type SheetPutView struct {
	SpaceID  string   `json:"space_id"`
	Revision int64    `json:"revision"`
	Index    int      `json:"index"`
	Created  bool     `json:"created"`
	Cells    []string `json:"cells"`
}

// DeleteSheetRow clears the slot at Index and moves every later stored row
// up by one slot.
type DeleteSheetRow struct {
	SheetWrite
	Index int `json:"index"`
}

func (*DeleteSheetRow) Kind() Kind { return KindDeleteSheetRow }

func (p *DeleteSheetRow) apply(a *Account, c *Command, capability Level) Result {
	s, err := p.begin(a, c, capability)
	if err != nil {
		return fail(err)
	}
	if err := sheetIndex(p.Index); err != nil {
		return fail(err)
	}
	sheet := s.Sheet
	if pos, _ := sheet.find(p.Index); pos == len(sheet.Rows) {
		return fail(Errorf(CodeNotFound, "nothing to delete or shift at or after index %d", p.Index))
	}
	if err := p.budget(a, c); err != nil {
		return fail(err)
	}
	shifted, _ := sheet.deleteAndShift(p.Index)
	p.commit(a, c, s)
	return ok(SheetDeletedView{SpaceID: s.ID, Revision: sheet.Revision, DeletedIndex: p.Index, ShiftedRows: shifted})
}

// SheetDeletedView is the body of a Sheet DELETE.
type SheetDeletedView struct {
	SpaceID      string `json:"space_id"`
	Revision     int64  `json:"revision"`
	DeletedIndex int    `json:"deleted_index"`
	ShiftedRows  int    `json:"shifted_rows"`
}

// CompactSheet moves stored rows to the first slots, keeping their order.
// When the Sheet is already compact nothing changes: not the revision, not
// the budget.
type CompactSheet struct {
	SheetWrite
}

func (*CompactSheet) Kind() Kind { return KindCompactSheet }

func (p *CompactSheet) apply(a *Account, c *Command, capability Level) Result {
	s, err := p.begin(a, c, capability)
	if err != nil {
		return fail(err)
	}
	sheet := s.Sheet
	// Rows are in slot order, so the Sheet is compact exactly when the
	// last stored row sits in slot len-1.
	if n := len(sheet.Rows); n == 0 || sheet.Rows[n-1].Index == n-1 {
		return ok(SheetCompactedView{SpaceID: s.ID, Revision: sheet.Revision, MovedRows: 0})
	}
	if err := p.budget(a, c); err != nil {
		return fail(err)
	}
	moved := sheet.compact()
	p.commit(a, c, s)
	return ok(SheetCompactedView{SpaceID: s.ID, Revision: sheet.Revision, MovedRows: moved})
}

// SheetCompactedView is the body of a Sheet compaction.
type SheetCompactedView struct {
	SpaceID   string `json:"space_id"`
	Revision  int64  `json:"revision"`
	MovedRows int    `json:"moved_rows"`
}
