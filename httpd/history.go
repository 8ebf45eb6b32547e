package httpd

import (
	"context"
	"errors"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// History is what the History and note routes need from the upstream
// (chain.HistoryCache satisfies it; tests may use a fake).
type History interface {
	// Page returns transactions [offset, offset+limit) of an address,
	// mempool first, then newest first.
	Page(ctx context.Context, addr string, offset, limit int, forceRefresh bool) (chain.HistoryPage, error)
	// Tx returns one transaction, chain.ErrNotFound for an unknown txid.
	Tx(ctx context.Context, txid string) (chain.Tx, error)
}

// History bounds.
const (
	historyLimitDefault = 25
	historyLimitMax     = chain.HistoryPageLimitMax
	olderPreviewMax     = 25 // older transactions shown when a card has none in the year
	combinedTxsMax      = 25 // transactions in the combined /history view
	upstreamTimeout     = 12 * time.Second
)

// historyWindow is the base plan's latest calendar year: from the same day
// a year ago (exclusive) to today, as inclusive UTC dates. On 2026-11-22 it
// is 2025-11-23 through 2026-11-22.
type historyWindow struct{ from, to time.Time }

func windowAt(now time.Time) historyWindow {
	today := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	return historyWindow{from: today.AddDate(-1, 0, 1), to: today}
}

// contains reports whether a transaction falls in the window. Mempool
// transactions are current, so they always do.
func (w historyWindow) contains(tx chain.Tx) bool {
	if !tx.Confirmed {
		return true
	}
	day := tx.BlockTime.UTC().Truncate(24 * time.Hour)
	return !day.Before(w.from) && !day.After(w.to)
}

// recentPrefix returns how many leading transactions of a newest-first
// list fall in the window.
func (w historyWindow) recentPrefix(txs []chain.Tx) int {
	for i, tx := range txs {
		if !w.contains(tx) {
			return i
		}
	}
	return len(txs)
}

// upstreamFailed reports an upstream failure that makes History degraded.
func upstreamFailed(err error) bool {
	return err != nil && !errors.Is(err, chain.ErrOffsetCeiling)
}
