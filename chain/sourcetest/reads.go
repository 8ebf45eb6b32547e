package sourcetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// The address's counters are the sums over its listings: the confirmed
// ones over the whole walk, the mempool's over MempoolTxs; and what it
// received less what it spent is the sum of the listed transactions'
// NetAmount.
func statsAreTheSumsOfTheListings(t *testing.T, src chain.Source, c Chain) {
	for _, addr := range []string{c.Busy, c.Pending, c.Unused} {
		walked := Walk(t, src, addr)
		pool := mempool(t, src, addr)
		s := stats(t, src, addr)
		if s.Address != addr {
			t.Errorf("AddressStats(%s) names %q", addr, s.Address)
		}
		if got := Sums(walked, addr); s.Chain != got {
			t.Errorf("%s: confirmed counters %+v, the listings sum to %+v", addr, s.Chain, got)
		}
		if got := Sums(pool, addr); len(pool) < 50 && s.Mempool != got {
			t.Errorf("%s: mempool counters %+v, the listing sums to %+v", addr, s.Mempool, got)
		}
		var net int64
		for _, tx := range append(walked, pool...) {
			net += tx.NetAmount(addr)
		}
		if net != s.Balance() {
			t.Errorf("%s: the listings' net amounts sum to %d, the balance is %d", addr, net, s.Balance())
		}
	}
	if s := stats(t, src, c.Unused); s.TxCount() != 0 || s.Balance() != 0 {
		t.Errorf("the unused address has counters %+v", s)
	}
	if s := stats(t, src, c.Busy); s.Chain.TxCount <= chain.ChainPageSize || s.Chain.SpentTxoSum == 0 {
		t.Fatalf("the busy address has %+v: it must have received and spent in more than %d transactions", s.Chain, chain.ChainPageSize)
	}
	if s := stats(t, src, c.Pending); s.Mempool.TxCount == 0 || s.Chain.TxCount == 0 {
		t.Fatalf("the pending address has %+v: it must have confirmed and mempool transactions", s)
	}
}

// MempoolTxs lists the same transactions in the same order from one call
// to the next (History's offsets count through it), however the source
// keeps its mempool.
func mempoolListingKeepsItsOrder(t *testing.T, src chain.Source, c Chain) {
	first := IDs(mempool(t, src, c.Pending))
	for range 5 {
		if again := IDs(mempool(t, src, c.Pending)); !reflect.DeepEqual(again, first) {
			t.Fatalf("the mempool listing was %v, then %v", first, again)
		}
	}
}

// Every cursor of the walk gives the rest of the walk: paging by
// lastSeenTxID has no gaps or repeats from wherever it starts.
func pagingWalksTheWholeHistory(t *testing.T, src chain.Source, c Chain) {
	walked := Walk(t, src, c.Busy)
	for _, at := range []int{0, chain.ChainPageSize - 1, chain.ChainPageSize, len(walked) - 2, len(walked) - 1} {
		if at < 0 || at >= len(walked) {
			continue
		}
		page, err := src.ChainTxs(ctxFor(t), c.Busy, walked[at].TxID)
		if err != nil {
			t.Fatalf("the page after position %d: %v", at, err)
		}
		want := walked[at+1 : min(at+1+chain.ChainPageSize, len(walked))]
		if !reflect.DeepEqual(IDs(page), IDs(want)) {
			t.Errorf("the page after position %d is %v, want %v", at, IDs(page), IDs(want))
		}
	}
	first, err := src.ChainTxs(ctxFor(t), c.Busy, "")
	if err != nil || !reflect.DeepEqual(first, walked[:chain.ChainPageSize]) {
		t.Errorf("a second first page differs from the first (%v)", err)
	}
}

// A cursor that is no confirmed transaction of the address gives an
// empty page, as Esplora answers: another address's transaction, a
// mempool one, an unknown one.
func cursorOutsideTheHistory(t *testing.T, src chain.Source, c Chain) {
	other := Walk(t, src, c.Pending)
	cursors := map[string]string{"another address's transaction": other[0].TxID, "an unknown transaction": unknownTxID()}
	if pool := mempool(t, src, c.Pending); len(pool) > 0 {
		cursors["a mempool transaction"] = pool[0].TxID
	}
	for what, cursor := range cursors {
		if Involves(t, src, c.Busy, cursor) {
			continue
		}
		page, err := src.ChainTxs(ctxFor(t), c.Busy, cursor)
		if err != nil || len(page) != 0 {
			t.Errorf("the page after %s: %d transactions, %v; want an empty page", what, len(page), err)
		}
	}
	if page, err := src.ChainTxs(ctxFor(t), c.Unused, ""); err != nil || len(page) != 0 {
		t.Errorf("the unused address's first page: %d transactions, %v", len(page), err)
	}
}

