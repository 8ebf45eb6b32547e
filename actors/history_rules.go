package actors

import (
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// The History rules of the spec (History rules 3-7, Note write rules 3-5)
// as pure functions over chain facts: the edge fetches the transactions,
// these decide what a plan shows and which transactions a note may be
// written on.

// OlderPreviewMax is how many older transactions the first page of a base
// plan card shows when the card has none in the window (History rule 3).
const OlderPreviewMax = 25

// HistoryWindow is the base plan's latest calendar year: from the same day
// a year ago (exclusive) to today, as inclusive UTC dates. On 2026-11-22
// it is 2025-11-23 through 2026-11-22.
type HistoryWindow struct{ From, To time.Time }

// HistoryWindowAt is the window on the day of now.
func HistoryWindowAt(now time.Time) HistoryWindow {
	u := now.UTC()
	today := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return HistoryWindow{From: today.AddDate(-1, 0, 1), To: today}
}

// Contains reports whether tx falls in the window. A mempool transaction
// is current, so it always does.
func (w HistoryWindow) Contains(tx chain.Tx) bool {
	if !tx.Confirmed {
		return true
	}
	day := tx.BlockTime.UTC().Truncate(24 * time.Hour)
	return !day.Before(w.From) && !day.After(w.To)
}

// RecentPrefix returns how many leading transactions of a newest-first
// list fall in the window.
func (w HistoryWindow) RecentPrefix(txs []chain.Tx) int {
	for i, tx := range txs {
		if !w.Contains(tx) {
			return i
		}
	}
	return len(txs)
}

// HistoryCut is what a plan shows of one fetched page of a card's
// History (newest first, from offset).
type HistoryCut struct {
	Shown        int  // the page's first Shown transactions are listed
	Recent       int  // of the page's transactions, those in the window
	EndsHere     bool // the plan's History ends within this page
	OlderPreview bool // the first page previews older activity
	// PreviewFetch asks for the first OlderPreviewMax transactions when
	// the page fetched fewer and more exist: the preview always shows
	// up to OlderPreviewMax, whatever the page's limit.
	PreviewFetch bool
}

// CutHistory applies a plan to a fetched page: the extended plan shows it
// all; the base plan only the window, and when a card has nothing in it,
// on its first page, up to OlderPreviewMax older transactions labelled as
// a preview (History rule 3).
func CutHistory(plan Plan, w HistoryWindow, offset int, page []chain.Tx, limit int, pageHasMore bool) HistoryCut {
	if plan != PlanBase {
		return HistoryCut{Shown: len(page)}
	}
	n := w.RecentPrefix(page)
	cut := HistoryCut{Shown: n, Recent: n, EndsHere: n < len(page)}
	if offset == 0 && n == 0 && len(page) > 0 {
		cut.OlderPreview, cut.EndsHere = true, true
		cut.Shown = min(len(page), OlderPreviewMax)
		cut.PreviewFetch = limit < OlderPreviewMax && pageHasMore
	}
	return cut
}

// NoteEligibility decides whether a new note may be written on tx under
// plan (Note write rules 3-5): the extended plan, any transaction; the
// base plan, a transaction in the window or in the mempool, or else one on
// the eligible fallback page (the older preview) of a card of the account
// that the transaction involves. checkPreviews asks the caller to fetch
// those previews and decide with OnPreview.
func NoteEligibility(plan Plan, w HistoryWindow, tx chain.Tx) (eligible, checkPreviews bool) {
	if plan != PlanBase || w.Contains(tx) {
		return true, false
	}
	return false, true
}

// OnPreview reports whether txid is on a card's first page when that page
// is an older preview (CutHistory's OlderPreview), given the first page's
// transactions.
func OnPreview(w HistoryWindow, firstPage []chain.Tx, limit int, txid string) bool {
	cut := CutHistory(PlanBase, w, 0, firstPage, limit, false)
	if !cut.OlderPreview {
		return false
	}
	for _, tx := range firstPage[:cut.Shown] {
		if tx.TxID == txid {
			return true
		}
	}
	return false
}
