package chain

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const historyTTL = time.Minute

func newTestCache(t *testing.T, f *fakeEsplora, maxAddresses int) (*HistoryCache, *testClock) {
	t.Helper()
	clock := &testClock{now: simNow}
	c, _ := f.client(t, ClientOptions{})
	c.now = clock.Now
	return NewHistoryCache(c, historyTTL, clock.Now, maxAddresses), clock
}

// calls snapshots the fake's per-endpoint counters.
func calls(f *fakeEsplora) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[string]int{}
	for k, v := range f.calls {
		m[k] = v
	}
	return m
}

// diff is the calls made since before.
func diff(f *fakeEsplora, before map[string]int) map[string]int {
	after := calls(f)
	d := map[string]int{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

func wantCalls(t *testing.T, what string, got map[string]int, want map[string]int) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: upstream calls %v, want %v", what, got, want)
	}
}

var head = map[string]int{"address": 1, "mempool": 1, "chain": 1}

// fakeExpected is the listing Page should serve: mempool then confirmed.
func fakeExpected(t *testing.T, f *fakeEsplora, addr string) []Tx {
	t.Helper()
	f.mu.Lock()
	var out []Tx
	for _, w := range f.mempool[addr] {
		tx, err := w.toTx()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tx)
	}
	f.mu.Unlock()
	return append(out, f.listing(t, addr)...)
}

func checkPage(t *testing.T, got HistoryPage, want []Tx, offset, limit int) {
	t.Helper()
	end := min(offset+limit, len(want), HistoryOffsetCeiling)
	exp := []Tx{}
	if offset < end {
		exp = want[offset:end]
	}
	if !reflect.DeepEqual(got.Txs, exp) {
		t.Fatalf("page [%d,+%d): %d transactions differ from the upstream's %d", offset, limit, len(got.Txs), len(exp))
	}
	if got.Offset != offset || got.NextOffset != offset+len(exp) {
		t.Fatalf("offsets %d→%d, want %d→%d", got.Offset, got.NextOffset, offset, offset+len(exp))
	}
	if hasMore := got.NextOffset < min(len(want), HistoryOffsetCeiling); got.HasMore != hasMore {
		t.Fatalf("HasMore %v at %d of %d", got.HasMore, got.NextOffset, len(want))
	}
}

func TestHistoryPageMempoolFirst(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 60, 3)
	h, _ := newTestCache(t, f, 10)
	ctx := context.Background()
	want := fakeExpected(t, f, fakeAddr)

	p, err := h.Page(ctx, fakeAddr, 0, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, want, 0, 5)
	if p.TotalCount != 63 || p.MempoolCount != 3 || p.Txs[2].Confirmed || !p.Txs[3].Confirmed || !p.FetchedAt.Equal(simNow) {
		t.Fatalf("page %+v", p)
	}
	for _, o := range []int{1, 3, 5, 24, 27, 28, 50, 59, 62, 63, 80} {
		for _, l := range []int{1, 2, 25, 26, 100} {
			p, err := h.Page(ctx, fakeAddr, o, l, false)
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, p, want, o, l)
		}
	}
}

func TestHistoryEmptyAddress(t *testing.T) {
	f := newFakeEsplora(t)
	h, _ := newTestCache(t, f, 10)
	p, err := h.Page(context.Background(), fakeAddr, 0, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Txs) != 0 || p.HasMore || p.TotalCount != 0 || p.NextOffset != 0 {
		t.Fatalf("empty history: %+v", p)
	}
}

func TestHistoryTTL(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 30, 1)
	h, clock := newTestCache(t, f, 10)
	ctx := context.Background()

	before := calls(f)
	if _, err := h.Page(ctx, fakeAddr, 0, 25, false); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, "first page", diff(f, before), head)

	before = calls(f)
	clock.Advance(historyTTL - time.Second)
	if _, err := h.Page(ctx, fakeAddr, 0, 25, false); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, "within the TTL", diff(f, before), nil)

	f.pushConfirmed(fakeAddr, "new")
	clock.Advance(time.Second)
	before = calls(f)
	p, err := h.Page(ctx, fakeAddr, 0, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, "at the TTL", diff(f, before), head)
	if p.TotalCount != 32 || p.Txs[1].TxID != f.listing(t, fakeAddr)[0].TxID || !p.FetchedAt.Equal(clock.Now()) {
		t.Fatalf("after the TTL the new transaction is not on top: %+v", p)
	}
}

