package chain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Bounds of the history cache. Every figure is per HistoryCache unless it
// says per address.
const (
	// HistoryOffsetCeiling is the spec's upstream offset ceiling: Page
	// serves positions 0 to 9,999 of an address's history and no deeper.
	HistoryOffsetCeiling = 10_000
	// HistoryPageLimitMax is the largest page Page serves (the spec's
	// History limit).
	HistoryPageLimitMax = 100
	// historySegmentsMax bounds the chain pages of transactions kept per
	// address, besides the first page. A page of 100 spans at most 5.
	historySegmentsMax = 8
	// historyCursorsMax bounds the cursors kept per address: twice what
	// the ceiling needs at one cursor per chain page, room for the extra
	// cursors left by refreshes that shift the history.
	historyCursorsMax = 2 * HistoryOffsetCeiling / ChainPageSize
	// historyFetchesMax bounds the chain pages one Page call fetches: a walk
	// from the top to the ceiling, plus the pages of the answer itself.
	historyFetchesMax = HistoryOffsetCeiling/ChainPageSize + HistoryPageLimitMax/ChainPageSize + 2
	// historyTxsMax bounds the transactions kept by Tx.
	historyTxsMax = 4096
)

// ErrOffsetCeiling: Page was asked for an offset at or past
// HistoryOffsetCeiling. Nothing was fetched.
var ErrOffsetCeiling = errors.New("chain: offset at or past the history offset ceiling")

// HistoryPage is one page of an address's history: the mempool
// transactions first, then the confirmed ones, newest first.
type HistoryPage struct {
	Address string
	Txs     []Tx
	Offset  int
	// NextOffset is Offset+len(Txs): where the next page starts.
	NextOffset int
	// HasMore: the history goes on past NextOffset, below the ceiling.
	HasMore bool
	// CeilingReached: the history goes on past HistoryOffsetCeiling, but
	// Page serves nothing from there.
	CeilingReached bool
	// TotalCount is the upstream's lifetime transaction count, confirmed
	// plus mempool (AddressStats.TxCount), whatever the page or plan.
	TotalCount int64
	// MempoolCount is how many transactions at the start of the listing
	// are unconfirmed (Esplora lists at most 50).
	MempoolCount int
	// Stats are the address's counters from the same refresh.
	Stats AddressStats
	// FetchedAt is when the stats, mempool and first chain page that
	// this page is consistent with were fetched.
	FetchedAt time.Time
}

// HistoryCache answers History pages from an Esplora Client and remembers
// the answers for a while: per address, the stats, the mempool listing, a
// few chain pages, and the cursors (transaction IDs at known offsets) that
// let a deep page be fetched without walking the chain from the top again.
// HISTORY.md explains the design. It is safe for concurrent use; calls for
// one address are served one at a time (so the first one fetches and the
// rest find it cached), calls for different addresses in parallel.
type HistoryCache struct {
	up           Source
	ttl          time.Duration
	now          func() time.Time
	maxAddresses int

	// entries and txs are least-recently-used caches
	// (hashicorp/golang-lru), each with its own lock.
	entries *lru.Cache[string, *historyEntry] // by address
	txs     *lru.Cache[string, cachedTx]      // by transaction ID
}

// NewHistoryCache returns a cache in front of up. ttl is how long an answer
// is reused (at least one second); now is the clock (nil: time.Now);
// maxAddresses bounds the addresses held (at least 1), least recently used
// forgotten first.
func NewHistoryCache(up Source, ttl time.Duration, now func() time.Time, maxAddresses int) *HistoryCache {
	if now == nil {
		now = time.Now
	}
	entries, _ := lru.New[string, *historyEntry](max(maxAddresses, 1))
	txs, _ := lru.New[string, cachedTx](historyTxsMax)
	return &HistoryCache{
		up:           up,
		ttl:          max(ttl, time.Second),
		now:          now,
		maxAddresses: max(maxAddresses, 1),
		entries:      entries,
		txs:          txs,
	}
}

// historyEntry is what the cache knows of one address. lock guards every
// field below it and is held across upstream calls, so it is a channel:
// waiting for it honors the caller's context.
type historyEntry struct {
	address string
	lock    chan struct{}

	fetched   bool
	fetchedAt time.Time
	stats     AddressStats
	mempool   []Tx
	// chainEnd is the number of confirmed transactions once a short (or
	// empty) chain page has shown where the history ends; -1 before.
	chainEnd int
	// segments are chain pages as fetched, by position in the confirmed
	// history (0 = newest confirmed). They may overlap.
	segments []historySegment
	// cursors, sorted by offset, name the transaction at a position; the
	// chain page after one starts at offset+1.
	cursors []historyCursor
}

