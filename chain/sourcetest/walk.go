package sourcetest

import (
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// Walk pages through addr's whole confirmed history by lastSeenTxID and
// returns it, newest first, failing t where the paging breaks Esplora's
// rules: a page longer than chain.ChainPageSize, a full page that is the
// last, an unconfirmed transaction, one that does not involve addr, a
// repeat, or a block height that goes up.
func Walk(t *testing.T, src chain.Source, addr string) []chain.Tx {
	t.Helper()
	ctx := ctxFor(t)
	stats, err := src.AddressStats(ctx, addr)
	if err != nil {
		t.Fatalf("AddressStats(%s): %v", addr, err)
	}
	pagesMax := int(stats.Chain.TxCount)/chain.ChainPageSize + 2
	var all []chain.Tx
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == pagesMax {
			t.Fatalf("%s: no end after %d pages, for %d confirmed transactions", addr, page, stats.Chain.TxCount)
		}
		txs, err := src.ChainTxs(ctx, addr, cursor)
		if err != nil {
			t.Fatalf("ChainTxs(%s, %q): %v", addr, cursor, err)
		}
		if len(txs) > chain.ChainPageSize {
			t.Fatalf("%s: a page of %d", addr, len(txs))
		}
		for _, tx := range txs {
			switch {
			case !tx.Confirmed || tx.BlockHeight <= 0 || tx.BlockTime.IsZero():
				t.Fatalf("%s: %s in a chain page without its block: %+v", addr, tx.TxID, tx)
			case !tx.Involves(addr):
				t.Fatalf("%s: %s listed though it neither pays nor spends from it", addr, tx.TxID)
			case seen[tx.TxID]:
				t.Fatalf("%s: %s listed twice (page %d)", addr, tx.TxID, page)
			case len(all) > 0 && tx.BlockHeight > all[len(all)-1].BlockHeight:
				t.Fatalf("%s: %s at height %d listed after one at %d", addr, tx.TxID, tx.BlockHeight, all[len(all)-1].BlockHeight)
			}
			seen[tx.TxID] = true
			all = append(all, tx)
		}
		if len(txs) < chain.ChainPageSize {
			return all
		}
		cursor = txs[len(txs)-1].TxID
	}
}

// Sums is what txs pay to and spend from addr, as chain.TxoStats count
// them.
func Sums(txs []chain.Tx, addr string) chain.TxoStats {
	s := chain.TxoStats{TxCount: int64(len(txs))}
	for _, tx := range txs {
		for _, out := range tx.Outputs {
			if out.Address == addr {
				s.FundedTxoSum += out.Value
			}
		}
		for _, in := range tx.Inputs {
			if in.Address == addr {
				s.SpentTxoSum += in.Value
			}
		}
	}
	return s
}

// IDs are the transactions' IDs, in order.
func IDs(txs []chain.Tx) []string {
	ids := make([]string, len(txs))
	for i, tx := range txs {
		ids[i] = tx.TxID
	}
	return ids
}

// mempool is addr's MempoolTxs, each checked to be unconfirmed and to
// involve addr.
func mempool(t *testing.T, src chain.Source, addr string) []chain.Tx {
	t.Helper()
	txs, err := src.MempoolTxs(ctxFor(t), addr)
	if err != nil {
		t.Fatalf("MempoolTxs(%s): %v", addr, err)
	}
	seen := map[string]bool{}
	for _, tx := range txs {
		if tx.Confirmed || tx.BlockHeight != 0 || !tx.BlockTime.IsZero() || !tx.Involves(addr) || seen[tx.TxID] {
			t.Fatalf("%s: a mempool listing holds %+v", addr, tx)
		}
		seen[tx.TxID] = true
	}
	return txs
}

func stats(t *testing.T, src chain.Source, addr string) chain.AddressStats {
	t.Helper()
	s, err := src.AddressStats(ctxFor(t), addr)
	if err != nil {
		t.Fatalf("AddressStats(%s): %v", addr, err)
	}
	return s
}
