package actors

import (
	"slices"
	"testing"
)

// rule is a rule's fields with every list given.
func rule(depth int64, minAmount int64, channels []string, events ...ChainEventKind) NotifyRuleFields {
	if events == nil {
		events = []ChainEventKind{}
	}
	if channels == nil {
		channels = []string{}
	}
	return NotifyRuleFields{Events: events, MinAmountSat: minAmount, Depth: depth, Channels: channels}
}

// twoCardsOneAddress makes an Account card and a bitcoin Space's card on
// addrs[0] and takes the address in, and returns the two card IDs and
// the Space's.
func twoCardsOneAddress(ta *testAccount) (string, string, string) {
	ta.t.Helper()
	card := ta.createCard(ta.owner, addrs[0])
	space := ta.a.Spaces[0]
	ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b1", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: addrs[0]})
	ta.observeChain(addrs[0], 900)
	return card.ID, "b1", space.ID
}

// A card's own rule wins, then its Space's, then the default, then the
// built-in one (every kind, any amount, depth 6, every channel).
func TestRulePrecedence(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	cardID, spaceCardID, spaceID := twoCardsOneAddress(ta)
	if r := ta.a.effectiveRule(cardID, ""); r.Depth != TxDeepConfirmations || len(r.Events) != 6 || len(r.Channels) != 0 {
		t.Errorf("built-in rule %+v", r)
	}
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(10, 0, nil, ChainTxSeen)})
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleSpace, ID: spaceID, NotifyRuleFields: rule(20, 0, nil, ChainTxConfirmed)})
	if r := ta.a.effectiveRule(cardID, ""); r.Depth != 10 {
		t.Errorf("the Account card follows %+v, want the default", r)
	}
	if r := ta.a.effectiveRule(spaceCardID, spaceID); r.Depth != 20 {
		t.Errorf("the Space's card follows %+v, want its Space's", r)
	}
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleCard, ID: spaceCardID, NotifyRuleFields: rule(30, 0, nil, ChainTxDeep, ChainTxSeen)})
	r := ta.a.effectiveRule(spaceCardID, spaceID)
	if r.Depth != 30 || !slices.Equal(r.Events, []ChainEventKind{ChainTxSeen, ChainTxDeep}) {
		t.Errorf("the card's own rule %+v (events in kind order)", r)
	}
	view, _ := NotifyRulesQuery{}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if !view.Default.Set || view.Default.Depth != 10 || len(view.Cards) != 1 || view.Cards[0].CardID != spaceCardID || len(view.BookmarkSpaces) != 1 {
		t.Errorf("rules view %+v", view)
	}
	ta.mustOK(ta.owner, &DeleteNotifyRule{Scope: RuleCard, ID: spaceCardID})
	if r := ta.a.effectiveRule(spaceCardID, spaceID); r.Depth != 20 {
		t.Errorf("after its rule went the card follows %+v", r)
	}
	ta.mustOK(ta.owner, &DeleteNotifyRule{Scope: RuleDefault})
	ta.mustFail(CodeNotFound, ta.owner, &DeleteNotifyRule{Scope: RuleDefault})
	if r := ta.a.effectiveRule(cardID, ""); r.Depth != TxDeepConfirmations {
		t.Errorf("without a default the card follows %+v", r)
	}
	view, _ = NotifyRulesQuery{}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if view.Default.Set || view.Default.Depth != TxDeepConfirmations || len(view.Default.Events) != 6 {
		t.Errorf("built-in default view %+v", view.Default)
	}
}

