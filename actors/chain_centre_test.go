package actors

import "testing"

// The notification centre reads the ring newest first, every card's
// events (a deleted card's too, marked gone), a page at a time; the badge
// counts the events after a number; the Portfolio's last activity is
// each card's newest event; the live view carries the newest number.
// Only the owner reads any of it.
func TestChainCentreNewestFirstPagedWithTheBadgeAndLastActivity(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	kept := ta.createCard(ta.owner, addrs[0])
	gone := ta.createCard(ta.owner, addrs[1])
	ta.mustOK(ta.owner, &UpdatePortfolioCard{CardID: kept.ID, ExpectedVersion: kept.Version, CardFields: CardFields{Name: ptr("kept")}})
	ta.observeChain(addrs[0], 900)
	ta.observeChain(addrs[1], 900)
	seen := ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	ta.observeChain(addrs[1], 900, mempoolTx("b1", 7000))
	ta.observeChain(addrs[0], 902, confirmedTx("a1", 901, "c1", 5000))
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: gone.ID, ExpectedVersion: gone.Version})

	page := ta.mustQuery(ta.ownerCred(), ChainCentreQuery{Limit: 2}).Body.(ChainCentreView)
	if len(page.Events) != 2 || !page.HasMore || page.Latest != ta.a.ChainEventSeq {
		t.Fatalf("first page %+v", page)
	}
	first, second := page.Events[0], page.Events[1]
	if first.Kind != ChainTxConfirmed || first.CardName != "kept" || first.CardGone || first.Seq != ta.a.ChainEventSeq || first.ID == "" {
		t.Errorf("newest %+v", first)
	}
	if second.Kind != ChainTxSeen || second.CardID != gone.ID || !second.CardGone || second.AmountSat != 7000 {
		t.Errorf("the deleted card's %+v", second)
	}
	rest := ta.mustQuery(ta.ownerCred(), ChainCentreQuery{Before: page.NextBefore}).Body.(ChainCentreView)
	if len(rest.Events) != 1 || rest.HasMore || rest.Events[0].TxID != hashN("a1") || rest.Events[0].Kind != ChainTxSeen {
		t.Errorf("second page %+v", rest)
	}

	if v := ta.mustQuery(ta.ownerCred(), ChainUnseenQuery{Seen: seen}).Body.(ChainUnseenView); v.Count != 3 || v.Latest != ta.a.ChainEventSeq {
		t.Errorf("unseen since %d: %+v", seen, v)
	}
	if v := ta.mustQuery(ta.ownerCred(), ChainUnseenQuery{Seen: ta.a.ChainEventSeq + 5}).Body.(ChainUnseenView); v.Count != 0 {
		t.Errorf("unseen since the future: %+v", v)
	}

	last := ta.mustQuery(ta.ownerCred(), LastChainEventsQuery{}).Body.(map[string]LastChainEvent)
	if last[kept.ID].Kind != ChainTxConfirmed || last[gone.ID].Kind != ChainTxSeen || len(last) != 2 {
		t.Errorf("last activity %+v", last)
	}
	if live := ta.mustQuery(ta.ownerCred(), LiveQuery{}).Body.(LiveView); live.ChainCursor != ta.a.ChainEventSeq {
		t.Errorf("live view's chain cursor %d, want %d", live.ChainCursor, ta.a.ChainEventSeq)
	}

	key := ta.addKey(LevelWrite)
	for _, q := range []Query{ChainCentreQuery{}, ChainUnseenQuery{}, LastChainEventsQuery{}} {
		if res := ta.query(ta.keyCred(key), q); res.err == nil || res.err.Code != CodeForbidden {
			t.Errorf("a key asked %T: %+v", q, res)
		}
	}
	if res := ta.query(ta.ownerCred(), ChainCentreQuery{Limit: ChainCentreLimitMax + 1}); res.err == nil || res.err.Code != CodeValidation {
		t.Errorf("a limit too big: %+v", res)
	}
}

// The rule pages' list names each card with the scope of the rule that
// governs it: its own, else its Space's, else the default's.
func TestNotifiedCardsSayWhichRuleGoverns(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	card := ta.createCard(ta.owner, addrs[0])
	v := ta.mustQuery(ta.ownerCred(), NotifiedCardsQuery{}).Body.(NotifiedCardsView)
	if len(v.Cards) != 1 || v.Cards[0].ID != card.ID || v.Cards[0].RuleFrom != "" || v.Cards[0].Address != addrs[0] {
		t.Fatalf("without rules %+v", v)
	}
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: NotifyRuleFields{Events: []ChainEventKind{}, Depth: 3, Channels: []string{}}})
	if v := ta.mustQuery(ta.ownerCred(), NotifiedCardsQuery{}).Body.(NotifiedCardsView); v.Cards[0].RuleFrom != RuleDefault {
		t.Errorf("with a default %+v", v.Cards[0])
	}
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleCard, ID: card.ID, NotifyRuleFields: NotifyRuleFields{Events: []ChainEventKind{}, Depth: 3, Channels: []string{}}})
	if v := ta.mustQuery(ta.ownerCred(), NotifiedCardsQuery{}).Body.(NotifiedCardsView); v.Cards[0].RuleFrom != RuleCard {
		t.Errorf("with its own %+v", v.Cards[0])
	}
	if res := ta.query(ta.keyCred(ta.addKey(LevelRead)), NotifiedCardsQuery{}); res.err == nil || res.err.Code != CodeForbidden {
		t.Errorf("a key asked: %+v", res)
	}
}
