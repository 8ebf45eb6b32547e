package views

// Balance is a card's balance as History shows it, in satoshis (1 BTC =
// 100,000,000 sat). When the balance source could not say (the block
// explorer failed for this address), every figure is null and Degraded is
// set: the balance is unknown, never zero.
type Balance struct {
	ConfirmedSat   *int64 `json:"confirmed_sat"`
	UnconfirmedSat *int64 `json:"unconfirmed_sat"` // what the mempool adds (negative: spends)
	ReceivedSat    *int64 `json:"received_sat"`    // ever paid to the address, mempool included
	SentSat        *int64 `json:"sent_sat"`        // ever spent from it, mempool included
	TxCount        *int64 `json:"tx_count"`        // confirmed and unconfirmed
	// UnconfirmedTxCount is how many of TxCount wait in the mempool.
	UnconfirmedTxCount *int64 `json:"unconfirmed_tx_count"`
	// LastTxAt is the newest confirmed transaction's block time, RFC 3339
	// UTC; null when there is none (or the balance is unknown).
	LastTxAt *string `json:"last_tx_at"`
	Degraded bool    `json:"degraded"`
}

// BalanceTotal is the sum of the balances of a group of cards (the
// Portfolio's, a Space's) the caller may read: every figure added up over
// the cards whose balance is known, LastTxAt the latest. A card whose
// balance is unknown is left out of the sum and Complete is false.
type BalanceTotal struct {
	ConfirmedSat       int64   `json:"confirmed_sat"`
	UnconfirmedSat     int64   `json:"unconfirmed_sat"`
	ReceivedSat        int64   `json:"received_sat"`
	SentSat            int64   `json:"sent_sat"`
	TxCount            int64   `json:"tx_count"` // a transaction between two of the cards counts for each
	UnconfirmedTxCount int64   `json:"unconfirmed_tx_count"`
	LastTxAt           *string `json:"last_tx_at"`
	CardCount          int     `json:"card_count"` // the cards summed
	Complete           bool    `json:"complete"`
}

// SpaceCardBalance is one card of a bitcoin Space with its balance.
type SpaceCardBalance struct {
	CardID  string  `json:"card_id"`
	Address string  `json:"address"`
	Name    string  `json:"name"`
	Balance Balance `json:"balance"`
}

// SpaceBalances is a bitcoin Space the caller may read, its cards'
// balances and their total.
type SpaceBalances struct {
	SpaceID string             `json:"space_id"`
	Name    string             `json:"name"`
	Cards   []SpaceCardBalance `json:"cards"`
	Total   BalanceTotal       `json:"total"`
}
