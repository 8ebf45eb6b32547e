package httpd

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// The site's History search: search, filters, sort and a page of one
// card's History or the combined one (issue 33). The rows are the
// history upstream's, cut by the plan as every History is (pageFor),
// walked a page of 100 at a time through the history cache; the account
// gives, in one query, the cards, the notes to search, the chain tip and
// the explorer. Only the page's 25 rows are rendered: the rest is
// searched and sorted as references to the cache's transactions.

// historySearchTxsMax bounds what one page view reads of a card: the
// newest 2,500 transactions of the window, 25 calls of 100 to the history
// cache (100 upstream requests when it is cold, as every TTL it goes).
// Above it the page says what the search covers; the CSV has every one.
const historySearchTxsMax = 2_500

// searchedCard is what the search read of one card's History.
type searchedCard struct {
	pages          [][]chain.Tx // as the upstream listed them, newest first
	totalCount     int64
	stats          chain.AddressStats
	recentCount    int // base plan: transactions of the first page in the window
	olderPreview   bool
	ceilingReached bool
	cut            bool  // more than historySearchTxsMax: the rest was not read
	err            error // the upstream failed: what pages hold is partial
}

// historyOf reads a card's History of the plan's window, page by page.
func (s *Server) historyOf(c context.Context, addr string, plan actors.Plan, w actors.HistoryWindow) searchedCard {
	p := s.pageFor(c, addr, plan, w, 0, historyLimitMax, false)
	h := searchedCard{totalCount: p.totalCount, stats: p.stats, recentCount: p.recentCount, olderPreview: p.olderPreview, err: p.err}
	if p.err != nil {
		return h
	}
	h.pages = append(h.pages, p.txs)
	offset := len(p.txs)
	for ; p.hasMore && !p.olderPreview && len(p.txs) > 0 && offset < historySearchTxsMax; offset += len(p.txs) {
		if p = s.pageFor(c, addr, plan, w, offset, min(historyLimitMax, historySearchTxsMax-offset), false); p.err != nil {
			h.err = p.err
			break
		}
		h.pages = append(h.pages, p.txs)
	}
	h.ceilingReached = p.ceilingReached
	h.cut = h.err == nil && p.hasMore && !p.olderPreview && offset >= historySearchTxsMax
	return h
}

// searchEntry is one transaction of the searched cards: the upstream's
// (shared with the cache, read only) and each card's part of it.
type searchEntry struct {
	tx    *chain.Tx
	parts []searchPart
}

// searchPart is one card's part of a transaction.
type searchPart struct {
	card   int // in the searched cards
	amount int64
}

// mergeSearched lists each transaction of the cards once, with the part
// of every card it involves.
func mergeSearched(cards []actors.HistoryCardView, read []searchedCard) []searchEntry {
	n := 0
	for _, h := range read {
		for _, p := range h.pages {
			n += len(p)
		}
	}
	entries := make([]searchEntry, 0, n)
	at := make(map[string]int, n)
	// Each entry's first part comes from one array (a full slice of one,
	// so a second card's part is appended elsewhere): one allocation,
	// not one a transaction.
	first := make([]searchPart, n)
	for i, h := range read {
		for _, page := range h.pages {
			for j := range page {
				tx := &page[j]
				part := searchPart{card: i, amount: tx.NetAmount(cards[i].Address)}
				if k, seen := at[tx.TxID]; seen {
					entries[k].parts = append(entries[k].parts, part)
					continue
				}
				at[tx.TxID] = len(entries)
				k := len(entries)
				first[k] = part
				entries = append(entries, searchEntry{tx: tx, parts: first[k : k+1 : k+1]})
			}
		}
	}
	return entries
}

// searchMatch is a transaction that matches, with the amount of the
// cards kept and its place in time, copied out of the transaction so
// that sorting compares numbers beside each other, not through pointers.
type searchMatch struct {
	entry  *searchEntry
	amount int64
	at     int64 // block time, Unix nanoseconds; math.MaxInt64 while unconfirmed
	height int64
}

