package site

import (
	"context"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/balances"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// The balances the pages show: each card's on the Portfolio, a bitcoin
// Space and the card's own pages, and the Portfolio's and each Space's
// total, from the same source and with the same sums as the API's History
// summary (balances.Read and Summarize), in BTC with all eight decimals.

// balancesTimeout bounds the balance reads of one page: a block explorer
// that does not answer in time leaves balances unknown rather than holding
// the page.
const balancesTimeout = 5 * time.Second

// balanceShown is a balance as a page shows it. Known is false when the
// source could not say: the page says "unknown", never zero.
type balanceShown struct {
	Known                  bool
	Confirmed, Unconfirmed string // Unconfirmed signed: what the mempool adds or spends
	Received, Sent         string
	TxCount                int64
	Waiting                int64  // unconfirmed transactions
	LastTx, LastTxTime     string // "2026-05-01 14:03 UTC" and its RFC 3339; "" when none
}

// totalShown is a group's total: the cards summed (Cards of Of), and
// whether every card's balance was known.
type totalShown struct {
	balanceShown
	Cards, Of int
	Complete  bool
}

// cardRow is a card of a table with its balance, and on the Portfolio
// its last chain event (nil for none).
type cardRow struct {
	actors.CardView
	Balance      balanceShown
	LastActivity *lastActivity
}

// balancesOf reads the balances of the owner's addresses.
func (s *Site) balancesOf(sess *siteSession, addresses []string) ([]balanceShown, totalShown) {
	c, cancel := context.WithTimeout(context.Background(), balancesTimeout)
	defer cancel()
	each, total := balances.Summarize(balances.Read(c, s.balances, sess.cred.AccountID, addresses))
	shown := make([]balanceShown, len(each))
	for i, b := range each {
		shown[i] = showBalance(b)
	}
	t := showTotal(total)
	t.Of = len(addresses)
	return shown, t
}

// cardRows reads the balances of cards and pairs each card with its own.
func (s *Site) cardRows(sess *siteSession, cards []actors.CardView) ([]cardRow, totalShown) {
	addresses := make([]string, len(cards))
	for i, c := range cards {
		addresses[i] = c.Address
	}
	shown, total := s.balancesOf(sess, addresses)
	rows := make([]cardRow, len(cards))
	for i, c := range cards {
		rows[i] = cardRow{CardView: c, Balance: shown[i]}
	}
	return rows, total
}

// withoutBalances are the rows of cards whose balances are not shown (an
// altcoin Space's, a page that does not show them).
func withoutBalances(cards []actors.CardView) []cardRow {
	rows := make([]cardRow, len(cards))
	for i, c := range cards {
		rows[i].CardView = c
	}
	return rows
}

func showBalance(b views.Balance) balanceShown {
	if b.Degraded || b.ConfirmedSat == nil || b.UnconfirmedSat == nil || b.ReceivedSat == nil || b.SentSat == nil || b.TxCount == nil || b.UnconfirmedTxCount == nil {
		return balanceShown{}
	}
	return figures(*b.ConfirmedSat, *b.UnconfirmedSat, *b.ReceivedSat, *b.SentSat, *b.TxCount, *b.UnconfirmedTxCount, b.LastTxAt)
}

func showTotal(t views.BalanceTotal) totalShown {
	return totalShown{balanceShown: figures(t.ConfirmedSat, t.UnconfirmedSat, t.ReceivedSat, t.SentSat, t.TxCount, t.UnconfirmedTxCount, t.LastTxAt),
		Cards: t.CardCount, Complete: t.Complete}
}

func figures(confirmed, unconfirmed, received, sent, txs, waiting int64, last *string) balanceShown {
	b := balanceShown{Known: true, Confirmed: formatBTC(confirmed, false), Unconfirmed: formatBTC(unconfirmed, true),
		Received: formatBTC(received, false), Sent: formatBTC(sent, false), TxCount: txs, Waiting: waiting}
	if last != nil {
		b.LastTx, b.LastTxTime = siteTime(*last), *last
	}
	return b
}
