package btcdsource

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// changeWait bounds the wait for a notification: generous, since it
// asserts that one comes, not how fast.
const changeWait = 10 * time.Second

// notified is src's notifications, ended with the test.
func notified(t *testing.T, src *Source) <-chan chain.Change {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	changes, err := src.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return changes
}

// awaitChange reads changes until one is what want says, and returns it.
func awaitChange(t *testing.T, changes <-chan chain.Change, what string, want func(chain.Change) bool) chain.Change {
	t.Helper()
	deadline := time.After(changeWait)
	for {
		c, open := receive(t, changes, deadline, "a change "+what)
		if !open {
			t.Fatalf("the notifications ended before a change %s", what)
		}
		if want(c) {
			return c
		}
	}
}

// awaitClosed reads changes until the notifications end.
func awaitClosed(t *testing.T, changes <-chan chain.Change) {
	t.Helper()
	deadline := time.After(changeWait)
	for {
		if _, open := receive(t, changes, deadline, "the notifications ending"); !open {
			return
		}
	}
}

// receive is the next change, or open false when the notifications
// ended; it fails the test at deadline.
func receive(t *testing.T, changes <-chan chain.Change, deadline <-chan time.Time, waitingFor string) (c chain.Change, open bool) {
	t.Helper()
	select {
	case c, open = <-changes:
		return c, open
	case <-deadline:
		t.Fatalf("waited in vain for %s", waitingFor)
		return c, false
	}
}

// namesSome is a change that names addresses, or all.
func namesSome(c chain.Change) bool { return len(c.Addresses) > 0 || c.All }

func names(address string) func(chain.Change) bool {
	return func(c chain.Change) bool { return slices.Contains(c.Addresses, address) }
}

// watch is Watch of addresses, which must succeed.
func watch(t *testing.T, src *Source, addresses ...string) {
	t.Helper()
	if err := src.Watch(context.Background(), addresses); err != nil {
		t.Fatal(err)
	}
}

func newAddress(t *testing.T, n *regtest.Node) string {
	t.Helper()
	return sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH)).Address
}

// A payment to a watched address is named as soon as btcd takes it into
// its mempool, with no tip: before any block.
func TestAPaymentToAWatchedAddressIsNamedBeforeItsBlock(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	watched := newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, watched)
	sourcetest.Must[string](t)(n.Pay(watched, 20_000))
	c := awaitChange(t, changes, "naming the payment's address", namesSome)
	if !slices.Equal(c.Addresses, []string{watched}) || c.All || c.Tip != (chain.BlockRef{}) {
		t.Fatalf("the payment's change is %+v, want its address alone and no tip (no block)", c)
	}
}

// A block is a change with the new tip that names the watched addresses
// its transactions pay, and neither an unwatched address it pays nor a
// watched one it does not.
func TestABlockNamesTheWatchedAddressesItTouches(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	paid, idle, unwatched := newAddress(t, n), newAddress(t, n), newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, paid, idle)
	sourcetest.Must[string](t)(n.Pay(unwatched, 30_000))
	sourcetest.Must[string](t)(n.Pay(paid, 30_000))
	awaitChange(t, changes, "naming the payment in the mempool", names(paid))
	mined := sourcetest.Must[[]string](t)(n.Mine(1))
	c := awaitChange(t, changes, "with the new tip", func(c chain.Change) bool { return c.Tip.Hash == mined[0] })
	height, _, _ := n.Tip()
	if c.Tip.Height != height || c.All || !slices.Equal(c.Addresses, []string{paid}) {
		t.Fatalf("the block's change is %+v, want height %d naming %s alone", c, height, paid)
	}
}

// A spend from a watched address is named though it pays no watched
// address (no change comes back) and the coin it spends was received
// before the address was watched, which btcd's filter never saw: the
// read of the address's history, which the follower makes right after
// Watch, gave btcd the coin's outpoint. That read is of the whole
// history, though the address was read before (a History view), when
// no outpoint of it was kept.
func TestASpendFromAWatchedAddressIsNamed(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	k := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	elsewhere := newAddress(t, n)
	sourcetest.Must[string](t)(k.Fund(20_000))
	sourcetest.Must[[]string](t)(n.Mine(1))
	ctx := context.Background()
	sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, k.Address))
	changes := notified(t, src)
	watch(t, src, k.Address)
	sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, k.Address))
	sourcetest.Must[string](t)(k.Send(elsewhere, 19_000, 600)) // 400 left: no change output
	c := awaitChange(t, changes, "naming the spending address", namesSome)
	if !slices.Equal(c.Addresses, []string{k.Address}) {
		t.Fatalf("the spend's change names %v, want %s", c.Addresses, k.Address)
	}
	mined := sourcetest.Must[[]string](t)(n.Mine(1))
	c = awaitChange(t, changes, "with the spend's block", func(c chain.Change) bool { return c.Tip.Hash == mined[0] })
	if !slices.Equal(c.Addresses, []string{k.Address}) {
		t.Fatalf("the spend's block names %v, want %s", c.Addresses, k.Address)
	}
}

