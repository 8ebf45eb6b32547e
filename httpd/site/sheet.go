package site

import (
	"slices"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The site's Sheet editor. The page (sheet.html) is a shell; sheet.js
// draws only the rows in view and talks to the JSON routes below, which
// run the API's own Sheet commands and queries for the session.
//
// A Sheet has one revision for all of its 1,000 slots, so a write sent
// with the revision the page last saw is refused whenever anyone wrote
// anywhere in the Sheet since. The editor would then refuse nearly every
// save while an agent is busy elsewhere in the Sheet. Instead, a refused
// write reads the slot the owner edited: if it still holds what the page
// showed (the base the page sends along), the write is sent again with the
// Sheet's current revision; if the slot changed, nothing is written and
// the answer is a conflict carrying the slot as it is now. The revision
// still makes each attempt a compare-and-set, so nothing is ever
// overwritten that the owner did not see.

// sheetRebaseAttempts bounds the retries of one write against a Sheet that
// keeps moving; past it the owner gets a conflict to look at.
const sheetRebaseAttempts = 4

func (s *Site) registerSheet(r Router) {
	r.GET("/spaces/{space_id}/sheet", s.signedIn(s.sheetPage))
	r.GET("/spaces/{space_id}/sheet.json", s.signedIn(s.sheetData))
	r.POST("/spaces/{space_id}/sheet/rows/{index}", s.signedIn(s.sheetSaveRow))
	r.POST("/spaces/{space_id}/sheet/rows/{index}/delete", s.signedIn(s.sheetDeleteRow))
	r.POST("/spaces/{space_id}/sheet/headers", s.signedIn(s.sheetSaveHeading))
	r.POST("/spaces/{space_id}/sheet/compact", s.signedIn(s.sheetCompact))
}

// sheetPageData is the editor page's: the Space, and the Sheet's headers
// for the column labels before the rows arrive.
type sheetPageData struct {
	Space   actors.SpaceView
	Headers []string
}

func (s *Site) sheetPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	r := s.reads(sess)
	space := read(r, actors.GetSpaceQuery{SpaceID: id})
	sheet := read(r, actors.SheetQuery{SpaceID: id, Offset: 0, Limit: 1})
	_, page := r.layout("spaces")
	if r.failed(ctx) {
		return
	}
	page.Title = space.Space.Name + " · Sheet"
	page.Data = sheetPageData{Space: space.Space, Headers: sheet.Headers}
	s.renderPage(ctx, fasthttp.StatusOK, "sheet", page)
}

// SheetSnapshot is what sheet.json answers: the stored rows (blank slots
// left out) of one revision, all of them or those matching the filters.
type SheetSnapshot struct {
	Revision int64                 `json:"revision"`
	Headers  []string              `json:"headers"`
	RowCount int                   `json:"row_count"`
	Filtered bool                  `json:"filtered"`
	Rows     []actors.SheetRowView `json:"rows"`
}

// sheetData answers the whole Sheet in one read: a dense query of every
// slot is one actor query, so one revision. With an address or chain
// filter it walks the API's filtered pages and starts over when the
// revision moves between pages, as the spec tells agents to.
func (s *Site) sheetData(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	q := actors.SheetQuery{SpaceID: id, Limit: 1000}
	if a := string(ctx.QueryArgs().Peek("address")); a != "" {
		q.Address = &a
	}
	if c := string(ctx.QueryArgs().Peek("chain")); c != "" {
		q.Chain = &c
	}
	snap, err := s.readSheet(sess, q)
	siteHeaders(ctx)
	if err != nil {
		s.edge.WriteError(ctx, err)
		return
	}
	s.edge.WriteJSON(ctx, fasthttp.StatusOK, snap)
}

