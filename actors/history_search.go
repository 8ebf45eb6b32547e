package actors

// HistorySearchQuery is what the site's History search needs of the
// account, read in one step: the cards it covers (every readable Account
// card, or the one card CardID names), the plan, the notes the caller may
// read (to search them and show them), the highest chain tip the follower
// recorded (for confirmation counts) and the explorer the owner chose.
// The transactions themselves are the history upstream's (the account
// keeps only each address's latest few).
type HistorySearchQuery struct{ CardID string }

// HistorySearchContext is what HistorySearchQuery returns.
type HistorySearchContext struct {
	Plan  Plan
	Cards []HistoryCardView
	// Notes are the readable notes, by txid.
	Notes map[string]string
	// TipHeight is the highest block the follower recorded for any of
	// the account's addresses; 0 when it recorded none.
	TipHeight int64
	Explorer  ExplorerView
}

func (q HistorySearchQuery) answer(a *Account, who Principal, capability Level, now int64) (HistorySearchContext, *Error) {
	v := HistorySearchContext{Plan: a.Plan, Notes: map[string]string{}, Explorer: explorerView(a)}
	if q.CardID != "" {
		one, err := HistoryCardQuery(q).answer(a, who, capability, now)
		if err != nil {
			return HistorySearchContext{}, err
		}
		v.Cards = []HistoryCardView{one.Card}
	} else {
		all, _ := HistoryCardsQuery{}.answer(a, who, capability, now)
		v.Cards = all.Cards
	}
	for _, n := range a.Notes {
		if a.noteAccess(n.Addresses, who, capability) >= LevelRead {
			v.Notes[n.TxID] = n.Text
		}
	}
	for _, w := range a.Watched {
		v.TipHeight = max(v.TipHeight, w.TipHeight)
	}
	return v, nil
}
