package client

import "context"

// UpsertSheetRow saves cells (5 strings; Address and Blockchain, the first
// two, nonempty) as the Sheet's row for that Address and Blockchain: the
// unique row with both, else the first empty slot (Sheet write rule 3).
// revision is the Sheet's revision from the caller's recent read.
//
// On 409 STALE_VERSION it reads the current revision and writes once more
// (retryOnceIfStale); a second conflict is returned. Refreshing only the
// revision is what the spec forbids for indexed writes, where a delete or
// a compaction may have moved another row under the index. A PUT names no
// index: it names its row by the Address and Blockchain cells, and the
// server finds that row when it applies the write, so the retry
// re-identifies the row by its current cells as the spec asks. What a
// concurrent write can have changed is handled by the server's own
// answer: rows moved do not matter; a row with the same key edited by
// someone else is overwritten, which is what an upsert asks for; a second
// row with the same key, or a full Sheet, is 409 CONFLICT, returned
// without a retry.
func (a *Agent) UpsertSheetRow(ctx context.Context, spaceID string, revision int, cells []string) (*SheetPut, error) {
	write := func(revision int) (*SheetPut, error) {
		r, err := a.API.PutSheetRowWithResponse(ctx, spaceID, SheetPutRequest{ExpectedRevision: revision, Cells: cells})
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return nil, err
		}
		return r.JSON200, nil
	}
	reread := func() (struct{}, int, error) {
		revision, err := a.sheetRevision(ctx, spaceID)
		return struct{}{}, revision, err
	}
	always := func(struct{}) bool { return true } // the cells name the row: nothing to verify
	return retryOnceIfStale(revision, write, reread, always)
}

// sheetRevision reads the Sheet's current revision with the smallest page
// there is, one slot.
func (a *Agent) sheetRevision(ctx context.Context, spaceID string) (int, error) {
	one := 1
	r, err := a.API.GetSheetWithResponse(ctx, spaceID, &GetSheetParams{Limit: &one})
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	if err != nil {
		return 0, err
	}
	return r.JSON200.Revision, nil
}
