package actors

// AccountSummaryQuery is the owner's GET /owner/v1/account/summary: the
// account at a glance, what it holds against what its plan allows. It
// counts everything the account holds, whatever the keys' grants: only
// the owner may ask.
type AccountSummaryQuery struct{}

// AccountSummaryView is the body of GET /owner/v1/account/summary.
type AccountSummaryView struct {
	Plan           Plan      `json:"plan"`
	PortfolioCards UsageView `json:"portfolio_cards"`
	BookmarkSpaces UsageView `json:"bookmark_spaces"`
	// BookmarkCards counts the cards of the bitcoin and altcoin Spaces;
	// each Space holds at most the plan's spaceCardsMax.
	BookmarkCards int `json:"bookmark_cards"`
	// SheetRows counts the stored rows of every Sheet Space.
	SheetRows int `json:"sheet_rows"`
	// Notes counts the saved transaction notes.
	Notes int `json:"notes"`
	// ReadKeys and WriteKeys count the live API keys by capability;
	// together they are at most Keys.Limit.
	ReadKeys  int       `json:"read_keys"`
	WriteKeys int       `json:"write_keys"`
	Keys      UsageView `json:"keys"`
}

func (AccountSummaryQuery) answer(a *Account, who Principal, _ Level, _ int64) (AccountSummaryView, *Error) {
	if who.isAgent() {
		return AccountSummaryView{}, Errorf(CodeForbidden, "API keys cannot manage the account")
	}
	limits := a.Plan.limits()
	v := AccountSummaryView{
		Plan:           a.Plan,
		PortfolioCards: UsageView{Used: len(a.Portfolio), Limit: limits.portfolioCardsMax},
		BookmarkSpaces: UsageView{Used: len(a.Spaces), Limit: limits.spacesMax},
		Notes:          len(a.Notes),
		Keys:           UsageView{Used: len(a.Keys), Limit: keysMax},
	}
	for _, s := range a.Spaces {
		v.BookmarkCards += len(s.Cards)
		if s.Sheet != nil {
			v.SheetRows += len(s.Sheet.Rows)
		}
	}
	for _, k := range a.Keys {
		if k.Capability >= LevelWrite {
			v.WriteKeys++
		} else {
			v.ReadKeys++
		}
	}
	return v, nil
}
