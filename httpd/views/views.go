// Package views holds what the owner API and the owner's site both show:
// the shapes of the History answers and of balances (the API's JSON,
// which the site's pages render), the bounds both enforce on History pages and label files,
// and the check of a transaction ID. It is pure: it knows no route, no
// store and no page.
package views

import (
	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

const (
	// HistoryPage is how many transactions a page of one card's History
	// holds when the request does not say.
	HistoryPage = 25
	// LabelFileBytesMax bounds a BIP-329 label file (the public listener's
	// body limit is at least this, so a file the edge takes is read whole).
	LabelFileBytesMax = 2 << 20
)

// TxID is txid in canonical form, or the VALIDATION error of one that is
// not a transaction ID.
func TxID(txid string) (string, error) {
	canonical, valid := chain.CanonicalTxID(txid)
	if !valid {
		return "", actors.Errorf(actors.CodeValidation, "the transaction ID must be 64 hexadecimal characters")
	}
	return canonical, nil
}

// Tx is a transaction as History shows it.
type Tx struct {
	TxID        string   `json:"txid"`
	Time        *string  `json:"time"` // block time, RFC 3339 UTC; null while unconfirmed
	Confirmed   bool     `json:"confirmed"`
	BlockHeight *int64   `json:"block_height"`
	AmountSat   int64    `json:"amount_sat"` // net for the card (or cards): received minus spent
	FeeSat      int64    `json:"fee_sat"`
	Note        *string  `json:"note"` // null when there is none or the caller may not read it
	CardIDs     []string `json:"card_ids,omitempty"`
}

// Export says what a History answer covers: the plan, the dates the base
// plan enforced, and whether the answer is complete.
type Export struct {
	Plan                 actors.Plan `json:"plan"`
	WindowEnforced       bool        `json:"window_enforced"`
	From                 *string     `json:"from"` // inclusive UTC date, base plan only
	To                   *string     `json:"to"`
	Complete             bool        `json:"complete"`
	OlderPreview         bool        `json:"older_preview"`
	OffsetCeilingReached bool        `json:"offset_ceiling_reached"`
}

// Transactions is a page of one card's History: the body of GET
// /history/cards/{card_id}/transactions.
type Transactions struct {
	CardID          string `json:"card_id"`
	Address         string `json:"address"`
	Transactions    []Tx   `json:"transactions"`
	Offset          int    `json:"offset"`
	Limit           int    `json:"limit"`
	NextOffset      *int   `json:"next_offset"`
	HasMore         bool   `json:"has_more"`
	HistoryExport   Export `json:"history_export"`
	HistoryDegraded bool   `json:"history_degraded"`
	Complete        bool   `json:"complete"`
	TotalCount      *int64 `json:"total_count"` // upstream lifetime count; null when the upstream failed
}

// CombinedCard is one card in the combined History summary.
type CombinedCard struct {
	CardID          string `json:"card_id"`
	Address         string `json:"address"`
	Name            string `json:"name"`
	TotalCount      *int64 `json:"total_count"`
	BalanceSat      *int64 `json:"balance_sat"`
	RecentCount     *int   `json:"recent_count,omitempty"` // base plan: transactions of the first page in the year
	HistoryDegraded bool   `json:"history_degraded"`
	// Balance is the card's balance from the balance source, apart from
	// the History: it may be known while the History is degraded, and the
	// other way round.
	Balance Balance `json:"balance"`
}

// Combined is the body of GET /history.
type Combined struct {
	Cards []CombinedCard `json:"cards"`
	// PortfolioTotal sums the balances of Cards; Spaces are the bitcoin
	// Spaces the caller may read, with their cards' balances.
	PortfolioTotal  BalanceTotal    `json:"portfolio_total"`
	Spaces          []SpaceBalances `json:"spaces"`
	Transactions    []Tx            `json:"transactions"`
	HistoryExport   Export          `json:"history_export"`
	HistoryDegraded bool            `json:"history_degraded"`
	Complete        bool            `json:"complete"`
}
