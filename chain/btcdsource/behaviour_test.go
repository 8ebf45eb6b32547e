package btcdsource

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// A spend replaced by one paying a higher fee (BIP 125, which btcd
// takes) leaves the mempool: the listings and counters of both addresses
// hold the replacement alone, and the original is not found.
func TestAReplacedSpendLeavesTheMempool(t *testing.T) {
	n := regtest.Shared(t)
	ctx := context.Background()
	from := must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	to := must[*regtest.Key](t)(n.NewKey(regtest.P2PKH))
	must[string](t)(from.Fund(100_000))
	must[[]string](t)(n.Mine(1))
	src := open(t, n, Options{})
	original := must[string](t)(from.Send(to.Address, 30_000, 1_000))
	if pool := must[[]chain.Tx](t)(src.MempoolTxs(ctx, to.Address)); len(pool) != 1 || pool[0].TxID != original {
		t.Fatalf("before the replacement the payee's mempool is %v", sourcetest.IDs(pool))
	}
	replacement := must[string](t)(from.Replace(original, 6_000))
	for _, addr := range []string{from.Address, to.Address} {
		pool := must[[]chain.Tx](t)(src.MempoolTxs(ctx, addr))
		s := must[chain.AddressStats](t)(src.AddressStats(ctx, addr))
		if len(pool) != 1 || pool[0].TxID != replacement || pool[0].Fee != 6_000 || s.Mempool.TxCount != 1 {
			t.Errorf("%s after the replacement: mempool %v, counters %+v", addr, sourcetest.IDs(pool), s.Mempool)
		}
	}
	if _, err := src.Tx(ctx, original); !errors.Is(err, chain.ErrNotFound) {
		t.Errorf("the replaced transaction: %v, want ErrNotFound", err)
	}
}

// An address with more transactions than TxsPerAddressMax is an
// upstream error that says so, from every call about it; one with as
// many is read whole.
func TestAnAddressOverTheBoundIsAnUpstreamError(t *testing.T) {
	n := regtest.Shared(t)
	ctx := context.Background()
	k := paidKey(t, n, 6, 6) // 6 confirmed
	for i := range 3 {
		must[string](t)(k.Fund(int64(5_000 + i))) // and 3 in the mempool
	}
	atBound := open(t, n, Options{TxsPerAddressMax: 9})
	atBound.chunk = 3
	if s, err := atBound.AddressStats(ctx, k.Address); err != nil || s.TxCount() != 9 {
		t.Fatalf("at the bound: %+v, %v", s, err)
	}
	over := open(t, n, Options{TxsPerAddressMax: 8})
	over.chunk = 3
	calls := map[string]func() error{
		"AddressStats": func() error { _, err := over.AddressStats(ctx, k.Address); return err },
		"MempoolTxs":   func() error { _, err := over.MempoolTxs(ctx, k.Address); return err },
		"ChainTxs":     func() error { _, err := over.ChainTxs(ctx, k.Address, ""); return err },
	}
	for name, call := range calls {
		err := call()
		var ue *chain.UpstreamError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "more than 8 transactions") {
			t.Errorf("%s over the bound: %v, want an UpstreamError naming the bound", name, err)
		}
	}
}

// A page after a cursor that a reorg took out of the chain is empty, as
// Esplora answers, although the index held the cursor; once the cursor
// is mined again its page is the history before it.
func TestACursorAReorgTookOutGivesAnEmptyPage(t *testing.T) {
	n := regtest.Shared(t)
	ctx := context.Background()
	k := paidKey(t, n, 30, 10)
	src := open(t, n, Options{})
	first := must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, ""))
	cursor := first[5].TxID // in the newest block
	before := must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, cursor))
	if len(before) != 24 {
		t.Fatalf("the page after position 5 holds %d", len(before))
	}
	must[[]string](t)(n.Reorg(1))
	if page, err := src.ChainTxs(ctx, k.Address, cursor); err != nil || len(page) != 0 {
		t.Fatalf("after the reorg the page after the cursor holds %d (%v), want none", len(page), err)
	}
	must[[]string](t)(n.Mine(1))
	walked := sourcetest.Walk(t, src, k.Address)
	at := slices.IndexFunc(walked, func(tx chain.Tx) bool { return tx.TxID == cursor })
	page := must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, cursor))
	if at < 0 || !slices.Equal(sourcetest.IDs(page), sourcetest.IDs(walked[at+1:min(at+26, len(walked))])) {
		t.Fatalf("once mined again, the page after the cursor is %v", sourcetest.IDs(page))
	}
}

// chain.CheckNetwork takes the node on regtest and refuses it on the
// other networks.
func TestCheckNetworkKnowsTheNodesChain(t *testing.T) {
	src := open(t, regtest.Shared(t), Options{})
	if err := chain.CheckNetwork(context.Background(), src, chain.Regtest); err != nil {
		t.Errorf("on regtest: %v", err)
	}
	if err := chain.CheckNetwork(context.Background(), src, chain.Mainnet); !errors.Is(err, chain.ErrWrongNetwork) {
		t.Errorf("on mainnet: %v, want ErrWrongNetwork", err)
	}
}

// Unconfirmed transactions are listed newest first as far as btcd can
// tell: a spend before the payment whose coin it spends, and its own
// spend before it, whatever order btcd's index gives them in.
func TestTheMempoolListsASpendBeforeWhatItSpends(t *testing.T) {
	n := regtest.Shared(t)
	k := must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	other := must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	payment := must[string](t)(k.Fund(50_000))
	first := must[string](t)(k.Send(other.Address, 5_000, 1_000))  // spends the payment
	second := must[string](t)(k.Send(other.Address, 6_000, 1_000)) // spends first's change
	src := open(t, n, Options{})
	for range 3 {
		if got := sourcetest.IDs(must[[]chain.Tx](t)(src.MempoolTxs(context.Background(), k.Address))); !slices.Equal(got, []string{second, first, payment}) {
			t.Fatalf("the mempool lists %v, want the second spend, the first, the payment", got)
		}
	}
	if got := sourcetest.IDs(must[[]chain.Tx](t)(src.MempoolTxs(context.Background(), other.Address))); !slices.Equal(got, []string{second, first}) {
		t.Fatalf("the payee's mempool lists %v", got)
	}
	must[[]string](t)(n.Mine(1))
}
