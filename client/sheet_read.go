package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// Sheet reads. A read of more than one page is consistent only if every
// page has the same revision: GET has no snapshot cursor, so a write
// between two pages can move rows under the offsets (Sheet read rule 5).

// SheetQuery is what a Sheet read asks for. SheetRows and ReadSheet send
// the same one on every page, only the offset moving (Sheet read rule 3).
type SheetQuery struct {
	// View is Empty, the dense view (Limit slots a page, blank ones
	// included), or Sparse (nonempty rows only, at most 200 a page).
	View GetSheetParamsView

	// Address and Chain are exact, case-sensitive filters on the first two
	// cells, and either implies the sparse view; "" filters nothing.
	Address, Chain string

	// Limit is the dense view's page size, 1 to 100; 0 is the server's
	// default, 100. The sparse view validates it and ignores it.
	Limit int
}

// ErrSheetChanged says the Sheet's revision changed between two pages of
// one read: the rows read so far may mix two states of the Sheet, so the
// spec says to discard them and read again from offset 0.
var ErrSheetChanged = errors.New("client: the Sheet changed between pages of one read")

// SheetRows yields the rows q selects, page by page from offset 0,
// following next_offset until it is null.
//
// When a page's revision differs from the first page's, SheetRows yields
// an error that errors.Is ErrSheetChanged and stops. It does not restart
// by itself: the earlier pages' rows are already the caller's, and only
// the caller can discard them as the spec asks, then range again.
// ReadSheet is the read that restarts by itself, for a caller who wants
// the rows whole.
func (a *Agent) SheetRows(ctx context.Context, spaceID string, q SheetQuery) iter.Seq2[SheetRow, error] {
	return func(yield func(SheetRow, error) bool) {
		err := a.sheetPages(ctx, spaceID, q, func(page *Sheet) bool {
			for _, row := range page.Rows {
				if !yield(row, nil) {
					return false
				}
			}
			return true
		})
		if err != nil {
			yield(SheetRow{}, err)
		}
	}
}

// SheetRead is one consistent read of a Sheet: every page it was read from
// had Revision.
type SheetRead struct {
	Revision int
	Headers  []string
	Rows     []SheetRow
}

// sheetReadAttemptsMax bounds ReadSheet's restarts: a Sheet written to
// faster than it can be read is reported, not chased.
const sheetReadAttemptsMax = 3

// ReadSheet reads every row q selects into memory (at most the Sheet's
// 1,000 slots), restarting from offset 0 when the revision changes between
// pages, as the spec says, up to sheetReadAttemptsMax reads in all; then
// it returns the last ErrSheetChanged. Its Revision is the one to send
// with a write based on the rows.
func (a *Agent) ReadSheet(ctx context.Context, spaceID string, q SheetQuery) (*SheetRead, error) {
	var err error
	for range sheetReadAttemptsMax {
		read := &SheetRead{}
		err = a.sheetPages(ctx, spaceID, q, func(page *Sheet) bool {
			read.Revision, read.Headers = page.Revision, page.Headers
			read.Rows = append(read.Rows, page.Rows...)
			return true
		})
		if err == nil {
			return read, nil
		}
		if !errors.Is(err, ErrSheetChanged) {
			return nil, err
		}
	}
	return nil, err
}

// sheetPages fetches q's pages from offset 0 and hands each to page, until
// page returns false or next_offset is null. A page whose revision differs
// from the first page's ends the walk with ErrSheetChanged.
func (a *Agent) sheetPages(ctx context.Context, spaceID string, q SheetQuery, page func(*Sheet) bool) error {
	params := q.params()
	offset, revision := 0, 0
	for pages := 0; ; pages++ {
		params.Offset = &offset
		r, err := a.API.GetSheetWithResponse(ctx, spaceID, &params)
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return err
		}
		sheet := r.JSON200
		if pages == 0 {
			revision = sheet.Revision
		} else if sheet.Revision != revision {
			return fmt.Errorf("%w (revision %d, then %d at offset %d)", ErrSheetChanged, revision, sheet.Revision, offset)
		}
		if !page(sheet) || sheet.NextOffset == nil {
			return nil
		}
		// next_offset only moves forward through the Sheet's 1,000 slots,
		// which is what ends the walk: a page pointing back would make it
		// endless, so it is an error.
		if *sheet.NextOffset <= offset {
			return fmt.Errorf("client: the Sheet's next_offset %d does not move past offset %d", *sheet.NextOffset, offset)
		}
		offset = *sheet.NextOffset
	}
}

// params are the query parameters every page of q sends.
func (q SheetQuery) params() GetSheetParams {
	var p GetSheetParams
	if q.View != Empty {
		p.View = &q.View
	}
	if q.Address != "" {
		p.Address = &q.Address
	}
	if q.Chain != "" {
		p.Chain = &q.Chain
	}
	if q.Limit != 0 {
		p.Limit = &q.Limit
	}
	return p
}