func (s *Site) readSheet(sess *siteSession, q actors.SheetQuery) (SheetSnapshot, *actors.Error) {
	filtered := q.Address != nil || q.Chain != nil
	for attempt := 0; attempt < sheetRebaseAttempts; attempt++ {
		snap := SheetSnapshot{Filtered: filtered, Rows: []actors.SheetRowView{}}
		q.Offset = 0
		for {
			res, err := ask(s, sess, q)
			if err != nil {
				return snap, err
			}
			v := res
			if q.Offset > 0 && v.Revision != snap.Revision {
				break // the Sheet changed between pages: read it again
			}
			snap.Revision, snap.Headers, snap.RowCount = v.Revision, v.Headers, v.RowCount
			for _, r := range v.Rows {
				if !blankCells(r.Cells) {
					snap.Rows = append(snap.Rows, r)
				}
			}
			if v.NextOffset == nil || !filtered {
				return snap, nil
			}
			q.Offset = *v.NextOffset
		}
	}
	return SheetSnapshot{}, actors.Errorf(actors.CodeConflict, "the Sheet kept changing while it was read; try again")
}

func blankCells(cells []string) bool {
	for _, c := range cells {
		if c != "" {
			return false
		}
	}
	return true
}

// sheetConflict is the answer to a write whose slot changed since the page
// showed it: nothing was written, and here is the slot now.
type sheetConflict struct {
	Code     actors.Code `json:"code"`
	Error    string      `json:"error"`
	Index    int         `json:"index"`
	Current  []string    `json:"current"`
	Headers  []string    `json:"headers"`
	Revision int64       `json:"revision"`
}

// sheetForm reads the fields every editor write sends: the revision the
// page last saw and, for a slot, the cells it showed there (b0 to b4).
func sheetForm(ctx *fasthttp.RequestCtx) (rev int64, base []string, err *actors.Error) {
	rev, perr := strconv.ParseInt(formValue(ctx, "expected_revision"), 10, 64)
	if perr != nil {
		return 0, nil, actors.Errorf(actors.CodeValidation, "expected_revision must be an integer")
	}
	return rev, sheetCellsOf(ctx, "b"), nil
}

// sheetCellsOf reads the five cells prefix0 to prefix4 of the form.
func sheetCellsOf(ctx *fasthttp.RequestCtx, prefix string) []string {
	cells := make([]string, 5)
	for i := range cells {
		cells[i] = formValue(ctx, prefix+strconv.Itoa(i))
	}
	return cells
}

func sheetIndexParam(ctx *fasthttp.RequestCtx) (int, *actors.Error) {
	i, err := strconv.Atoi(pathParam(ctx, "index"))
	if err != nil || i < 0 || i > 999 {
		return 0, actors.Errorf(actors.CodeValidation, "index must be an integer from 0 to 999")
	}
	return i, nil
}

// sheetSlot reads one slot and the headers, with the Sheet's revision.
func (s *Site) sheetSlot(sess *siteSession, id string, index int) (actors.SheetView, *actors.Error) {
	res, err := ask(s, sess, actors.SheetQuery{SpaceID: id, Offset: index, Limit: 1})
	if err != nil {
		return actors.SheetView{}, err
	}
	return res, nil
}

// onBase runs write with rev and, while it is refused as stale and the
// slot (or, for index -1, the fifth heading) still holds base, again with
// the Sheet's current revision. It returns the write's answer, or the
// conflict to show when the slot changed.
func (s *Site) onBase(sess *siteSession, id string, index int, rev int64, base []string, write func(rev int64) (actors.Result, *actors.Error)) (actors.Result, *sheetConflict, *actors.Error) {
	for attempt := 0; ; attempt++ {
		res, err := write(rev)
		if err == nil || err.Code != actors.CodeStaleVersion {
			return res, nil, err
		}
		now, qerr := s.sheetSlot(sess, id, max(index, 0))
		if qerr != nil {
			return actors.Result{}, nil, qerr
		}
		current := now.Headers[4:]
		if index >= 0 {
			current = now.Rows[0].Cells
		}
		if !slices.Equal(current, base) || attempt+1 == sheetRebaseAttempts {
			return actors.Result{}, &sheetConflict{Code: actors.CodeStaleVersion, Index: index, Current: current, Headers: now.Headers, Revision: now.Revision,
				Error: "this changed after the page showed it (an agent, or another page); nothing was written. It now holds what is shown; what you typed is kept."}, nil
		}
		rev = now.Revision
	}
}

