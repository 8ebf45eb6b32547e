package httpd

import (
	"context"
	"errors"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/views"
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

// Balances is what the History summary and the site's pages need to
// know of a card's balance: today the History upstream's counters
// (balances.FromHistory), later the chain follower's observations.
type Balances interface {
	// Balance is what a canonical Bitcoin address holds; an error when
	// the source cannot say (that card's balance is then unknown).
	Balance(ctx context.Context, address string) (chain.Balance, error)
}

// History bounds.
const (
	historyLimitDefault = views.HistoryPage
	historyLimitMax     = chain.HistoryPageLimitMax
	combinedTxsMax      = 25 // transactions in the combined /history view
	upstreamTimeout     = 12 * time.Second
)

// upstreamFailed reports an upstream failure that makes History degraded.
func upstreamFailed(err error) bool {
	return err != nil && !errors.Is(err, chain.ErrOffsetCeiling)
}
