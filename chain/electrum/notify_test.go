package electrum_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/electrum"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// waitFor bounds how long a test waits for a notification before it
// fails: far longer than the server's poll, never a measure of speed.
const waitFor = 20 * time.Second

// next is the first change on changes that satisfies want, failing t
// when the channel closes or none comes.
func next(t *testing.T, changes <-chan chain.Change, what string, want func(chain.Change) bool) chain.Change {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case c, open := <-changes:
			if !open {
				t.Fatalf("the notifications ended before %s", what)
			}
			if want(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("no notification of %s", what)
		}
	}
}

func names(addr string) func(chain.Change) bool {
	return func(c chain.Change) bool { return slices.Contains(c.Addresses, addr) }
}

// A watched address is named when a payment to it enters the mempool
// and again when a block confirms it; the block's tip comes too. An
// address not watched is never named.
func TestNotifiesANewBlockAndAMempoolPayment(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	src := open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched, other := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH)), sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2PKH))
	if err := src.Watch(ctx, []string{watched.Address}); err != nil {
		t.Fatal(err)
	}
	changes, err := src.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, watched.Address)); s.TxCount() != 0 {
		t.Fatalf("a new address has %+v", s) // and its empty history is kept under its status
	}
	sourcetest.Must[string](t)(n.Pay(other.Address, 5_000))
	txid := sourcetest.Must[string](t)(n.Pay(watched.Address, 12_000))
	c := next(t, changes, "the payment", names(watched.Address))
	if slices.Contains(c.Addresses, other.Address) || c.All {
		t.Errorf("the payment's change %+v names more than the watched address", c)
	}
	if pool := sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, watched.Address)); len(pool) != 1 || pool[0].TxID != txid {
		t.Fatalf("after the notification the mempool lists %v, want the payment: the history kept was not dropped", ids(pool))
	}
	mined := sourcetest.Must[[]string](t)(n.Mine(1))
	var sawTip, sawConfirmed bool // told apart or in one change
	next(t, changes, "the block's tip and the payment confirmed", func(c chain.Change) bool {
		sawTip = sawTip || c.Tip.Hash == mined[0]
		sawConfirmed = sawConfirmed || names(watched.Address)(c)
		return sawTip && sawConfirmed
	})
	if page := sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, watched.Address, "")); len(page) != 1 || page[0].BlockHash != mined[0] {
		t.Fatalf("after the block the first page is %+v, want the payment in it", page)
	}

	cancel()
	ends(t, changes)
}

// ends fails t unless changes is closed soon.
func ends(t *testing.T, changes <-chan chain.Change) {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case _, open := <-changes:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the notifications did not end")
		}
	}
}

// A reorganisation names no address but says All; when the connection
// is lost the channel closes, and Notify again carries on with the
// addresses watched before.
func TestAReorgSaysAllAndALostConnectionEnds(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	src := open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{})
	ctx := context.Background()
	k := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	if err := src.Watch(ctx, []string{k.Address}); err != nil {
		t.Fatal(err)
	}
	changes := sourcetest.Must[<-chan chain.Change](t)(src.Notify(ctx))
	branch := sourcetest.Must[[]string](t)(n.Reorg(1))
	var sawAll, sawTip bool // the branch's blocks may be told one by one
	next(t, changes, "the reorganisation", func(c chain.Change) bool {
		sawAll = sawAll || c.All
		sawTip = sawTip || c.Tip.Hash == branch[len(branch)-1]
		return sawAll && sawTip
	})

	srv.DropConnections()
	ends(t, changes)
	again := sourcetest.Must[<-chan chain.Change](t)(src.Notify(ctx))
	sourcetest.Must[string](t)(n.Pay(k.Address, 3_000))
	next(t, again, "a payment after the connection was made again", names(k.Address))
}
