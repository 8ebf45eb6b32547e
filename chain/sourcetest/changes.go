package sourcetest

import (
	"slices"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// A payment shows in the mempool listing and counters at once, and
// after a block in the first chain page at the tip's height, out of the
// mempool; Tx follows it.
func mempoolTxsMoveToTheChain(t *testing.T, src chain.Source, c Chain) {
	const sats = 12_345
	before := stats(t, src, c.Pending)
	txid, err := c.Pay(c.Pending, sats)
	if err != nil {
		t.Fatal(err)
	}
	pending := mempool(t, src, c.Pending)
	i := slices.IndexFunc(pending, func(tx chain.Tx) bool { return tx.TxID == txid })
	if i < 0 || pending[i].NetAmount(c.Pending) != sats {
		t.Fatalf("the payment %s is not in the mempool listing %v with its amount", txid, IDs(pending))
	}
	after := stats(t, src, c.Pending)
	if after.Chain != before.Chain || after.Mempool.TxCount != before.Mempool.TxCount+1 || after.Mempool.FundedTxoSum != before.Mempool.FundedTxoSum+sats {
		t.Fatalf("after the payment the counters are %+v, before %+v", after, before)
	}
	if tx, err := src.Tx(ctxFor(t), txid); err != nil || tx.Confirmed {
		t.Fatalf("Tx of the payment in the mempool: %+v, %v", tx, err)
	}

	if err := c.Mine(); err != nil {
		t.Fatal(err)
	}
	tip, err := src.Tip(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if pool := mempool(t, src, c.Pending); len(pool) != 0 {
		t.Fatalf("after a block the mempool listing still holds %v", IDs(pool))
	}
	mined := stats(t, src, c.Pending)
	if mined.Mempool != (chain.TxoStats{}) || mined.Chain.TxCount != after.Chain.TxCount+after.Mempool.TxCount ||
		mined.Chain.FundedTxoSum != after.Chain.FundedTxoSum+after.Mempool.FundedTxoSum {
		t.Fatalf("after a block the counters are %+v, before it %+v", mined, after)
	}
	first, err := src.ChainTxs(ctxFor(t), c.Pending, "")
	if err != nil {
		t.Fatal(err)
	}
	i = slices.IndexFunc(first, func(tx chain.Tx) bool { return tx.TxID == txid })
	if i < 0 || first[i].BlockHeight != tip.Height {
		t.Fatalf("after a block the payment is not on the first chain page at the tip's height %d: %+v", tip.Height, first)
	}
	if tx, err := src.Tx(ctxFor(t), txid); err != nil || !tx.Confirmed || tx.BlockHeight != tip.Height {
		t.Fatalf("Tx of the mined payment: %+v, %v", tx, err)
	}
}

// A cache that walked deep into the busy address's history serves it
// right after new transactions pushed every position down, as History
// does when it refreshes.
func historyCacheFollowsNewTransactions(t *testing.T, src chain.Source, c Chain) {
	cache := chain.NewHistoryCache(src, historyTTL, nil, 16)
	checkWindows(t, cache, src, c.Busy, false)
	for range 2 {
		if _, err := c.Pay(c.Busy, 5_000); err != nil {
			t.Fatal(err)
		}
	}
	checkWindows(t, cache, src, c.Busy, true) // two in the mempool on top
	if err := c.Mine(); err != nil {
		t.Fatal(err)
	}
	checkWindows(t, cache, src, c.Busy, true) // two more confirmed on top
}

// A reorg that drops the block of a payment puts the payment back in
// the mempool: the tip, the block hashes, the listings, the counters and
// a cache that held the old history all follow; the next block confirms
// it again.
func aReorgPutsTransactionsBack(t *testing.T, src chain.Source, c Chain) {
	txid, err := c.Pay(c.Pending, 777)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Mine(); err != nil {
		t.Fatal(err)
	}
	cache := chain.NewHistoryCache(src, historyTTL, nil, 16)
	checkWindows(t, cache, src, c.Pending, false)
	oldTip, err := src.Tip(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	before := stats(t, src, c.Pending)

	if err := c.Reorg(1); err != nil {
		t.Fatal(err)
	}
	tip, err := src.Tip(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if tip.Height != oldTip.Height+1 {
		t.Fatalf("after the reorg the tip is %+v, before it %+v", tip, oldTip)
	}
	if hash, err := src.BlockHash(ctxFor(t), oldTip.Height); err != nil || hash == oldTip.Hash {
		t.Fatalf("after the reorg block %d is %q (%v), the replaced block's hash", oldTip.Height, hash, err)
	}
	if !slices.Contains(IDs(mempool(t, src, c.Pending)), txid) || slices.Contains(IDs(Walk(t, src, c.Pending)), txid) {
		t.Fatal("after the reorg the payment is not back in the mempool alone")
	}
	after := stats(t, src, c.Pending)
	if after.Chain.TxCount != before.Chain.TxCount-1 || after.Mempool.TxCount != before.Mempool.TxCount+1 || after.TxCount() != before.TxCount() {
		t.Fatalf("after the reorg the counters are %+v, before %+v", after, before)
	}
	checkWindows(t, cache, src, c.Pending, true)

	if err := c.Mine(); err != nil {
		t.Fatal(err)
	}
	if tx, err := src.Tx(ctxFor(t), txid); err != nil || !tx.Confirmed || tx.BlockHeight != tip.Height+1 {
		t.Fatalf("the payment after the next block: %+v, %v", tx, err)
	}
	checkWindows(t, cache, src, c.Pending, true)
}