// Involves reports whether txid is a transaction of addr, asking Tx.
func Involves(t *testing.T, src chain.Source, addr, txid string) bool {
	t.Helper()
	tx, err := src.Tx(ctxFor(t), txid)
	if errors.Is(err, chain.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("Tx(%s): %v", txid, err)
	}
	return tx.Involves(addr)
}

// Tx answers each listed transaction as the listing has it: the outputs
// its inputs spend (with their addresses and values), its outputs, fee,
// block height and time, so NetAmount is the same either way.
func txHasWhatTheListingsHave(t *testing.T, src chain.Source, c Chain) {
	listed := append(Walk(t, src, c.Busy), mempool(t, src, c.Pending)...)
	for _, want := range listed {
		got, err := src.Tx(ctxFor(t), want.TxID)
		if err != nil {
			t.Fatalf("Tx(%s): %v", want.TxID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Tx(%s) = %+v\nthe listing has %+v", want.TxID, got, want)
		}
		var in, out int64
		for _, io := range got.Inputs {
			in += io.Value
		}
		for _, io := range got.Outputs {
			out += io.Value
		}
		if len(got.Inputs) == 0 || got.Fee != in-out || got.Fee <= 0 {
			t.Errorf("Tx(%s): fee %d for inputs of %d and outputs of %d", got.TxID, got.Fee, in, out)
		}
	}
}

// An unknown transaction, and a string that is none, are ErrNotFound.
func unknownTxIsNotFound(t *testing.T, src chain.Source) {
	for _, txid := range []string{unknownTxID(), "not a txid"} {
		if tx, err := src.Tx(ctxFor(t), txid); !errors.Is(err, chain.ErrNotFound) {
			t.Errorf("Tx(%q) = %+v, %v; want ErrNotFound", txid, tx, err)
		}
	}
}

// unknownTxID is a transaction ID no chain holds.
func unknownTxID() string {
	h := sha256.Sum256([]byte("sourcetest: no such transaction"))
	return hex.EncodeToString(h[:])
}

// The tip's height has the tip's hash, no block is above it, and every
// listed transaction is at or below it.
func tipAndBlockHashAgree(t *testing.T, src chain.Source, c Chain) {
	ctx := ctxFor(t)
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hash, err := src.BlockHash(ctx, tip.Height); err != nil || hash != tip.Hash {
		t.Errorf("BlockHash(%d) = %q, %v; the tip is %+v", tip.Height, hash, err, tip)
	}
	if hash, err := src.BlockHash(ctx, tip.Height+1); !errors.Is(err, chain.ErrNotFound) {
		t.Errorf("BlockHash above the tip = %q, %v; want ErrNotFound", hash, err)
	}
	if _, err := src.BlockHash(ctx, -1); !errors.Is(err, chain.ErrInvalidArgument) {
		t.Errorf("BlockHash(-1): %v, want ErrInvalidArgument", err)
	}
	genesis, err := src.BlockHash(ctx, 0)
	if _, ok := chain.CanonicalTxID(genesis); err != nil || !ok {
		t.Errorf("BlockHash(0) = %q, %v", genesis, err)
	}
	for _, tx := range Walk(t, src, c.Busy) {
		if tx.BlockHeight > tip.Height {
			t.Fatalf("%s at height %d, above the tip %d", tx.TxID, tx.BlockHeight, tip.Height)
		}
	}
}

// transactionsNameTheirBlocksAndSpends: a listed confirmed transaction
// names its block, the one BlockHash gives at its height, and every input
// names the output it spends (txid:vout), what the follower tells a
// reorg and a replacement by.
func transactionsNameTheirBlocksAndSpends(t *testing.T, src chain.Source, c Chain) {
	ctx := ctxFor(t)
	for _, tx := range Walk(t, src, c.Busy) {
		hash, err := src.BlockHash(ctx, tx.BlockHeight)
		if err != nil || tx.BlockHash != hash {
			t.Errorf("%s at height %d names block %q; the block there is %q (%v)", tx.TxID, tx.BlockHeight, tx.BlockHash, hash, err)
		}
		for _, in := range tx.Inputs {
			txid, vout, found := strings.Cut(in.Spends, ":")
			if _, ok := chain.CanonicalTxID(txid); !ok || !found || vout == "" {
				t.Errorf("an input of %s spends %q, not txid:vout", tx.TxID, in.Spends)
			}
		}
	}
}
