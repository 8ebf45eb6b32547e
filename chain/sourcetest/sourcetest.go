// Package sourcetest checks a chain.Source against a real chain it is
// told about: the conformance suite every source (btcd, Electrum, an
// Esplora over regtest) must pass, so that History works the same over
// any of them. It holds exported test helpers in an ordinary package,
// for tests only; nothing else imports it.
//
// The suite knows nothing of the source's kind. It is told three
// addresses and, for the checks that change the chain, how to pay,
// mine and reorganise it; it learns everything else from the source
// itself, and checks that the source's answers agree with one another
// and with what the chain was told to do.
package sourcetest

import (
	"context"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// Chain is what the suite is told about the chain behind a source.
type Chain struct {
	// Busy has more than chain.ChainPageSize confirmed transactions,
	// received and sent, so that paging is exercised.
	Busy string
	// Pending has confirmed transactions and at least one in the
	// mempool.
	Pending string
	// Unused has never been paid or spent from.
	Unused string

	// Pay sends sats to addr and returns the transaction's ID, which is
	// then in the mempool.
	Pay func(addr string, sats int64) (string, error)
	// Mine mines a block taking every transaction of the mempool.
	Mine func() error
	// Reorg replaces the newest depth blocks with a longer branch
	// without their transactions, which go back to the mempool. nil:
	// the reorg checks are not run (and the suite says so).
	Reorg func(depth int) error
}

// callTimeout bounds every call the suite makes to the source.
const callTimeout = 30 * time.Second

// Run runs the suite: first the checks that only read, then those that
// pay and mine (after which Pending's mempool is empty), then the reorg.
// Its subtests run one after another, since some change the chain.
func Run(t *testing.T, src chain.Source, c Chain) {
	t.Helper()
	if c.Busy == "" || c.Pending == "" || c.Unused == "" || c.Pay == nil || c.Mine == nil {
		t.Fatal("sourcetest: the Chain needs Busy, Pending, Unused, Pay and Mine")
	}
	t.Run("StatsAreTheSumsOfTheListings", func(t *testing.T) { statsAreTheSumsOfTheListings(t, src, c) })
	t.Run("TheMempoolListingKeepsItsOrder", func(t *testing.T) { mempoolListingKeepsItsOrder(t, src, c) })
	t.Run("PagingWalksTheWholeHistoryNewestFirst", func(t *testing.T) { pagingWalksTheWholeHistory(t, src, c) })
	t.Run("ACursorOutsideTheHistoryGivesAnEmptyPage", func(t *testing.T) { cursorOutsideTheHistory(t, src, c) })
	t.Run("TxHasWhatTheListingsHave", func(t *testing.T) { txHasWhatTheListingsHave(t, src, c) })
	t.Run("AnUnknownTxIsNotFound", func(t *testing.T) { unknownTxIsNotFound(t, src) })
	t.Run("TipAndBlockHashAgree", func(t *testing.T) { tipAndBlockHashAgree(t, src, c) })
	t.Run("TransactionsNameTheirBlocksAndSpends", func(t *testing.T) { transactionsNameTheirBlocksAndSpends(t, src, c) })
	t.Run("HistoryCachePagesTheSameHistory", func(t *testing.T) { historyCachePagesTheSameHistory(t, src, c) })
	t.Run("MempoolTxsMoveToTheChain", func(t *testing.T) { mempoolTxsMoveToTheChain(t, src, c) })
	t.Run("HistoryCacheFollowsNewTransactions", func(t *testing.T) { historyCacheFollowsNewTransactions(t, src, c) })
	t.Run("AReorgPutsTransactionsBackInTheMempool", func(t *testing.T) {
		if c.Reorg == nil {
			t.Skip("the Chain given cannot reorganise")
		}
		aReorgPutsTransactionsBack(t, src, c)
	})
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}