// A payment to a watched address that leaves the mempool through a
// conflict touching no watched address (its sender spends the same coin
// back to itself) is named at once: the read that found the payment
// gave btcd the coin it spends. Without that only the follower's next
// full sweep would find the payment gone.
func TestAConflictWithAPendingPaymentIsNamed(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	k := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	sourcetest.Must[string](t)(k.Fund(50_000))
	sourcetest.Must[[]string](t)(n.Mine(1))
	watched := newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, watched)
	paid := sourcetest.Must[string](t)(k.Send(watched, 20_000, 1_000))
	awaitChange(t, changes, "naming the payment", names(watched))
	ctx := context.Background()
	if pool := sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, watched)); len(pool) != 1 || pool[0].TxID != paid {
		t.Fatalf("the mempool of %s holds %v, want the payment %s", watched, pool, paid)
	}
	sourcetest.Must[string](t)(k.Cancel(paid, 5_000))
	c := awaitChange(t, changes, "naming the conflict's victim", namesSome)
	if !slices.Equal(c.Addresses, []string{watched}) {
		t.Fatalf("the conflict names %v, want %s", c.Addresses, watched)
	}
	if pool := sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, watched)); len(pool) != 0 {
		t.Fatalf("after the conflict the mempool of %s still holds %v", watched, pool)
	}
}

// Watch replaces the watched set: an address no longer watched is no
// longer named, one newly watched is.
func TestWatchChangesWhatIsNamed(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	a, b := newAddress(t, n), newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, a)
	sourcetest.Must[string](t)(n.Pay(b, 10_000))
	sourcetest.Must[string](t)(n.Pay(a, 10_000))
	if c := awaitChange(t, changes, "naming an address", namesSome); !slices.Equal(c.Addresses, []string{a}) {
		t.Fatalf("watching %s, the payments name %v", a, c.Addresses)
	}
	watch(t, src, b)
	sourcetest.Must[string](t)(n.Pay(a, 11_000))
	sourcetest.Must[string](t)(n.Pay(b, 11_000))
	if c := awaitChange(t, changes, "naming an address", namesSome); !slices.Equal(c.Addresses, []string{b}) {
		t.Fatalf("watching %s instead, the payments name %v", b, c.Addresses)
	}
}

// A block disconnected (a reorg) cannot name what it touched: the
// change says All, and the tip comes to the new branch's.
func TestAReorgIsAll(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	changes := notified(t, src)
	watch(t, src, newAddress(t, n))
	mined := sourcetest.Must[[]string](t)(n.Mine(1))
	awaitChange(t, changes, "with the block", func(c chain.Change) bool { return c.Tip.Hash == mined[0] })
	branch := sourcetest.Must[[]string](t)(n.Reorg(1))
	c := awaitChange(t, changes, "saying All", func(c chain.Change) bool { return c.All })
	if c.Tip.Hash != branch[len(branch)-1] {
		awaitChange(t, changes, "with the new branch's tip", func(c chain.Change) bool { return c.Tip.Hash == branch[len(branch)-1] })
	}
}

// The connection dropped, the channel closes; a new Notify loads the
// watched set again.
func TestADroppedConnectionClosesTheChannel(t *testing.T) {
	n := regtest.Shared(t)
	via := relayTo(t, n.RPC().Host)
	src := openVia(t, n, via.addr, Options{})
	watched := newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, watched)
	via.cut()
	awaitClosed(t, changes)

	again := notified(t, src)
	sourcetest.Must[string](t)(n.Pay(watched, 12_000))
	awaitChange(t, again, "naming the address on the new connection", names(watched))
}

// A message over the bound ends the connection rather than be read.
func TestAMessageOverItsBoundEndsTheNotifications(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	src.notify.messageBytesMax = 100 // btcd's answers fit; a block's notification does not
	changes := notified(t, src)
	sourcetest.Must[[]string](t)(n.Mine(1))
	awaitClosed(t, changes)
}

// With --chain-proxy the notifications come through the proxy too.
func TestNotificationsGoThroughTheProxy(t *testing.T) {
	n := regtest.Shared(t)
	proxy, connects := socks5Proxy(t)
	src := open(t, n, Options{Proxy: "socks5://" + proxy})
	watched := newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, watched)
	sourcetest.Must[string](t)(n.Pay(watched, 13_000))
	awaitChange(t, changes, "naming the address", names(watched))
	if got := connects.Load(); got != 1 {
		t.Errorf("the proxy made %d connections for one websocket", got)
	}
}

// What reading an address a block named costs, as the follower reads
// it (its stats, its mempool and its first page, one after the other):
// four searches, one batch for the transaction the payment spends from
// (a coin of the harness's wallet, whose outputs are kept after), and no
// block header (the notification told the block's height, and the
// page's older blocks were seen before). DESIGN.md counts the requests
// per block from this.
func TestReadingWhatABlockNamedCostsFourRequests(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{})
	ctx := context.Background()
	watched := newAddress(t, n)
	changes := notified(t, src)
	watch(t, src, watched)
	sourcetest.Must[string](t)(n.Pay(watched, 14_000))
	sourcetest.Must[[]string](t)(n.Mine(1))
	sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, watched, "")) // the follower's first read
	sent := countRequests(src)
	sourcetest.Must[string](t)(n.Pay(watched, 15_000))
	mined := sourcetest.Must[[]string](t)(n.Mine(1))
	awaitChange(t, changes, "naming the address with the block", func(c chain.Change) bool {
		return c.Tip.Hash == mined[0] && names(watched)(c)
	})
	sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, watched))
	sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, watched))
	sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, watched, ""))
	wantSent(t, "reading an address a block named", sent.since(), map[string]int{"searchrawtransactions": 4, "batch:getrawtransaction": 1})
}
