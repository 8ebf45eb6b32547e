package balances

import (
	"context"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// Source says what an address holds.
type Source interface {
	// Balance is the balance of a canonical Bitcoin address; an error
	// when the source cannot say (the address's balance is then unknown).
	Balance(ctx context.Context, address string) (chain.Balance, error)
}

// Pager is the History read FromHistory needs (chain.HistoryCache's).
type Pager interface {
	// Page returns positions [offset, offset+limit) of an address's
	// history, mempool first, then newest first, with its counters.
	Page(ctx context.Context, addr string, offset, limit int, forceRefresh bool) (chain.HistoryPage, error)
}

// FromHistory is a Source over the History upstream: the counters of an
// address's first page and its newest confirmed transaction, both from the
// cache's same refresh when the History was just read. nil when pages is
// nil (a server without an upstream knows no balance).
func FromHistory(pages Pager) Source {
	if pages == nil {
		return nil
	}
	return historySource{pages}
}

type historySource struct{ pages Pager }

func (h historySource) Balance(ctx context.Context, address string) (chain.Balance, error) {
	head, err := h.pages.Page(ctx, address, 0, 1, false)
	if err != nil {
		return chain.Balance{}, err
	}
	newest, err := h.newestConfirmed(ctx, address, head)
	if err != nil {
		return chain.Balance{}, err
	}
	return chain.BalanceOf(head.Stats, newest)
}

// newestConfirmed is the block time of the first confirmed transaction of
// the listing head starts: right after its mempool transactions.
func (h historySource) newestConfirmed(ctx context.Context, address string, head chain.HistoryPage) (time.Time, error) {
	if head.Stats.Chain.TxCount == 0 {
		return time.Time{}, nil
	}
	page := head
	if head.MempoolCount > 0 {
		var err error
		if page, err = h.pages.Page(ctx, address, head.MempoolCount, 1, false); err != nil {
			return time.Time{}, err
		}
	}
	if len(page.Txs) == 0 || !page.Txs[0].Confirmed {
		return time.Time{}, nil
	}
	return page.Txs[0].BlockTime, nil
}