func TestRuleValidation(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	cardID, _, spaceID := twoCardsOneAddress(ta)
	ta.addChannel("nc_a")
	ta.mustOK(ta.owner, &CreateSpace{SpaceID: "sp-sheet", ExpectedBookmarkRevision: ta.revision(), Type: SpaceAltcoin, Name: "s"})
	good := rule(6, 0, []string{"nc_a"}, ChainTxSeen)
	cases := []struct {
		name string
		code Code
		p    *PutNotifyRule
	}{
		{"unknown scope", CodeValidation, &PutNotifyRule{Scope: "account", NotifyRuleFields: good}},
		{"default with an id", CodeValidation, &PutNotifyRule{Scope: RuleDefault, ID: cardID, NotifyRuleFields: good}},
		{"no such card", CodeNotFound, &PutNotifyRule{Scope: RuleCard, ID: "card-404", NotifyRuleFields: good}},
		{"no such Space", CodeNotFound, &PutNotifyRule{Scope: RuleSpace, ID: "sp-404", NotifyRuleFields: good}},
		{"an altcoin Space", CodeValidation, &PutNotifyRule{Scope: RuleSpace, ID: "sp-sheet", NotifyRuleFields: good}},
		{"depth 0", CodeValidation, &PutNotifyRule{Scope: RuleSpace, ID: spaceID, NotifyRuleFields: rule(0, 0, nil)}},
		{"depth 101", CodeValidation, &PutNotifyRule{Scope: RuleSpace, ID: spaceID, NotifyRuleFields: rule(101, 0, nil)}},
		{"negative amount", CodeValidation, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(6, -1, nil)}},
		{"unknown kind", CodeValidation, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(6, 0, nil, "tx_lost")}},
		{"a kind twice", CodeValidation, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(6, 0, nil, ChainTxSeen, ChainTxSeen)}},
		{"unknown channel", CodeValidation, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(6, 0, []string{"nc_zz"})}},
		{"a channel twice", CodeValidation, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(6, 0, []string{"nc_a", "nc_a"})}},
		{"no lists", CodeValidation, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: NotifyRuleFields{Depth: 6}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ta.t = t
			ta.mustFail(c.code, ta.owner, c.p)
		})
	}
	ta.t = t
	agent := ta.addKey(LevelWrite)
	ta.mustFail(CodeForbidden, agent, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: good})
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleCard, ID: cardID, NotifyRuleFields: good})
	// A deleted card's rule governs nothing and is gone from the list.
	_, card := ta.a.portfolioCard(cardID)
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: cardID, ExpectedVersion: versionString(card.Version)})
	view, _ := NotifyRulesQuery{}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if len(view.Cards) != 0 {
		t.Errorf("a deleted card's rule is listed: %+v", view.Cards)
	}
	ta.mustFail(CodeNotFound, ta.owner, &DeleteNotifyRule{Scope: RuleCard, ID: cardID})
}

// tx_deep comes to each card at its own rule's depth, once per block;
// the follower keeps telling the address of the tip until every card is
// told.
func TestTxDeepAtEachCardsDepth(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	cardID, spaceCardID, _ := twoCardsOneAddress(ta)
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleCard, ID: cardID, NotifyRuleFields: rule(1, 0, nil, ChainEventKinds...)})
	seq := ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 901, confirmedTx("a1", 901, "b1", 5000))
	events := ta.expectKinds("confirmed at depth 1", seq, ChainTxConfirmed, ChainTxConfirmed, ChainTxDeep)
	if events[2].CardID != cardID || events[2].Confirmations != 1 {
		t.Errorf("tx_deep at depth 1: %+v", events[2])
	}
	deepening := func() []WatchTarget {
		out, _ := DeepeningQuery{}.answer(ta.a, systemP, LevelWrite, ta.at)
		return out
	}
	if d := deepening(); len(d) != 1 || d[0].DeepFrom != 901 || d[0].DeepAt != 901+TxDeepConfirmations-1 {
		t.Fatalf("deepening %+v, want the address until the Space's card is deep", d)
	}
	seq = ta.a.ChainEventSeq
	ta.observeTipOnly(addrs[0], 901+TxDeepConfirmations-2)
	ta.expectKinds("one block short", seq)
	ta.observeTipOnly(addrs[0], 901+TxDeepConfirmations-1)
	late := ta.expectKinds("deep for the Space's card", seq, ChainTxDeep)
	if late[0].CardID != spaceCardID || late[0].Occurrence != events[2].Occurrence || late[0].ID() == events[2].ID() {
		t.Errorf("the second card's tx_deep %+v (first %+v)", late[0], events[2])
	}
	if d := deepening(); len(d) != 0 {
		t.Errorf("deepening %+v after every card was told", d)
	}
	ta.observeTipOnly(addrs[0], 901+TxDeepConfirmations+3)
	ta.expectKinds("once per block", seq, ChainTxDeep)

	// A reorg clears it; the next block's tx_deep is a new occurrence.
	reorged := confirmedTx("a1", 901, "b1", 5000)
	reorged.State = TxReorged
	seq = ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 920, reorged)
	ta.observeChain(addrs[0], 920, confirmedTx("a1", 920, "b2", 5000))
	got := ta.expectKinds("after the reorg", seq, ChainTxReorged, ChainTxReorged, ChainTxConfirmed, ChainTxConfirmed, ChainTxDeep)
	if got[4].Occurrence != 2 || got[4].CardID != cardID {
		t.Errorf("tx_deep in the new block: %+v", got[4])
	}
}

// Without rules every card has the built-in depth: the record keeps no
// per-card marks, exactly as before rules existed.
func TestWithoutRulesDeepIsOneDepth(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	twoCardsOneAddress(ta)
	ta.observeChain(addrs[0], 901, confirmedTx("a1", 901, "b1", 5000))
	seq := ta.a.ChainEventSeq
	ta.observeTipOnly(addrs[0], 901+TxDeepConfirmations-1)
	ta.expectKinds("deep", seq, ChainTxDeep, ChainTxDeep)
	tx := ta.a.watched(addrs[0]).Txs[0]
	if tx.DeepIn != hashN("b1") || tx.DeepCards != nil || tx.DeepCardsIn != "" || ta.a.Notify != nil {
		t.Errorf("record %+v, notify %+v", tx, ta.a.Notify)
	}
}
