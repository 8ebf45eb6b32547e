package sourcetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// historyTTL is longer than any test: a HistoryCache refetches only
// when told to.
const historyTTL = time.Hour

// Listing is addr's history as History lists it: the mempool's
// transactions, then the confirmed ones, newest first.
func Listing(t *testing.T, src chain.Source, addr string) []chain.Tx {
	t.Helper()
	return append(mempool(t, src, addr), Walk(t, src, addr)...)
}

// windows are (offset, limit) pairs that start and end inside, at and
// across the source's chain pages.
var windows = [][2]int{{0, 100}, {0, 1}, {3, 10}, {20, 10}, {24, 2}, {25, 25}, {26, 100}, {49, 3}}

// A HistoryCache over the source serves every window of the listing the
// source gives, with the source's lifetime count.
func historyCachePagesTheSameHistory(t *testing.T, src chain.Source, c Chain) {
	for _, addr := range []string{c.Busy, c.Pending, c.Unused} {
		checkWindows(t, chain.NewHistoryCache(src, historyTTL, nil, 16), src, addr, false)
	}
}

// checkWindows checks that cache serves every window of addr's listing
// as the source gives it now.
func checkWindows(t *testing.T, cache *chain.HistoryCache, src chain.Source, addr string, forceRefresh bool) {
	t.Helper()
	listing := Listing(t, src, addr)
	s := stats(t, src, addr)
	for _, w := range windows {
		offset, limit := w[0], w[1]
		page, err := cache.Page(ctxFor(t), addr, offset, limit, forceRefresh)
		if err != nil {
			t.Fatalf("%s: Page(%d, %d): %v", addr, offset, limit, err)
		}
		forceRefresh = false
		want := listing[min(offset, len(listing)):min(offset+limit, len(listing))]
		if !reflect.DeepEqual(IDs(page.Txs), IDs(want)) {
			t.Fatalf("%s: Page(%d, %d) holds %v, want %v", addr, offset, limit, IDs(page.Txs), IDs(want))
		}
		if page.TotalCount != s.TxCount() || page.NextOffset != offset+len(want) || page.HasMore != (offset+len(want) < len(listing)) {
			t.Errorf("%s: Page(%d, %d): total %d, next %d, more %v; the source has %d in all, %d listed",
				addr, offset, limit, page.TotalCount, page.NextOffset, page.HasMore, s.TxCount(), len(listing))
		}
		if page.MempoolCount != int(s.Mempool.TxCount) {
			t.Errorf("%s: Page(%d, %d) counts %d in the mempool, the source %d", addr, offset, limit, page.MempoolCount, s.Mempool.TxCount)
		}
	}
}