func TestHistoryForceRefreshBypassesCache(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 80, 0)
	h, _ := newTestCache(t, f, 10)
	ctx := context.Background()
	if _, err := h.Page(ctx, fakeAddr, 50, 25, false); err != nil {
		t.Fatal(err)
	}

	f.pushConfirmed(fakeAddr, "n1")
	before := calls(f)
	p, err := h.Page(ctx, fakeAddr, 0, 25, true)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, "forced first page", diff(f, before), head)
	checkPage(t, p, fakeExpected(t, f, fakeAddr), 0, 25)

	// A forced deep page refetches its pages, but from the cursors: no walk.
	before = calls(f)
	p, err = h.Page(ctx, fakeAddr, 51, 25, true)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, "forced deep page", diff(f, before), map[string]int{"address": 1, "mempool": 1, "chain": 2})
	checkPage(t, p, fakeExpected(t, f, fakeAddr), 51, 25)
}

func TestHistoryDeepPageUsesCursors(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 2000, 0)
	h, clock := newTestCache(t, f, 10)
	ctx := context.Background()
	want := fakeExpected(t, f, fakeAddr)

	// The first visit to offset 1000 walks: the first page, then the 40
	// pages down to positions 1000..1024.
	before := calls(f)
	p, err := h.Page(ctx, fakeAddr, 1000, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, want, 1000, 25)
	wantCalls(t, "first deep page", diff(f, before), map[string]int{"address": 1, "mempool": 1, "chain": 41})

	// The next page is one fetch from the cursor just learned.
	before = calls(f)
	p, err = h.Page(ctx, fakeAddr, 1025, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, want, 1025, 25)
	wantCalls(t, "next deep page", diff(f, before), map[string]int{"chain": 1})

	// Page 500 is no longer held (8 pages are kept), but its cursor is.
	before = calls(f)
	p, err = h.Page(ctx, fakeAddr, 500, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, want, 500, 25)
	wantCalls(t, "evicted middle page", diff(f, before), map[string]int{"chain": 1})
	if last := f.cursors[len(f.cursors)-1]; last != want[499].TxID {
		t.Fatalf("fetched after %s, want the cursor at position 499", last)
	}

	// An unaligned page of 100 spans five chain pages; the ones held
	// since the walk are reused.
	before = calls(f)
	p, err = h.Page(ctx, fakeAddr, 960, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, want, 960, 100)
	if n := diff(f, before)["chain"]; n > 3 {
		t.Fatalf("unaligned page of 100 fetched %d chain pages", n)
	}

	// Past the TTL the pages are refetched, from the cursors: no walk.
	clock.Advance(historyTTL)
	before = calls(f)
	p, err = h.Page(ctx, fakeAddr, 1000, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, want, 1000, 25)
	wantCalls(t, "deep page after the TTL", diff(f, before), map[string]int{"address": 1, "mempool": 1, "chain": 2})
}

func TestHistoryCursorsFollowNewTransactions(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 500, 2)
	h, clock := newTestCache(t, f, 10)
	ctx := context.Background()
	if _, err := h.Page(ctx, fakeAddr, 300, 25, false); err != nil {
		t.Fatal(err)
	}

	// Three new blocks pay the address: every position moves down by 3.
	// The refresh sees the old top at position 3 of the new first page
	// and shifts the cursors, so a deep page is still one fetch.
	f.pushConfirmed(fakeAddr, "n1", "n2", "n3")
	clock.Advance(historyTTL)
	before := calls(f)
	p, err := h.Page(ctx, fakeAddr, 305, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	want := fakeExpected(t, f, fakeAddr)
	checkPage(t, p, want, 305, 25)
	wantCalls(t, "deep page after new transactions", diff(f, before), map[string]int{"address": 1, "mempool": 1, "chain": 2})
	if p.TotalCount != 505 {
		t.Fatalf("TotalCount %d", p.TotalCount)
	}
}

