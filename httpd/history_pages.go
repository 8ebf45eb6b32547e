package httpd

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// How a History page is cut from the upstream's history, per plan.

// cardPage is one card's page of History as the rules cut it.
type cardPage struct {
	txs            []chain.Tx
	hasMore        bool
	olderPreview   bool
	ceilingReached bool
	totalCount     int64
	recentCount    int // transactions of the page inside the window (base plan)
	stats          chain.AddressStats
	err            error // upstream failure: the page is degraded
}

// pageFor cuts [offset, offset+limit) of an address's History for a plan.
// Base plan: only the window, and when the card has nothing in it, up to 25
// older transactions on the first page as a preview. Extended plan: the
// full history up to the offset ceiling.
func (s *Server) pageFor(c context.Context, addr string, plan actors.Plan, w actors.HistoryWindow, offset, limit int, force bool) cardPage {
	if offset >= chain.HistoryOffsetCeiling {
		// Past the ceiling nothing is listed, but the lifetime count still
		// says whether the history goes on beyond it.
		head, err := s.history.Page(c, addr, 0, 1, force)
		if err != nil {
			return cardPage{err: err}
		}
		return cardPage{totalCount: head.TotalCount, stats: head.Stats, ceilingReached: head.TotalCount > int64(offset)}
	}
	page, err := s.history.Page(c, addr, offset, limit, force)
	if err != nil {
		return cardPage{err: err}
	}
	p := cardPage{txs: page.Txs, hasMore: page.HasMore, ceilingReached: page.CeilingReached, totalCount: page.TotalCount, stats: page.Stats}
	cut := actors.CutHistory(plan, w, offset, page.Txs, limit, page.HasMore)
	p.txs, p.recentCount, p.olderPreview = page.Txs[:cut.Shown], cut.Recent, cut.OlderPreview
	if cut.EndsHere {
		p.hasMore = false
	}
	if cut.PreviewFetch {
		more, err := s.history.Page(c, addr, 0, actors.OlderPreviewMax, false)
		if err != nil {
			return cardPage{err: err}
		}
		p.txs = more.Txs
	}
	return p
}

// txView is a transaction as History shows it.
type txView = views.Tx

func renderTx(tx chain.Tx, addresses ...string) txView {
	v := txView{TxID: tx.TxID, Confirmed: tx.Confirmed, FeeSat: tx.Fee}
	if tx.Confirmed {
		t := tx.BlockTime.UTC().Format(time.RFC3339)
		height := tx.BlockHeight
		v.Time, v.BlockHeight = &t, &height
	}
	for _, a := range addresses {
		v.AmountSat += tx.NetAmount(a)
	}
	return v
}

// historyExport says what a History answer covers.
type historyExport = views.Export

func exportFor(plan actors.Plan, w actors.HistoryWindow, complete, preview, ceiling bool) historyExport {
	e := historyExport{Plan: plan, Complete: complete, OlderPreview: preview, OffsetCeilingReached: ceiling}
	if plan == actors.PlanBase {
		from, to := w.From.Format(time.DateOnly), w.To.Format(time.DateOnly)
		e.WindowEnforced, e.From, e.To = true, &from, &to
	}
	return e
}

// pagesFor fetches the first page, of up to limit transactions, of several
// cards at once.
func (s *Server) pagesFor(c context.Context, cards []actors.HistoryCardView, plan actors.Plan, w actors.HistoryWindow, limit int, force bool) []cardPage {
	pages := make([]cardPage, len(cards))
	var wg sync.WaitGroup
	for i, card := range cards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pages[i] = s.pageFor(c, card.Address, plan, w, 0, limit, force)
		}()
	}
	wg.Wait()
	return pages
}

// mergeTxs merges per-card transaction lists into one newest-first list
// without repeats (a transaction shared by two cards appears once, with
// both card IDs and the sum of their amounts).
func mergeTxs(cards []actors.HistoryCardView, lists [][]chain.Tx, limit int) []txView {
	type merged struct {
		tx    chain.Tx
		cards []actors.HistoryCardView
	}
	byID := map[string]*merged{}
	var all []*merged
	for i, list := range lists {
		for _, tx := range list {
			m := byID[tx.TxID]
			if m == nil {
				m = &merged{tx: tx}
				byID[tx.TxID] = m
				all = append(all, m)
			}
			m.cards = append(m.cards, cards[i])
		}
	}
	slices.SortFunc(all, func(x, y *merged) int {
		switch {
		case x.tx.Confirmed != y.tx.Confirmed:
			if !x.tx.Confirmed {
				return -1
			}
			return 1
		case !x.tx.BlockTime.Equal(y.tx.BlockTime):
			return y.tx.BlockTime.Compare(x.tx.BlockTime)
		}
		return strings.Compare(x.tx.TxID, y.tx.TxID)
	})
	out := make([]txView, 0, min(limit, len(all)))
	for _, m := range all[:min(limit, len(all))] {
		addresses := make([]string, len(m.cards))
		ids := make([]string, len(m.cards))
		for i, c := range m.cards {
			addresses[i], ids[i] = c.Address, c.ID
		}
		v := renderTx(m.tx, addresses...)
		v.CardIDs = ids
		out = append(out, v)
	}
	return out
}
