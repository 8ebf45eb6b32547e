package btcdsource

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

const historyTTL = time.Hour

// requestCounter counts the requests a Source sends to btcd, by JSON-RPC
// method ("batch:" and the method for a batch).
type requestCounter struct {
	mu   sync.Mutex
	sent map[string]int
}

func countRequests(src *Source) *requestCounter {
	c := &requestCounter{sent: map[string]int{}}
	src.rpc.sent = func(method string) {
		c.mu.Lock()
		c.sent[method]++
		c.mu.Unlock()
	}
	return c
}

// since is what was sent since the last call.
func (c *requestCounter) since() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := c.sent
	c.sent = map[string]int{}
	return sent
}

// total is every request sent since the last since.
func (c *requestCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.sent {
		n += k
	}
	return n
}

func wantSent(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s sent %v, want %v", what, got, want)
	}
}

// What each call costs in requests to btcd, as DESIGN.md counts it: an
// address's index makes its stats, its mempool and a page after a cursor
// one request each however long the history, and a block's height is
// asked once.
func TestRequestsPerCall(t *testing.T) {
	n := regtest.Shared(t)
	ctx := context.Background()
	k := paidKey(t, n, 30, 10)
	sourcetest.Must[string](t)(k.Fund(1))
	src := open(t, n, Options{})
	sent := countRequests(src)

	sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, k.Address))
	// The 31 spend from coins of the harness's wallet: their outputs are
	// asked for once, in one batch, and kept.
	wantSent(t, "a first AddressStats of 31 transactions", sent.since(), map[string]int{"searchrawtransactions": 1, "batch:getrawtransaction": 1})
	sourcetest.Must[chain.AddressStats](t)(src.AddressStats(ctx, k.Address))
	wantSent(t, "AddressStats again", sent.since(), map[string]int{"searchrawtransactions": 1})
	sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, k.Address))
	wantSent(t, "MempoolTxs", sent.since(), map[string]int{"searchrawtransactions": 1})

	first := sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, ""))
	wantSent(t, "a first page", sent.since(), map[string]int{"searchrawtransactions": 2, "getblockheader": 1})
	sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, ""))
	wantSent(t, "the first page again", sent.since(), map[string]int{"searchrawtransactions": 2})
	second := sourcetest.Must[[]chain.Tx](t)(src.ChainTxs(ctx, k.Address, first[len(first)-1].TxID))
	wantSent(t, "the page after a cursor, in another block", sent.since(), map[string]int{"searchrawtransactions": 1, "getblockheader": 1})
	if len(first) != chain.ChainPageSize || len(second) != 30-chain.ChainPageSize {
		t.Fatalf("pages of %d and %d", len(first), len(second))
	}

	sourcetest.Must[chain.Tx](t)(src.Tx(ctx, second[0].TxID))
	wantSent(t, "Tx of a transaction in a block seen, spending outputs kept", sent.since(), map[string]int{"getrawtransaction": 1})
	sourcetest.Must[chain.BlockRef](t)(src.Tip(ctx))
	sourcetest.Must[chain.BlockRef](t)(src.Tip(ctx))
	wantSent(t, "Tip twice, at the block of the first page", sent.since(), map[string]int{"getbestblockhash": 2})

	// A History refresh asks for the stats, the mempool and the first
	// page at once; they share one read of the index unless one of them
	// starts after another's read ended. Sharing nothing (a loaded
	// machine may start them apart), they cost what they cost alone: one,
	// one and two.
	page, err := chain.NewHistoryCache(src, historyTTL, nil, 4).Page(ctx, k.Address, 0, 25, false)
	if err != nil || page.TotalCount != 31 || len(page.Txs) != 25 {
		t.Fatalf("a History page: %d of %d, %v", len(page.Txs), page.TotalCount, err)
	}
	if got := sent.since(); got["searchrawtransactions"] < 2 || got["searchrawtransactions"] > 4 || len(got) != 1 {
		t.Errorf("a History page sent %v, want 2 searchrawtransactions when the calls overlap, at most 4 when they do not", got)
	}
}
