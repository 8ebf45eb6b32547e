package electrum_test

import (
	"context"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/electrum"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// counted are the methods whose requests the costs are counted in.
var counted = []string{
	"blockchain.scripthash.get_history", "blockchain.transaction.get",
	"blockchain.block.header", "blockchain.block.headers", "blockchain.headers.subscribe",
	"blockchain.scripthash.subscribe",
}

// requests is what the server was asked during do, by method (short
// names: the last part).
func requests(t *testing.T, srv *electrumtest.Server, do func()) map[string]int {
	t.Helper()
	before := map[string]int{}
	for _, m := range counted {
		before[m] = srv.Requests(m)
	}
	do()
	got := map[string]int{}
	for _, m := range counted {
		if d := srv.Requests(m) - before[m]; d > 0 {
			got[m] = d
		}
	}
	return got
}

// headerRequests counts the requests for headers, one or a run.
func headerRequests(got map[string]int) int {
	return got["blockchain.block.header"] + got["blockchain.block.headers"]
}

// What one History page and one follower sweep of an address cost
// (DESIGN.md): the history, then only what is not kept (transactions
// never change under their ID); the headers of recent blocks are asked
// each time, in one run; a watched address whose status did not change
// costs no history at all.
func TestRequestsPerCall(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	src := open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{})
	ctx := context.Background()
	k := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	for i := range 30 {
		sourcetest.Must[string](t)(k.Fund(int64(10_000 + i)))
		if i%10 == 9 {
			sourcetest.Must[[]string](t)(n.Mine(1))
		}
	}
	sourcetest.Must[string](t)(k.Fund(5_000)) // one in the mempool

	cold := requests(t, srv, func() { sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, "")) })
	if cold["blockchain.scripthash.get_history"] != 1 || cold["blockchain.transaction.get"] < chain.ChainPageSize || headerRequests(cold) != 1 {
		t.Errorf("a first page: %v; want 1 history, its %d transactions and those they spend from, 1 run of headers", cold, chain.ChainPageSize)
	}
	page := requests(t, srv, func() { sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, "")) })
	if page["blockchain.scripthash.get_history"] != 1 || page["blockchain.transaction.get"] != 0 || headerRequests(page) != 1 {
		t.Errorf("the page again: %v; want 1 history and 1 run of headers", page)
	}
	sweep := func() {
		sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, k.Address))
		sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, k.Address))
		sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, ""))
	}
	sweep() // reads the rest of the history, and its mempool's inputs
	if got := requests(t, srv, sweep); got["blockchain.scripthash.get_history"] != 3 || got["blockchain.transaction.get"] != 0 || headerRequests(got) != 1 {
		t.Errorf("a sweep of an address not watched: %v; want 3 histories and 1 run of headers", got)
	}
	if got := requests(t, srv, func() { sourcetest.Must[struct{}](t)(struct{}{}, src.Watch(ctx, []string{k.Address})) }); got["blockchain.scripthash.subscribe"] != 1 {
		t.Errorf("watching an address: %v; want 1 subscription", got)
	}
	sweep() // reads the history under the status the subscription told
	if got := requests(t, srv, sweep); got["blockchain.scripthash.get_history"] != 0 || got["blockchain.transaction.get"] != 0 || headerRequests(got) != 1 {
		t.Errorf("a sweep of a watched address that did not change: %v; want no history and 1 run of headers", got)
	}
	mempool := sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, k.Address))
	if got := requests(t, srv, func() { sourcetest.Must[chain.Tx](t)(src.Tx(ctx, mempool[0].TxID)) }); got["blockchain.transaction.get"] != 1 || headerRequests(got) != 0 {
		t.Errorf("Tx of a mempool transaction whose inputs' are kept: %v; want 1 transaction", got)
	}
	confirmed := sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, ""))[0]
	if got := requests(t, srv, func() { sourcetest.Must[chain.Tx](t)(src.Tx(ctx, confirmed.TxID)) }); got["blockchain.transaction.get"] != 1 || headerRequests(got) != 1 {
		t.Errorf("Tx of a confirmed transaction whose inputs' are kept: %v; want 1 transaction and 1 run of headers", got)
	}
	if got := requests(t, srv, func() { sourcetest.Must[chain.BlockRef](t)(src.Tip(ctx)) }); got["blockchain.headers.subscribe"] != 1 || len(got) != 1 {
		t.Errorf("Tip: %v; want 1 headers.subscribe", got)
	}
}
