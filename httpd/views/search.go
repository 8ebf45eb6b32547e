package views

import (
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// The site's History search: what it asks (HistoryQuery) and what it is
// answered (HistoryResults). The search, filters, sort and page are
// worked out where the transactions are, so a page carries 25 rows, not
// every transaction of every card.

// HistorySort orders a History search's rows.
type HistorySort string

const (
	// SortNewest: unconfirmed first, then by block, newest first (the
	// order of every History page before searching existed).
	SortNewest HistorySort = "date-desc"
	SortOldest HistorySort = "date-asc"
	// SortLargest and SortSmallest order by the signed amount: the
	// largest received first, or the largest sent first.
	SortLargest  HistorySort = "amount-desc"
	SortSmallest HistorySort = "amount-asc"
)

// HistorySorts are the orders on offer, the default first.
var HistorySorts = []HistorySort{SortNewest, SortOldest, SortLargest, SortSmallest}

// Directions a search may keep.
const (
	DirectionReceived = "received"
	DirectionSent     = "sent"
)

// HistoryQuery is one search of a History: all of it optional.
type HistoryQuery struct {
	// Page is one card's History; "" is the combined one.
	Page string
	// Card keeps, on the combined History, the transactions of one card.
	Card string
	// Text keeps transactions whose txid, one of whose addresses, or whose
	// note holds it, ignoring case.
	Text string
	// Direction keeps the received (the cards' net amount above zero) or
	// the sent (below) transactions; "" keeps both.
	Direction string
	// From and To keep confirmed transactions whose block time falls on
	// those UTC dates or between them (To's whole day); an unconfirmed
	// one has no date and is left out once either is set.
	From, To *time.Time
	Sort     HistorySort
	Offset   int
}

// HistoryResults is a page of a History search.
type HistoryResults struct {
	// Cards are the cards searched, with their lifetime counts and
	// balances (from their History).
	Cards []CombinedCard
	// Rows are the page: at most HistoryPage matching transactions from
	// Offset, each with the amount of the cards kept.
	Rows   []Tx
	Offset int
	// Matched counts the transactions that match; All those of the cards
	// kept, before searching.
	Matched, All    int
	HistoryExport   Export
	HistoryDegraded bool
	// SearchedMax, when not 0, is how many of a card's newest
	// transactions were searched: some card has more in the window.
	SearchedMax int
	// TipHeight is the highest block the follower recorded (0: none):
	// a confirmed row's confirmations are TipHeight - height + 1.
	TipHeight int64
	Explorer  actors.ExplorerView
}