// answerSheetWrite writes the answer of an editor write.
func (s *Site) answerSheetWrite(ctx *fasthttp.RequestCtx, res actors.Result, conflict *sheetConflict, err *actors.Error) {
	siteHeaders(ctx)
	switch {
	case err != nil:
		s.edge.WriteError(ctx, err)
	case conflict != nil:
		s.edge.WriteJSON(ctx, fasthttp.StatusConflict, conflict)
	default:
		s.edge.WriteJSON(ctx, fasthttp.StatusOK, res.Body)
	}
}

// sheetSaveRow writes one slot's five cells (five blanks empty it).
func (s *Site) sheetSaveRow(ctx *fasthttp.RequestCtx, sess *siteSession) {
	cells := sheetCellsOf(ctx, "c")
	s.slotWrite(ctx, sess, func(w actors.SheetWrite, index int) actors.Payload {
		return &actors.PatchSheet{SheetWrite: w, Rows: []actors.SheetRowInput{{Index: index, Cells: cells}}}
	})
}

// sheetDeleteRow deletes a slot, moving every later stored row up one,
// when the slot still holds what the page showed.
func (s *Site) sheetDeleteRow(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.slotWrite(ctx, sess, func(w actors.SheetWrite, index int) actors.Payload {
		return &actors.DeleteSheetRow{SheetWrite: w, Index: index}
	})
}

// slotWrite runs the write build makes of the slot in the path, on the
// base the form sent (onBase), and answers it.
func (s *Site) slotWrite(ctx *fasthttp.RequestCtx, sess *siteSession, build func(w actors.SheetWrite, index int) actors.Payload) {
	id := pathParam(ctx, "space_id")
	index, err := sheetIndexParam(ctx)
	if err != nil {
		s.answerSheetWrite(ctx, actors.Result{}, nil, err)
		return
	}
	rev, base, err := sheetForm(ctx)
	if err != nil {
		s.answerSheetWrite(ctx, actors.Result{}, nil, err)
		return
	}
	res, conflict, err := s.onBase(sess, id, index, rev, base, func(rev int64) (actors.Result, *actors.Error) {
		return s.siteWrite(sess, build(siteSheetWrite(id, rev), index))
	})
	s.answerSheetWrite(ctx, res, conflict, err)
}

// sheetSaveHeading writes the fifth heading; the first four are fixed.
func (s *Site) sheetSaveHeading(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	rev, err := strconv.ParseInt(formValue(ctx, "expected_revision"), 10, 64)
	if err != nil {
		s.answerSheetWrite(ctx, actors.Result{}, nil, actors.Errorf(actors.CodeValidation, "expected_revision must be an integer"))
		return
	}
	base, heading := []string{formValue(ctx, "base")}, formValue(ctx, "heading")
	res, conflict, aerr := s.onBase(sess, id, -1, rev, base, func(rev int64) (actors.Result, *actors.Error) {
		now, err := s.sheetSlot(sess, id, 0)
		if err != nil {
			return actors.Result{}, err
		}
		headers := append(append([]string{}, now.Headers[:4]...), heading)
		return s.siteWrite(sess, &actors.PatchSheet{SheetWrite: siteSheetWrite(id, rev), Headers: headers})
	})
	s.answerSheetWrite(ctx, res, conflict, aerr)
}

// sheetCompact compacts the Sheet as it is now: compaction keeps every
// row and its order, so there is no edit of the owner's it could lose,
// and it runs on the current revision (the page reloads the rows after).
func (s *Site) sheetCompact(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	var (
		res actors.Result
		err *actors.Error
	)
	for attempt := 0; attempt < sheetRebaseAttempts; attempt++ {
		var now actors.SheetView
		if now, err = s.sheetSlot(sess, id, 0); err != nil {
			break
		}
		res, err = s.siteWrite(sess, &actors.CompactSheet{SheetWrite: siteSheetWrite(id, now.Revision)})
		if err == nil || err.Code != actors.CodeStaleVersion {
			break
		}
	}
	s.answerSheetWrite(ctx, res, nil, err)
}

// siteSheetWrite is the rules the owner's Sheet writes run under: those of
// the owner API (plain-text cells, no agent budget).
func siteSheetWrite(id string, rev int64) actors.SheetWrite {
	return actors.SheetWrite{SpaceID: id, ExpectedRevision: rev, PlainTextCells: true}
}