type historySegment struct {
	start     int
	txs       []Tx
	fetchedAt time.Time
	used      time.Time
}

type historyCursor struct {
	offset int
	txid   string
}

type cachedTx struct {
	tx        Tx
	fetchedAt time.Time
}

// Page returns positions [offset, offset+limit) of addr's history, mempool
// first, each side newest first. addr must be canonical
// (ValidateBitcoinAddress). limit is 1 to HistoryPageLimitMax; offset is 0
// to HistoryOffsetCeiling-1 (ErrOffsetCeiling past it). Answers younger
// than the TTL are reused unless forceRefresh; a refresh refetches the
// stats, the mempool and the first chain page, and keeps the cursors when
// it can tell how the new history lines up with the old. Any upstream
// failure is returned (errors.Is ErrUpstream): never a shortened page.
func (c *HistoryCache) Page(ctx context.Context, addr string, offset, limit int, forceRefresh bool) (HistoryPage, error) {
	if limit < 1 || limit > HistoryPageLimitMax || offset < 0 {
		return HistoryPage{}, fmt.Errorf("%w: limit must be 1 to %d and offset at least 0", ErrInvalidArgument, HistoryPageLimitMax)
	}
	if offset >= HistoryOffsetCeiling {
		return HistoryPage{}, ErrOffsetCeiling
	}
	if err := checkAddress(addr); err != nil {
		return HistoryPage{}, err
	}
	e := c.entry(addr)
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return HistoryPage{}, &UpstreamError{Op: "history", Err: ctx.Err()}
	}
	defer func() { <-e.lock }()

	now := c.now()
	if !e.fetched || forceRefresh || now.Sub(e.fetchedAt) >= c.ttl {
		if err := c.refresh(ctx, e, now, forceRefresh); err != nil {
			return HistoryPage{}, err
		}
	}

	mempoolCount := len(e.mempool)
	end := min(offset+limit, HistoryOffsetCeiling, mempoolCount+e.chainLen())
	page := HistoryPage{
		Address:      addr,
		Offset:       offset,
		TotalCount:   e.stats.TxCount(),
		MempoolCount: mempoolCount,
		Stats:        e.stats,
		FetchedAt:    e.fetchedAt,
	}
	page.Txs = make([]Tx, 0, max(end-offset, 0))
	for p := offset; p < min(end, mempoolCount); p++ {
		page.Txs = append(page.Txs, e.mempool[p])
	}
	if from, to := max(offset-mempoolCount, 0), end-mempoolCount; from < to {
		confirmed, err := c.chainRange(ctx, e, from, to, now)
		if err != nil {
			return HistoryPage{}, err
		}
		page.Txs = append(page.Txs, confirmed...)
	}
	c.rememberTxs(page.Txs, now)

	listed := mempoolCount + e.chainLen()
	page.NextOffset = offset + len(page.Txs)
	page.HasMore = page.NextOffset < min(listed, HistoryOffsetCeiling)
	page.CeilingReached = page.NextOffset >= HistoryOffsetCeiling && listed > HistoryOffsetCeiling
	return page, nil
}

// Tx returns one transaction, from the cache when it was fetched (or seen
// in a page) less than the TTL ago. ErrNotFound when the upstream does not
// know it; ErrUpstream when it could not say.
func (c *HistoryCache) Tx(ctx context.Context, txid string) (Tx, error) {
	id, ok := CanonicalTxID(txid)
	if !ok {
		return Tx{}, ErrNotFound
	}
	now := c.now()
	if ct, ok := c.txs.Get(id); ok && now.Sub(ct.fetchedAt) < c.ttl {
		return ct.tx, nil
	}
	tx, err := c.up.Tx(ctx, id)
	if err != nil {
		return Tx{}, err
	}
	c.rememberTxs([]Tx{tx}, now)
	return tx, nil
}

