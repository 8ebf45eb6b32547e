package actors

// The owner's notification centre on the site: the account's chain
// events, newest first, of every card (the owner sees them all, deleted
// cards' included, where the agents' feed shows only readable cards); how
// many came since a number the owner's browser remembers (the badge in the
// navigation); and each card's latest event, for the Portfolio's "last
// activity". Reads of the ring chain_events.go keeps, nothing more.

// ChainCentreQuery is a page of the notification centre: the events
// numbered below Before (0: from the newest), at most Limit.
type ChainCentreQuery struct {
	Before uint64
	Limit  int
}

// Paging of the notification centre.
const (
	ChainCentreLimitDefault = 50
	ChainCentreLimitMax     = 200
)

// ChainCentreEvent is one event of the centre: the feed's view, with its
// number and the card's name now ("" when the card is gone).
type ChainCentreEvent struct {
	ChainEventView
	Seq      uint64
	CardName string
	// CardGone: the card was deleted or moved away since.
	CardGone bool
}

// ChainCentreView answers a ChainCentreQuery. Latest is the account's
// newest event number (what "seen" is set to when the centre is opened);
// NextBefore pages on when HasMore.
type ChainCentreView struct {
	Events     []ChainCentreEvent
	Latest     uint64
	HasMore    bool
	NextBefore uint64
}

func (q ChainCentreQuery) answer(a *Account, who Principal, _ Level, _ int64) (ChainCentreView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return ChainCentreView{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = ChainCentreLimitDefault
	}
	if limit < 1 || limit > ChainCentreLimitMax {
		return ChainCentreView{}, Errorf(CodeValidation, "limit must be from 1 to %d", ChainCentreLimitMax)
	}
	v := ChainCentreView{Events: []ChainCentreEvent{}, Latest: a.ChainEventSeq}
	for i := len(a.ChainEvents) - 1; i >= 0; i-- {
		e := a.ChainEvents[i]
		if q.Before != 0 && e.Seq >= q.Before {
			continue
		}
		if len(v.Events) == limit {
			v.HasMore, v.NextBefore = true, v.Events[limit-1].Seq
			break
		}
		name, gone := a.cardName(e.CardID), !a.notifiedCard(e.CardID)
		v.Events = append(v.Events, ChainCentreEvent{ChainEventView: e.view(), Seq: e.Seq, CardName: name, CardGone: gone})
	}
	return v, nil
}

// ChainUnseenQuery counts the events numbered after Seen: the badge of
// the notification centre in the site's navigation.
type ChainUnseenQuery struct{ Seen uint64 }

// ChainUnseenView answers a ChainUnseenQuery. Count is at most the ring's
// length: events dropped from it are not counted.
type ChainUnseenView struct {
	Count  int
	Latest uint64
}

func (q ChainUnseenQuery) answer(a *Account, who Principal, _ Level, _ int64) (ChainUnseenView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return ChainUnseenView{}, err
	}
	v := ChainUnseenView{Latest: a.ChainEventSeq}
	if q.Seen >= a.ChainEventSeq {
		return v, nil
	}
	// Seqs are consecutive and the ring ends at ChainEventSeq, so the
	// count is the distance, bounded by what the ring holds.
	v.Count = min(int(a.ChainEventSeq-q.Seen), len(a.ChainEvents))
	return v, nil
}

// LastChainEventsQuery is each card's latest chain event, by card ID: the
// Portfolio's "last activity". A card without one in the ring is absent.
type LastChainEventsQuery struct{}

// LastChainEvent is a card's latest event: what happened and when.
type LastChainEvent struct {
	Kind ChainEventKind
	At   int64
}

func (LastChainEventsQuery) answer(a *Account, who Principal, _ Level, _ int64) (map[string]LastChainEvent, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return nil, err
	}
	out := map[string]LastChainEvent{}
	for i := len(a.ChainEvents) - 1; i >= 0; i-- {
		e := a.ChainEvents[i]
		if _, has := out[e.CardID]; !has {
			out[e.CardID] = LastChainEvent{Kind: e.Kind, At: e.At}
		}
	}
	return out, nil
}

// NotifiedCardsQuery lists what notification rules may be set on, for
// the site's rule pages and the names its delivery log and centre show:
// the Account cards, then each bitcoin Space with its cards, in stored
// order, each card with the scope of the rule that governs it now.
type NotifiedCardsQuery struct{}

// NotifiedCard is a card chain events are told of.
type NotifiedCard struct {
	ID, Name, Address string
	// SpaceID and SpaceName are a bitcoin Space card's Space ("" for an
	// Account card).
	SpaceID, SpaceName string
	// RuleFrom is the scope of the rule that governs the card: its own
	// (card), its Space's (space), the default, or "" when the owner set
	// none and the built-in default applies.
	RuleFrom RuleScope
}

// NotifiedSpace is a bitcoin Space: it may hold a rule for its cards.
type NotifiedSpace struct {
	ID, Name string
	HasRule  bool
}

// NotifiedCardsView answers a NotifiedCardsQuery.
type NotifiedCardsView struct {
	Cards  []NotifiedCard
	Spaces []NotifiedSpace
}

func (NotifiedCardsQuery) answer(a *Account, who Principal, _ Level, _ int64) (NotifiedCardsView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return NotifiedCardsView{}, err
	}
	var v NotifiedCardsView
	for _, c := range a.Portfolio {
		v.Cards = append(v.Cards, NotifiedCard{ID: c.ID, Name: c.Name, Address: c.Address, RuleFrom: a.ruleFrom(c.ID, "")})
	}
	for _, s := range a.Spaces {
		if s.Type != SpaceBitcoin {
			continue
		}
		v.Spaces = append(v.Spaces, NotifiedSpace{ID: s.ID, Name: s.Name, HasRule: a.rule(RuleSpace, s.ID) != nil})
		for _, c := range s.Cards {
			v.Cards = append(v.Cards, NotifiedCard{ID: c.ID, Name: c.Name, Address: c.Address, SpaceID: s.ID, SpaceName: s.Name, RuleFrom: a.ruleFrom(c.ID, s.ID)})
		}
	}
	return v, nil
}

// ruleFrom is the scope of the rule effectiveRule picks for the card.
func (a *Account) ruleFrom(cardID, spaceID string) RuleScope {
	switch {
	case a.rule(RuleCard, cardID) != nil:
		return RuleCard
	case spaceID != "" && a.rule(RuleSpace, spaceID) != nil:
		return RuleSpace
	case a.rule(RuleDefault, "") != nil:
		return RuleDefault
	}
	return ""
}