func TestHistoryReorgDropsCursors(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 300, 0)
	h, clock := newTestCache(t, f, 10)
	ctx := context.Background()
	if _, err := h.Page(ctx, fakeAddr, 200, 25, false); err != nil {
		t.Fatal(err)
	}

	// The newest transaction is replaced: the old top is gone, so the
	// cache cannot tell how positions moved and walks again.
	f.replaceTop(fakeAddr, "reorged")
	clock.Advance(historyTTL)
	before := calls(f)
	p, err := h.Page(ctx, fakeAddr, 200, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, fakeExpected(t, f, fakeAddr), 200, 25)
	wantCalls(t, "deep page after a reorg", diff(f, before), map[string]int{"address": 1, "mempool": 1, "chain": 9})
}

func TestHistoryOffsetCeiling(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 10_040, 2)
	h, _ := newTestCache(t, f, 10)
	ctx := context.Background()

	before := calls(f)
	for _, o := range []int{HistoryOffsetCeiling, HistoryOffsetCeiling + 1, 1 << 40} {
		if _, err := h.Page(ctx, fakeAddr, o, 25, false); !errors.Is(err, ErrOffsetCeiling) {
			t.Fatalf("offset %d: err = %v", o, err)
		}
	}
	wantCalls(t, "past the ceiling", diff(f, before), nil)

	p, err := h.Page(ctx, fakeAddr, 9_990, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	want := fakeExpected(t, f, fakeAddr)
	checkPage(t, p, want, 9_990, 25)
	if len(p.Txs) != 10 || p.NextOffset != HistoryOffsetCeiling || p.HasMore || !p.CeilingReached || p.TotalCount != 10_042 {
		t.Fatalf("at the ceiling: %d txs, next %d, more %v, ceiling %v, total %d",
			len(p.Txs), p.NextOffset, p.HasMore, p.CeilingReached, p.TotalCount)
	}
	// Positions 0..9999 with 2 mempool transactions are chain positions
	// 0..9997: 400 chain pages, never the 401st.
	if n := f.count("chain"); n != 400 {
		t.Fatalf("chain pages fetched = %d, want 400", n)
	}

	p, err = h.Page(ctx, fakeAddr, 9_000, 25, false)
	if err != nil || p.CeilingReached || !p.HasMore {
		t.Fatalf("below the ceiling: %+v, %v", p, err)
	}
}

func TestHistoryChainShorterThanStats(t *testing.T) {
	// The stats promise more than the pages hold (a block between the
	// calls, or an upstream that counts differently): the short page wins.
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 45, 0)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/address/"+fakeAddr {
			writeFakeJSON(w, esploraAddress{Address: fakeAddr, ChainStats: esploraStats{TxCount: 60}})
			return true
		}
		return false
	})
	h, _ := newTestCache(t, f, 10)
	p, err := h.Page(context.Background(), fakeAddr, 40, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Txs) != 5 || p.HasMore || p.NextOffset != 45 || p.TotalCount != 60 {
		t.Fatalf("%d txs, more %v, next %d, total %d", len(p.Txs), p.HasMore, p.NextOffset, p.TotalCount)
	}
}

func TestHistoryEmptyPageAfterCursorIsAnError(t *testing.T) {
	// Esplora answers [] for a cursor it does not know. When the stats say
	// more transactions follow, the cursors no longer match the history:
	// that is a degraded answer, not the end of the history.
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 50, 0)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/address/"+fakeAddr {
			writeFakeJSON(w, esploraAddress{Address: fakeAddr, ChainStats: esploraStats{TxCount: 60}})
			return true
		}
		return false
	})
	h, _ := newTestCache(t, f, 10)
	ctx := context.Background()
	if _, err := h.Page(ctx, fakeAddr, 40, 25, false); !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v, want ErrUpstream", err)
	}
	e := h.entry(fakeAddr)
	if len(e.cursors) != 0 || len(e.segments) != 0 {
		t.Fatalf("cursors %d and pages %d kept after the mismatch", len(e.cursors), len(e.segments))
	}
	// The end of a history whose count matches is an ordinary end.
	f.setHook(nil)
	p, err := h.Page(ctx, fakeAddr, 40, 25, true)
	if err != nil || len(p.Txs) != 10 || p.HasMore {
		t.Fatalf("%+v, %v", p, err)
	}
}