// entry finds or makes the entry of addr and marks it most recently used,
// forgetting the least recently used address past maxAddresses. A
// forgotten entry still in use finishes its call; its result is not kept.
func (c *HistoryCache) entry(addr string) *historyEntry {
	if e, ok := c.entries.Get(addr); ok {
		return e
	}
	e := &historyEntry{address: addr, lock: make(chan struct{}, 1), chainEnd: -1}
	// Two first calls for one address at once share one entry.
	if earlier, had, _ := c.entries.PeekOrAdd(addr, e); had {
		return earlier
	}
	return e
}

func (c *HistoryCache) rememberTxs(txs []Tx, now time.Time) {
	for _, tx := range txs {
		c.txs.Add(tx.TxID, cachedTx{tx: tx, fetchedAt: now})
	}
}

// refresh fetches the head of the history (stats, mempool, first chain
// page) in parallel and lines the cached chain state up with it. On error
// the entry is left as it was.
func (c *HistoryCache) refresh(ctx context.Context, e *historyEntry, now time.Time, dropPages bool) error {
	var (
		wg       sync.WaitGroup
		stats    AddressStats
		mempool  []Tx
		first    []Tx
		errStats error
		errMem   error
		errFirst error
	)
	wg.Add(3)
	go func() { defer wg.Done(); stats, errStats = c.up.AddressStats(ctx, e.address) }()
	go func() { defer wg.Done(); mempool, errMem = c.up.MempoolTxs(ctx, e.address) }()
	go func() { defer wg.Done(); first, errFirst = c.up.ChainTxs(ctx, e.address, "") }()
	wg.Wait()
	if err := firstError(errStats, errMem, errFirst); err != nil {
		return err
	}

	shift, kept := e.lineUp(stats, first)
	if kept {
		for i := range e.cursors {
			e.cursors[i].offset += shift
		}
		for i := range e.segments {
			e.segments[i].start += shift
		}
		if e.chainEnd >= 0 {
			e.chainEnd += shift
		}
	} else {
		e.cursors, e.segments, e.chainEnd = nil, nil, -1
	}
	// Pages fetched before this refresh are dropped when the caller asked
	// to bypass the cache, and otherwise when older than the TTL. The
	// cursors stay either way: they are what saves the walk.
	e.segments = slices.DeleteFunc(e.segments, func(s historySegment) bool {
		return dropPages || s.start == 0 || now.Sub(s.fetchedAt) >= c.ttl
	})
	e.fetched, e.fetchedAt, e.stats, e.mempool = true, now, stats, mempool
	e.addPage(-1, first, now)
	return nil
}

// firstError returns the first non-nil error.
func firstError(a, b, c error) error {
	if a != nil {
		return a
	}
	if b != nil {
		return b
	}
	return c
}

// lineUp tells how the confirmed history moved since the last refresh:
// shift new transactions were added on top and nothing else changed, when
// the old newest transaction now sits at position shift of the new first
// page and the count grew by exactly shift. Otherwise (a reorg, more than a
// page of new transactions, a first refresh) kept is false and the caller
// forgets the cursors.
func (e *historyEntry) lineUp(stats AddressStats, first []Tx) (shift int, kept bool) {
	if !e.fetched || len(e.cursors) == 0 {
		return 0, false
	}
	oldTop, ok := e.txAt(0)
	if !ok {
		return 0, false
	}
	i := slices.IndexFunc(first, func(t Tx) bool { return t.TxID == oldTop.TxID })
	if i < 0 || stats.Chain.TxCount-e.stats.Chain.TxCount != int64(i) {
		return 0, false
	}
	return i, true
}

// chainLen is the number of confirmed transactions: exact once the end has
// been seen, otherwise the stats' count or the deepest position fetched.
func (e *historyEntry) chainLen() int {
	if e.chainEnd >= 0 {
		return e.chainEnd
	}
	n := int(min(e.stats.Chain.TxCount, int64(2*HistoryOffsetCeiling)))
	for _, s := range e.segments {
		n = max(n, s.start+len(s.txs))
	}
	return n
}

// txAt returns the confirmed transaction at position p from a page held.
func (e *historyEntry) txAt(p int) (Tx, bool) {
	for _, s := range e.segments {
		if s.start <= p && p < s.start+len(s.txs) {
			return s.txs[p-s.start], true
		}
	}
	return Tx{}, false
}

