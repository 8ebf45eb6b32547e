package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

const sheetPath = "/v1/bookmark-spaces/s1/sheet"

// sheetAt answers a Sheet read with revision and no rows.
func sheetAt(revision int) func(fakeRequest) (int, string) {
	return func(fakeRequest) (int, string) {
		return fakeJSON(Sheet{SpaceId: "s1", Revision: revision, Headers: []string{"Address", "Blockchain", "Transaction ID", "Date", "Notes"}, RowCount: 1000, ColumnCount: 5, Rows: []SheetRow{}})
	}
}

func TestUpsertSheetRowRetriesOnceWithTheCurrentRevision(t *testing.T) {
	cells := []string{"bc1qx", "bitcoin", "", "", "note"}
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetAt(8),
		"PUT " + sheetPath: func(r fakeRequest) (int, string) {
			if r.Body["expected_revision"] != float64(8) {
				return fakeError(http.StatusConflict, "STALE_VERSION")
			}
			return fakeJSON(SheetPut{SpaceId: "s1", Revision: 9, Index: 4, Created: true, Cells: cells})
		},
	})
	put, err := a.UpsertSheetRow(context.Background(), "s1", 7, cells)
	if err != nil || put.Revision != 9 || put.Index != 4 {
		t.Fatalf("%+v %v", put, err)
	}
	puts := f.sent("PUT " + sheetPath)
	if len(puts) != 2 || puts[0].Body["expected_revision"] != float64(7) || puts[1].Body["expected_revision"] != float64(8) {
		t.Fatalf("PUTs %+v", puts)
	}
	if len(f.sent("GET "+sheetPath)) != 1 {
		t.Fatalf("the revision was not read exactly once")
	}
}

// Two conflicts in a row: the second is returned, and there is no third
// PUT.
func TestUpsertSheetRowReturnsTheSecondConflict(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetAt(8),
		"PUT " + sheetPath: func(fakeRequest) (int, string) { return fakeError(http.StatusConflict, "STALE_VERSION") },
	})
	_, err := a.UpsertSheetRow(context.Background(), "s1", 7, []string{"bc1qx", "bitcoin", "", "", ""})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "STALE_VERSION" || apiErr.Status != http.StatusConflict {
		t.Fatalf("error %v", err)
	}
	if n := len(f.sent("PUT " + sheetPath)); n != 2 {
		t.Fatalf("%d PUTs, want 2", n)
	}
}

// CONFLICT (two rows with the key, or a full Sheet) is not a stale
// revision: the spec says not to retry it blindly.
func TestUpsertSheetRowDoesNotRetryAConflict(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetAt(8),
		"PUT " + sheetPath: func(fakeRequest) (int, string) { return fakeError(http.StatusConflict, "CONFLICT") },
	})
	if _, err := a.UpsertSheetRow(context.Background(), "s1", 7, []string{"bc1qx", "bitcoin", "", "", ""}); !IsCode(err, "CONFLICT") {
		t.Fatalf("error %v", err)
	}
	if len(f.sent("PUT "+sheetPath)) != 1 || len(f.sent("GET "+sheetPath)) != 0 {
		t.Fatalf("requests %+v", f.requests)
	}
}
