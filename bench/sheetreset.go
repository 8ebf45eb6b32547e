package main

import (
	"context"
	"errors"
	"fmt"

	agentapi "github.com/addrwatch/addrwatch/client"
)

// A Sheet scenario starts from a known Sheet: blank, or seeded with a
// number of rows. Bringing it there is setup, untimed, so it goes through
// the account's Agent API client rather than the load's fasthttp requests.

var blankCells = []string{"", "", "", "", ""}

// sheetRowWrite is one row of a Sheet PATCH, the element type the typed
// client's SheetPatchRequest.Rows is declared with.
type sheetRowWrite = struct {
	Cells []string `json:"cells"`
	Index int      `json:"index"`
}

// resetSheet brings a Sheet to a known start outside the measured run:
// every slot blank (five blank cells empty a slot), then seedRows rows of
// the "seed" series from slot 0. The blanking is skipped for a Sheet known
// blank. writer is the client of a key that may write the Sheet.
func resetSheet(writer *agentapi.Agent, s *sheetSpace, seedRows int) error {
	ctx := context.Background() // setup is bounded by its HTTP client's timeout
	if s.dirty {
		for from := 0; from < sheetSlots; from += sheetPatchMax {
			if err := patchUntimed(ctx, writer, s, rowWrites(from, from+sheetPatchMax, func(int) []string { return blankCells })); err != nil {
				return err
			}
		}
	}
	for from := 0; from < seedRows; from += sheetPatchMax {
		to := min(from+sheetPatchMax, seedRows)
		if err := patchUntimed(ctx, writer, s, rowWrites(from, to, func(i int) []string { return rowCells("seed", i) })); err != nil {
			return err
		}
	}
	s.dirty = seedRows > 0
	return nil
}

// rowWrites is the rows of slots from..to-1, with cells from cellsOf.
func rowWrites(from, to int, cellsOf func(i int) []string) []sheetRowWrite {
	rows := make([]sheetRowWrite, 0, to-from)
	for i := from; i < to; i++ {
		rows = append(rows, sheetRowWrite{Index: i, Cells: cellsOf(i)})
	}
	return rows
}

// patchUntimed writes rows as of the Sheet's known revision and keeps the
// new one. On a 409 it re-reads the revision and writes once more: the
// Sheet has one writer during a run, and these rows overwrite whatever is
// in their slots, so a stale revision here only means one not yet seen.
func patchUntimed(ctx context.Context, writer *agentapi.Agent, s *sheetSpace, rows []sheetRowWrite) error {
	for attempt := 0; ; attempt++ {
		r, err := writer.API.PatchSheetWithResponse(ctx, s.id, agentapi.SheetPatchRequest{ExpectedRevision: int(s.revision), Rows: &rows})
		if err == nil {
			err = checkAnswer(r.HTTPResponse, r.Body, 200)
		}
		var refused *agentapi.APIError
		if errors.As(err, &refused) && refused.Status == 409 && attempt == 0 {
			if err := refreshRevision(ctx, writer, s); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("preparing Sheet %s: %w", s.id, err)
		}
		s.revision = int64(r.JSON200.Revision)
		return nil
	}
}

// refreshRevision reads the Sheet's revision with the smallest page, one
// slot.
func refreshRevision(ctx context.Context, writer *agentapi.Agent, s *sheetSpace) error {
	one := 1
	r, err := writer.API.GetSheetWithResponse(ctx, s.id, &agentapi.GetSheetParams{Limit: &one})
	if err == nil {
		err = checkAnswer(r.HTTPResponse, r.Body, 200)
	}
	if err != nil {
		return fmt.Errorf("reading Sheet %s: %w", s.id, err)
	}
	s.revision = int64(r.JSON200.Revision)
	return nil
}