func TestHistoryUpstreamErrorsAreReturned(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 100, 0)
	h, clock := newTestCache(t, f, 10)
	ctx := context.Background()
	failing := func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}

	f.setHook(failing)
	if _, err := h.Page(ctx, fakeAddr, 0, 25, false); !errors.Is(err, ErrUpstream) {
		t.Fatalf("first fetch failing: %v", err)
	}
	// The address's failed calls cooled it down; once that is over, it
	// is asked again.
	f.setHook(nil)
	clock.Advance(DefaultBreakerOpen)
	if _, err := h.Page(ctx, fakeAddr, 0, 25, false); err != nil {
		t.Fatalf("after recovery: %v", err)
	}

	// Past the TTL a failing refresh is an error, not a stale page.
	clock.Advance(historyTTL)
	f.setHook(failing)
	if p, err := h.Page(ctx, fakeAddr, 0, 25, false); !errors.Is(err, ErrUpstream) || p.Txs != nil {
		t.Fatalf("stale page served: %v", err)
	}

	// A deep page whose fetch fails is an error, not a short page.
	f.setHook(nil)
	clock.Advance(DefaultBreakerOpen)
	if _, err := h.Page(ctx, fakeAddr, 0, 25, false); err != nil {
		t.Fatal(err)
	}
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/txs/chain/") {
			return failing(w, r)
		}
		return false
	})
	if p, err := h.Page(ctx, fakeAddr, 20, 25, false); !errors.Is(err, ErrUpstream) || p.Txs != nil {
		t.Fatalf("deep page with a failing fetch: %+v, %v", p, err)
	}
}

func TestHistoryUpstreamIgnoringCursor(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 100, 0)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		f.mu.Lock()
		first := f.chain[fakeAddr][:ChainPageSize]
		f.mu.Unlock()
		if strings.Contains(r.URL.Path, "/txs/chain/") {
			writeFakeJSON(w, first) // always the first page
			return true
		}
		return false
	})
	h, _ := newTestCache(t, f, 10)
	if _, err := h.Page(context.Background(), fakeAddr, 30, 25, false); !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v, want ErrUpstream", err)
	}
}

func TestHistoryAddressLRU(t *testing.T) {
	f := newFakeEsplora(t)
	addrs := []string{simFixtures[0], simFixtures[1], simFixtures[2]}
	for _, a := range addrs {
		f.setHistory(a, 10, 0)
	}
	h, _ := newTestCache(t, f, 2)
	ctx := context.Background()
	page := func(a string) {
		t.Helper()
		if _, err := h.Page(ctx, a, 0, 25, false); err != nil {
			t.Fatal(err)
		}
	}
	page(addrs[0])
	page(addrs[1])
	page(addrs[0]) // addrs[1] is now the least recently used
	page(addrs[2]) // forgets addrs[1]
	before := calls(f)
	page(addrs[0])
	wantCalls(t, "recently used address", diff(f, before), nil)
	page(addrs[1])
	wantCalls(t, "forgotten address", diff(f, before), head)
	if h.entries.Len() != 2 {
		t.Fatalf("%d addresses held, want 2", h.entries.Len())
	}
}

func TestHistoryConcurrentCallsFetchOnce(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 200, 1)
	h, _ := newTestCache(t, f, 10)
	want := fakeExpected(t, f, fakeAddr)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			o := (i % 4) * 25
			p, err := h.Page(context.Background(), fakeAddr, o, 25, false)
			if err == nil && !reflect.DeepEqual(p.Txs, want[o:o+25]) {
				err = errors.New("wrong page")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c := calls(f); c["address"] != 1 || c["mempool"] != 1 || c["chain"] > 4 {
		t.Fatalf("20 concurrent pages made calls %v", c)
	}
}

func TestHistoryWaitingHonorsContext(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 10, 0)
	release := make(chan struct{})
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		<-release
		return false
	})
	h, _ := newTestCache(t, f, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.Page(context.Background(), fakeAddr, 0, 25, false)
	}()
	for f.requestCount() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := h.Page(ctx, fakeAddr, 0, 25, false)
	close(release)
	<-done
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v", err)
	}
}

