package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// confirmedOn is a confirmed transaction of the day (at 23:59:59 UTC, the
// last moment that is still that day).
func confirmedOn(id, d string) chain.Tx {
	return chain.Tx{TxID: id, Confirmed: true, BlockTime: day(d).Add(24*time.Hour - time.Second)}
}

func TestHistoryWindowIsTheLatestCalendarYearInUTCDates(t *testing.T) {
	for _, tc := range []struct{ now, from, to string }{
		{"2026-11-22T10:00:00Z", "2025-11-23", "2026-11-22"},
		{"2026-11-22T23:30:00-05:00", "2025-11-24", "2026-11-23"}, // 04:30 UTC the next day
		// A year before a 29 February is taken as 1 March (there is no
		// 2023-02-29), so the window starts the day after, and is 365
		// days like every other.
		{"2024-02-29T12:00:00Z", "2023-03-02", "2024-02-29"},
		{"2025-03-01T00:00:00Z", "2024-03-02", "2025-03-01"},
	} {
		now, _ := time.Parse(time.RFC3339, tc.now)
		w := HistoryWindowAt(now)
		if !w.From.Equal(day(tc.from)) || !w.To.Equal(day(tc.to)) {
			t.Errorf("at %s: %s to %s, want %s to %s", tc.now, w.From.Format(time.DateOnly), w.To.Format(time.DateOnly), tc.from, tc.to)
		}
	}
	w := HistoryWindowAt(day("2026-11-22"))
	for _, tc := range []struct {
		tx   chain.Tx
		want bool
	}{
		{chain.Tx{TxID: "mempool"}, true},
		{confirmedOn("today", "2026-11-22"), true},
		{confirmedOn("first day", "2025-11-23"), true},
		{confirmedOn("day before", "2025-11-22"), false},
		{chain.Tx{TxID: "midnight", Confirmed: true, BlockTime: day("2025-11-23")}, true},
		{chain.Tx{TxID: "a second before", Confirmed: true, BlockTime: day("2025-11-23").Add(-time.Second)}, false},
	} {
		if got := w.Contains(tc.tx); got != tc.want {
			t.Errorf("%s: in the window %v, want %v", tc.tx.TxID, got, tc.want)
		}
	}
}

// newestFirst returns n transactions, one a day back from start.
func newestFirst(n int, start string) []chain.Tx {
	txs := make([]chain.Tx, n)
	for i := range txs {
		txs[i] = confirmedOn(fmt.Sprintf("tx%02d", i), day(start).AddDate(0, 0, -i).Format(time.DateOnly))
	}
	return txs
}

func TestCutHistoryByPlan(t *testing.T) {
	w := HistoryWindowAt(day("2026-11-22"))
	straddling := append(newestFirst(3, "2026-01-10"), newestFirst(4, "2024-05-01")...) // 3 in, 4 older
	old := newestFirst(40, "2024-05-01")
	for _, tc := range []struct {
		name          string
		plan          Plan
		offset, limit int
		page          []chain.Tx
		hasMore       bool
		want          HistoryCut
	}{
		{"extended shows everything", PlanExtended, 0, 25, straddling, true, HistoryCut{Shown: 7}},
		{"base stops at the window's end", PlanBase, 0, 25, straddling, true, HistoryCut{Shown: 3, Recent: 3, EndsHere: true}},
		{"base page all in the window", PlanBase, 0, 3, straddling[:3], true, HistoryCut{Shown: 3, Recent: 3}},
		{"base, nothing in the year: an older preview", PlanBase, 0, 25, old[:25], true, HistoryCut{Shown: 25, EndsHere: true, OlderPreview: true}},
		{"a small page still previews 25", PlanBase, 0, 10, old[:10], true, HistoryCut{Shown: 10, EndsHere: true, OlderPreview: true, PreviewFetch: true}},
		{"a small page of all there is", PlanBase, 0, 10, old[:4], false, HistoryCut{Shown: 4, EndsHere: true, OlderPreview: true}},
		{"no preview past the first page", PlanBase, 25, 25, old[:25], true, HistoryCut{EndsHere: true}},
		{"an empty card", PlanBase, 0, 25, nil, false, HistoryCut{}},
	} {
		if got := CutHistory(tc.plan, w, tc.offset, tc.page, tc.limit, tc.hasMore); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestNoteEligibilityFollowsThePlanAndTheWindow(t *testing.T) {
	w := HistoryWindowAt(day("2026-11-22"))
	recent, mempool, older := confirmedOn("recent", "2026-06-01"), chain.Tx{TxID: "mempool"}, confirmedOn("older", "2023-01-01")
	for _, tc := range []struct {
		plan          Plan
		tx            chain.Tx
		eligible, ask bool
	}{
		{PlanExtended, older, true, false},
		{PlanBase, recent, true, false},
		{PlanBase, mempool, true, false},
		{PlanBase, older, false, true},
	} {
		if eligible, ask := NoteEligibility(tc.plan, w, tc.tx); eligible != tc.eligible || ask != tc.ask {
			t.Errorf("%s on %s: eligible %v, check previews %v", tc.plan, tc.tx.TxID, eligible, ask)
		}
	}
	// The fallback page: the older preview of a card quiet all year.
	quiet := newestFirst(30, "2024-05-01")
	if !OnPreview(w, quiet, OlderPreviewMax, quiet[24].TxID) {
		t.Error("the 25th older transaction of a quiet card is on its preview")
	}
	if OnPreview(w, quiet, OlderPreviewMax, quiet[25].TxID) {
		t.Error("the 26th is not")
	}
	busy := append(newestFirst(1, "2026-06-01"), quiet...)
	if OnPreview(w, busy, OlderPreviewMax, quiet[0].TxID) {
		t.Error("a card with activity in the year has no preview to write on")
	}
}