func matchOf(e *searchEntry, amount int64) searchMatch {
	m := searchMatch{entry: e, amount: amount, at: math.MaxInt64, height: math.MaxInt64}
	if e.tx.Confirmed {
		m.at, m.height = e.tx.BlockTime.UnixNano(), e.tx.BlockHeight
	}
	return m
}

// historyFilter is a HistoryQuery made ready to test entries.
type historyFilter struct {
	card      int    // -1: every card
	text      string // lower case
	direction string
	from, to  time.Time // to is exclusive; zero: no bound
}

// matches reports whether e passes the filter, with the kept cards'
// amount.
func (f historyFilter) matches(e *searchEntry, note string, hasNote bool) (int64, bool) {
	amount, kept := int64(0), f.card < 0
	for _, p := range e.parts {
		if f.card < 0 || p.card == f.card {
			amount, kept = amount+p.amount, true
		}
	}
	switch {
	case !kept,
		f.direction == views.DirectionReceived && amount <= 0,
		f.direction == views.DirectionSent && amount >= 0:
		return 0, false
	}
	if !f.from.IsZero() || !f.to.IsZero() {
		t := e.tx.BlockTime
		if !e.tx.Confirmed || !f.from.IsZero() && t.Before(f.from) || !f.to.IsZero() && !t.Before(f.to) {
			return 0, false
		}
	}
	if f.text != "" && !f.textIn(e.tx, note, hasNote) {
		return 0, false
	}
	return amount, true
}

