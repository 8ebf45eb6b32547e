package client

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
)

// sheetPage is one canned page of a Sheet read.
type sheetPage struct {
	revision int
	rows     []int // the rows' indexes
	next     *int
}

// sheetPages answers a Sheet read with the page pages gives for its offset
// and pass (1 for the first read from offset 0, 2 for the next), so that a
// test can change the Sheet between two reads of it.
func sheetPages(pages func(offset, pass int) sheetPage) func(fakeRequest) (int, string) {
	passes := 0
	return func(r fakeRequest) (int, string) {
		offset, _ := strconv.Atoi(r.Query.Get("offset"))
		if offset == 0 {
			passes++
		}
		p := pages(offset, passes)
		rows := []SheetRow{}
		for _, i := range p.rows {
			rows = append(rows, SheetRow{Index: i, Cells: []string{"bc1q" + strconv.Itoa(i), "bitcoin", "", "", ""}})
		}
		return fakeJSON(Sheet{SpaceId: "s1", Revision: p.revision, Headers: []string{"Address", "Blockchain", "Transaction ID", "Date", "Notes"}, RowCount: 1000, ColumnCount: 5, Rows: rows, NextOffset: p.next})
	}
}

func next(i int) *int { return &i }

func TestSheetRowsFollowsNextOffsetUntilNull(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetPages(func(offset, _ int) sheetPage {
			switch offset {
			case 0:
				return sheetPage{revision: 5, rows: []int{0, 3}, next: next(7)}
			case 7:
				return sheetPage{revision: 5, rows: []int{7}, next: next(9)}
			default:
				return sheetPage{revision: 5, rows: []int{9, 12}}
			}
		}),
	})
	var got []int
	for row, err := range a.SheetRows(context.Background(), "s1", SheetQuery{Address: "bc1q", Chain: "bitcoin", Limit: 50}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row.Index)
	}
	if want := []int{0, 3, 7, 9, 12}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	reads := f.sent("GET " + sheetPath)
	if len(reads) != 3 {
		t.Fatalf("%d reads, want 3", len(reads))
	}
	for i, offset := range []string{"0", "7", "9"} {
		q := reads[i].Query
		if q.Get("offset") != offset || q.Get("address") != "bc1q" || q.Get("chain") != "bitcoin" || q.Get("limit") != "50" || q.Has("view") {
			t.Fatalf("read %d: query %v; every page keeps the view and the filters", i, q)
		}
	}
}

// Sheet read rule 5: a revision change between pages ends the read with
// ErrSheetChanged, after the first page's rows.
func TestSheetRowsRefusesARevisionChangeBetweenPages(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetPages(func(offset, _ int) sheetPage {
			if offset == 0 {
				return sheetPage{revision: 5, rows: []int{0, 1}, next: next(2)}
			}
			return sheetPage{revision: 6, rows: []int{2}, next: next(3)}
		}),
	})
	var got []int
	var failure error
	for row, err := range a.SheetRows(context.Background(), "s1", SheetQuery{View: Sparse}) {
		if err != nil {
			failure = err
			continue
		}
		got = append(got, row.Index)
	}
	if !errors.Is(failure, ErrSheetChanged) || !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("rows %v, error %v", got, failure)
	}
	if reads := f.sent("GET " + sheetPath); len(reads) != 2 || reads[1].Query.Get("view") != "sparse" {
		t.Fatalf("reads %+v: the read must stop at the changed page", reads)
	}
}

func TestSheetRowsStopsWhenTheCallerDoes(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetPages(func(offset, _ int) sheetPage {
			return sheetPage{revision: 5, rows: []int{offset, offset + 1}, next: next(offset + 2)}
		}),
	})
	for row, err := range a.SheetRows(context.Background(), "s1", SheetQuery{Limit: 2}) {
		if err != nil || row.Index == 2 {
			break
		}
	}
	if n := len(f.sent("GET " + sheetPath)); n != 2 {
		t.Fatalf("%d reads after the caller stopped in the second page, want 2", n)
	}
}

// A next_offset that does not move forward would make the walk endless.
func TestSheetRowsRefusesANextOffsetThatGoesBack(t *testing.T) {
	a, _ := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetPages(func(offset, _ int) sheetPage {
			return sheetPage{revision: 5, rows: []int{4}, next: next(4)}
		}),
	})
	var failure error
	for _, err := range a.SheetRows(context.Background(), "s1", SheetQuery{}) {
		failure = err
	}
	if failure == nil {
		t.Fatal("no error for a next_offset that does not advance")
	}
}

func TestSheetRowsReturnsAnAPIError(t *testing.T) {
	a, _ := newFake(t, nil)
	var failure error
	for _, err := range a.SheetRows(context.Background(), "s1", SheetQuery{}) {
		failure = err
	}
	var apiErr *APIError
	if !errors.As(failure, &apiErr) || apiErr.Code != "NOT_FOUND" {
		t.Fatalf("error %v", failure)
	}
}

// ReadSheet discards a read whose revision changed and reads again from
// offset 0; the rows it returns all come from one revision.
func TestReadSheetRestartsOnARevisionChange(t *testing.T) {
	a, _ := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetPages(func(offset, pass int) sheetPage {
			switch {
			case offset == 0 && pass == 1:
				return sheetPage{revision: 5, rows: []int{0, 1}, next: next(2)}
			case offset == 0:
				return sheetPage{revision: 6, rows: []int{0}, next: next(2)}
			default:
				return sheetPage{revision: 6, rows: []int{2}}
			}
		}),
	})
	read, err := a.ReadSheet(context.Background(), "s1", SheetQuery{View: Sparse})
	if err != nil {
		t.Fatal(err)
	}
	got := []int{}
	for _, r := range read.Rows {
		got = append(got, r.Index)
	}
	if read.Revision != 6 || !slices.Equal(got, []int{0, 2}) || len(read.Headers) != 5 {
		t.Fatalf("read %+v", read)
	}
}

// A Sheet that changes on every pass is reported after
// sheetReadAttemptsMax reads, not chased.
func TestReadSheetGivesUpOnASheetThatKeepsChanging(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + sheetPath: sheetPages(func(offset, pass int) sheetPage {
			if offset == 0 {
				return sheetPage{revision: 2 * pass, rows: []int{0}, next: next(1)}
			}
			return sheetPage{revision: 2*pass + 1, rows: []int{1}}
		}),
	})
	if _, err := a.ReadSheet(context.Background(), "s1", SheetQuery{}); !errors.Is(err, ErrSheetChanged) {
		t.Fatalf("error %v", err)
	}
	if n := len(f.sent("GET " + sheetPath)); n != 2*sheetReadAttemptsMax {
		t.Fatalf("%d reads, want %d", n, 2*sheetReadAttemptsMax)
	}
}
