package actors

// The agents' chain-event feed, GET /history/activity: our extension of
// the Agent API, paged by the cursor rules of GET /events. It lists only
// the events of cards the reader can read now: a grant removed hides a
// card's events at once, and the events of a card deleted or moved away
// (a move retires the source ID) are not shown to anyone.

// ChainActivityQuery is GET /history/activity.
type ChainActivityQuery struct{ FeedCursor }

// ChainEventView is one chain event as the feed shows it.
type ChainEventView struct {
	ID            string         `json:"id"`
	At            string         `json:"at"`
	Kind          ChainEventKind `json:"kind"`
	CardID        string         `json:"card_id"`
	SpaceID       string         `json:"space_id,omitempty"`
	Address       string         `json:"address"`
	TxID          string         `json:"txid"`
	AmountSat     int64          `json:"amount_sat"`
	Height        int64          `json:"height,omitempty"`
	BlockHash     string         `json:"block_hash,omitempty"`
	Confirmations int64          `json:"confirmations,omitempty"`
	ReplacedBy    string         `json:"replaced_by,omitempty"`
}

// ChainActivityPage is what ChainActivityQuery returns; the edge renders
// the cursor.
type ChainActivityPage struct {
	Events []ChainEventView
	// NextSeq is the cursor to poll from next, as EventsPage's.
	NextSeq uint64
	HasMore bool
}

func (q ChainActivityQuery) answer(a *Account, who Principal, capability Level, now int64) (ChainActivityPage, *Error) {
	visible := func(e ChainEvent) bool { return a.canSee(who, capability, e.card()) }
	events, next, more, err := feedPage(a.ChainEvents, a.ChainEventSeq, q.FeedCursor, now, visible, ChainEvent.view)
	return ChainActivityPage{Events: events, NextSeq: next, HasMore: more}, err
}

// card names the card the event is of.
func (e ChainEvent) card() ResourceRef {
	if e.SpaceID == "" {
		return ResourceRef{Kind: ResourcePortfolioCard, ID: e.CardID}
	}
	return ResourceRef{Kind: ResourceBookmarkCard, ID: e.CardID, SpaceID: e.SpaceID}
}

func (e ChainEvent) view() ChainEventView {
	return ChainEventView{
		ID: e.ID(), At: formatTime(e.At), Kind: e.Kind, CardID: e.CardID, SpaceID: e.SpaceID,
		Address: e.Address, TxID: e.TxID, AmountSat: e.AmountSat,
		Height: e.Height, BlockHash: e.BlockHash, Confirmations: e.Confirmations, ReplacedBy: e.ReplacedBy,
	}
}