func TestHistoryRejectsBadArguments(t *testing.T) {
	f := newFakeEsplora(t)
	h, _ := newTestCache(t, f, 10)
	ctx := context.Background()
	for _, tc := range []struct {
		addr          string
		offset, limit int
	}{{fakeAddr, 0, 0}, {fakeAddr, 0, 101}, {fakeAddr, -1, 25}, {"", 0, 25}} {
		if _, err := h.Page(ctx, tc.addr, tc.offset, tc.limit, false); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("%+v: err = %v", tc, err)
		}
	}
	if f.requestCount() != 0 {
		t.Fatalf("%d requests", f.requestCount())
	}
}

func TestHistoryTxCache(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 60, 1)
	h, clock := newTestCache(t, f, 10)
	ctx := context.Background()
	all := fakeExpected(t, f, fakeAddr)

	// A transaction seen in a page needs no /tx call.
	if _, err := h.Page(ctx, fakeAddr, 0, 10, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range all[:10] {
		got, err := h.Tx(ctx, want.TxID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Tx(%s) = %v, %v", want.TxID, got, err)
		}
	}
	if n := f.count("tx"); n != 0 {
		t.Fatalf("%d /tx calls for transactions already seen", n)
	}

	deep := all[50]
	for range 3 {
		if got, err := h.Tx(ctx, deep.TxID); err != nil || !reflect.DeepEqual(got, deep) {
			t.Fatalf("Tx = %v, %v", got, err)
		}
	}
	if n := f.count("tx"); n != 1 {
		t.Fatalf("/tx calls = %d, want 1", n)
	}
	clock.Advance(historyTTL)
	if _, err := h.Tx(ctx, deep.TxID); err != nil {
		t.Fatal(err)
	}
	if n := f.count("tx"); n != 2 {
		t.Fatalf("/tx calls after the TTL = %d, want 2", n)
	}

	unknown := "ff" + deep.TxID[2:]
	for range 2 {
		if _, err := h.Tx(ctx, unknown); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown: %v", err)
		}
	}
	if n := f.count("tx"); n != 4 {
		t.Fatalf("/tx calls = %d: a not-found answer was cached", n)
	}
	if _, err := h.Tx(ctx, "xyz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("malformed txid: %v", err)
	}
}

func TestHistoryTxCacheIsBounded(t *testing.T) {
	f := newFakeEsplora(t)
	h, _ := newTestCache(t, f, 10)
	txs := make([]Tx, historyTxsMax+10)
	for i := range txs {
		w := fakeTx(fakeAddr, strconv.Itoa(i), int64(i))
		txs[i], _ = w.toTx()
	}
	h.rememberTxs(txs, simNow)
	if h.txs.Len() != historyTxsMax {
		t.Fatalf("%d transactions held", h.txs.Len())
	}
	if h.txs.Contains(txs[0].TxID) {
		t.Fatal("the oldest transaction was kept")
	}
}

func TestHistoryCursorsAreBounded(t *testing.T) {
	e := &historyEntry{chainEnd: -1}
	for i := range 3 * historyCursorsMax {
		e.addCursor(historyCursor{offset: i * 7, txid: "t"})
	}
	if len(e.cursors) != historyCursorsMax {
		t.Fatalf("%d cursors", len(e.cursors))
	}
	for i := 1; i < len(e.cursors); i++ {
		if e.cursors[i].offset <= e.cursors[i-1].offset {
			t.Fatal("cursors out of order")
		}
	}
}

func TestHistoryOverTheSim(t *testing.T) {
	// The whole stack offline: cache → client → in-process sim.
	now := simNow
	up := NewHandlerClient(NewSim(fixedClock(now)), ClientOptions{})
	h := NewHistoryCache(up, historyTTL, fixedClock(now), 100)
	ctx := context.Background()
	for _, addr := range simFixtures {
		mem, err := up.MempoolTxs(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		want := append(mem, walkChain(t, up, addr)...)
		var got []Tx
		for offset := 0; ; {
			p, err := h.Page(ctx, addr, offset, 37, false)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Txs...)
			if p.TotalCount != int64(len(want)) {
				t.Fatalf("%s: TotalCount %d, listing %d", addr, p.TotalCount, len(want))
			}
			if !p.HasMore {
				break
			}
			offset = p.NextOffset
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: paging through the cache gives %d transactions, the sim lists %d", addr, len(got), len(want))
		}
	}
}