// chainRange returns confirmed positions [from, to), fetching the chain
// pages it lacks. Each fetch starts at the deepest cursor above the first
// missing position, so a deep page walks only past the cursors already
// known; the walk's own cursors are kept for next time.
func (c *HistoryCache) chainRange(ctx context.Context, e *historyEntry, from, to int, now time.Time) ([]Tx, error) {
	out := make([]Tx, 0, to-from)
	fetches := 0
	for p := from; p < to; {
		if s := e.segmentAt(p, now, c.ttl); s != nil {
			n := min(to, s.start+len(s.txs)) - p
			out = append(out, s.txs[p-s.start:p-s.start+n]...)
			s.used = now
			p += n
			continue
		}
		if e.chainEnd >= 0 && p >= e.chainEnd {
			break
		}
		if fetches == historyFetchesMax {
			return nil, &UpstreamError{Op: "chain txs", Err: malformed("no end after %d chain pages", fetches)}
		}
		fetches++
		cur := e.cursorBefore(p)
		txs, err := c.up.ChainTxs(ctx, e.address, cur.txid)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(txs, func(t Tx) bool { return t.TxID == cur.txid }) {
			// The upstream ignored the cursor: going on would repeat
			// the same transactions at new positions.
			e.cursors, e.segments, e.chainEnd = nil, nil, -1
			return nil, &UpstreamError{Op: "chain txs", Err: malformed("page after a cursor repeats the cursor")}
		}
		if len(txs) == 0 && int64(cur.offset+1) < e.stats.Chain.TxCount {
			// Esplora answers an empty page for a cursor it does not
			// find: the history changed under the cursors.
			e.cursors, e.segments, e.chainEnd = nil, nil, -1
			return nil, &UpstreamError{Op: "chain txs", Err: malformed("history changed under the cursor; retry")}
		}
		e.addPage(cur.offset, txs, now)
	}
	return out, nil
}

// segmentAt returns the held page covering position p, if it is younger
// than ttl.
func (e *historyEntry) segmentAt(p int, now time.Time, ttl time.Duration) *historySegment {
	for i := range e.segments {
		s := &e.segments[i]
		if s.start <= p && p < s.start+len(s.txs) && now.Sub(s.fetchedAt) < ttl {
			return s
		}
	}
	return nil
}

// cursorBefore is the deepest cursor above position p, or the top of the
// history (offset -1, no txid).
func (e *historyEntry) cursorBefore(p int) historyCursor {
	i, _ := slices.BinarySearchFunc(e.cursors, p, func(c historyCursor, p int) int { return c.offset - p })
	if i == 0 {
		return historyCursor{offset: -1}
	}
	return e.cursors[i-1]
}

// addPage records a chain page fetched after the cursor at offset after
// (-1: the first page): the page itself, the cursor at its last
// transaction, and the end of the history when the page is short.
func (e *historyEntry) addPage(after int, txs []Tx, now time.Time) {
	start := after + 1
	if len(txs) < ChainPageSize {
		e.chainEnd = start + len(txs)
	}
	if len(txs) == 0 {
		return
	}
	e.segments = append(e.segments, historySegment{start: start, txs: txs, fetchedAt: now, used: now})
	for len(e.segments) > historySegmentsMax+1 {
		// Forget the least recently used page other than the first.
		victim := -1
		for i, s := range e.segments {
			if s.start != 0 && (victim < 0 || s.used.Before(e.segments[victim].used)) {
				victim = i
			}
		}
		e.segments = slices.Delete(e.segments, victim, victim+1)
	}
	e.addCursor(historyCursor{offset: start + len(txs) - 1, txid: txs[len(txs)-1].TxID})
}

func (e *historyEntry) addCursor(cur historyCursor) {
	i, found := slices.BinarySearchFunc(e.cursors, cur.offset, func(c historyCursor, p int) int { return c.offset - p })
	if found {
		e.cursors[i] = cur
		return
	}
	e.cursors = slices.Insert(e.cursors, i, cur)
	if len(e.cursors) <= historyCursorsMax {
		return
	}
	// Too many: drop the cursor closest to the one above it, which loses
	// the least walking.
	drop, gap := 1, e.cursors[1].offset-e.cursors[0].offset
	for j := 2; j < len(e.cursors); j++ {
		if g := e.cursors[j].offset - e.cursors[j-1].offset; g < gap {
			drop, gap = j, g
		}
	}
	e.cursors = slices.Delete(e.cursors, drop, drop+1)
}