// textIn reports whether the search text is in the txid, an address or
// the note, ignoring case.
func (f historyFilter) textIn(tx *chain.Tx, note string, hasNote bool) bool {
	if containsFold(tx.TxID, f.text) || hasNote && strings.Contains(strings.ToLower(note), f.text) {
		return true
	}
	for _, io := range tx.Inputs {
		if containsFold(io.Address, f.text) {
			return true
		}
	}
	for _, io := range tx.Outputs {
		if containsFold(io.Address, f.text) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds lower, which is in lower case,
// ignoring ASCII case (txids and addresses are ASCII), without
// allocating: it runs for every address of every transaction searched.
func containsFold(s, lower string) bool {
	n := len(lower)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			b := s[i+j]
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			if b != lower[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// newestFirst orders transactions as every History lists them:
// unconfirmed first, then by block time and height, newest first; the
// txid settles a tie, so the order is the same on every request.
func newestFirst(x, y searchMatch) int {
	if c := cmp.Compare(y.at, x.at); c != 0 {
		return c
	}
	if c := cmp.Compare(y.height, x.height); c != 0 {
		return c
	}
	return strings.Compare(x.entry.tx.TxID, y.entry.tx.TxID)
}

// sortMatches puts the matches in the order asked.
func sortMatches(m []searchMatch, order views.HistorySort) {
	slices.SortFunc(m, func(x, y searchMatch) int {
		switch order {
		case views.SortOldest:
			return newestFirst(y, x)
		case views.SortLargest:
			if c := cmp.Compare(y.amount, x.amount); c != 0 {
				return c
			}
		case views.SortSmallest:
			if c := cmp.Compare(x.amount, y.amount); c != 0 {
				return c
			}
		}
		return newestFirst(x, y)
	})
}

// filterFor makes q ready to test entries of cards; a card that is not
// among them matches nothing.
func filterFor(q views.HistoryQuery, cards []actors.HistoryCardView) historyFilter {
	f := historyFilter{card: -1, text: strings.ToLower(q.Text), direction: q.Direction}
	if q.Card != "" {
		f.card = len(cards) // none
		for i, c := range cards {
			if c.ID == q.Card {
				f.card = i
			}
		}
	}
	if q.From != nil {
		f.from = *q.From
	}
	if q.To != nil {
		f.to = q.To.AddDate(0, 0, 1)
	}
	return f
}

// searchEntries filters, sorts and pages entries: the page's matches
// and how many matched.
func searchEntries(entries []searchEntry, notes map[string]string, f historyFilter, order views.HistorySort, offset, limit int) ([]searchMatch, int) {
	matched := make([]searchMatch, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		note, hasNote := notes[e.tx.TxID]
		if amount, ok := f.matches(e, note, hasNote); ok {
			matched = append(matched, matchOf(e, amount))
		}
	}
	sortMatches(matched, order)
	if offset >= len(matched) {
		return nil, len(matched)
	}
	return matched[offset:min(offset+limit, len(matched))], len(matched)
}

// searchHistory answers a History search for the site: one card's
// History (q.Page) or the combined one.
func (s *Server) searchHistory(c context.Context, r *request, q views.HistoryQuery, rc ReadConsistency) (views.HistoryResults, error) {
	hc, err := ask(c, s, r, actors.HistorySearchQuery{CardID: q.Page}, rc)
	if err != nil {
		return views.HistoryResults{}, err
	}
	w := actors.HistoryWindowAt(s.now())
	read := make([]searchedCard, len(hc.Cards))
	var wg sync.WaitGroup
	uc := chain.WithAccount(c, r.cred.AccountID)
	for i, card := range hc.Cards {
		wg.Go(func() { read[i] = s.historyOf(uc, card.Address, hc.Plan, w) })
	}
	wg.Wait()

	v := views.HistoryResults{Cards: make([]views.CombinedCard, len(hc.Cards)), Offset: q.Offset, TipHeight: hc.TipHeight, Explorer: hc.Explorer}
	complete, ceiling := true, false
	allQuiet := hc.Plan == actors.PlanBase && len(hc.Cards) > 0 // no card has activity in the window
	for i, h := range read {
		card := hc.Cards[i]
		cv := views.CombinedCard{CardID: card.ID, Address: card.Address, Name: card.Name}
		if h.err != nil {
			cv.HistoryDegraded, v.HistoryDegraded, complete, allQuiet = true, true, false, false
		}
		if h.pages != nil {
			total, balance := h.totalCount, h.stats.Balance()
			cv.TotalCount, cv.BalanceSat = &total, &balance
		}
		allQuiet = allQuiet && h.recentCount == 0
		if h.cut {
			v.SearchedMax = historySearchTxsMax
		}
		ceiling = ceiling || h.ceilingReached
		v.Cards[i] = cv
	}
	// The older preview of a base-plan card with nothing in the window
	// shows only when every card is so (as the combined History's).
	for i := range read {
		if read[i].olderPreview && !allQuiet {
			read[i].pages = nil
		}
	}
	entries := mergeSearched(hc.Cards, read)
	f := filterFor(q, hc.Cards)
	page, matched := searchEntries(entries, hc.Notes, f, q.Sort, q.Offset, views.HistoryPage)
	v.Matched, v.All = matched, len(entries)
	if f.card >= 0 {
		v.All = 0
		for _, e := range entries {
			if slices.ContainsFunc(e.parts, func(p searchPart) bool { return p.card == f.card }) {
				v.All++
			}
		}
	}
	v.Rows = make([]views.Tx, 0, len(page))
	for _, m := range page {
		row := renderTx(*m.entry.tx)
		row.AmountSat = m.amount
		for _, p := range m.entry.parts {
			if f.card < 0 || p.card == f.card {
				row.CardIDs = append(row.CardIDs, hc.Cards[p.card].ID)
			}
		}
		if note, found := hc.Notes[row.TxID]; found {
			row.Note = &note
		}
		v.Rows = append(v.Rows, row)
	}
	v.HistoryExport = exportFor(hc.Plan, w, complete && !ceiling, allQuiet && len(entries) > 0, ceiling)
	return v, nil
}
