package actors

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Chain events: what the chain follower's observations changed, told per
// card. Each change ObserveChain records to a transaction of a watched
// address is an event for every card holding the address (an Account card
// and a bitcoin Space's card may hold the same one: an event each). The
// agents' feed (GET /v1/history/activity, chain_activity.go) and, later,
// the owner's notifications read them. They are derived in apply from the
// record alone, so every replica holds the same events with the same IDs.

// ChainEventKind is what happened to a transaction of a watched address.
type ChainEventKind string

const (
	// ChainTxSeen: new, in the mempool (or back in it after it was
	// dropped or replaced).
	ChainTxSeen ChainEventKind = "tx_seen"
	// ChainTxConfirmed: in a block of the best chain, for the first time
	// or again after a reorg took it out.
	ChainTxConfirmed ChainEventKind = "tx_confirmed"
	// ChainTxDeep: its block is TxDeepConfirmations deep.
	ChainTxDeep ChainEventKind = "tx_deep"
	// ChainTxReplaced: replaced in the mempool by ReplacedBy.
	ChainTxReplaced ChainEventKind = "tx_replaced"
	// ChainTxDropped: left the mempool unconfirmed and not replaced.
	ChainTxDropped ChainEventKind = "tx_dropped"
	// ChainTxReorged: its block left the best chain: what undoes a
	// tx_confirmed (and a tx_deep).
	ChainTxReorged ChainEventKind = "tx_reorged"
)

// TxDeepConfirmations is the depth that makes a confirmed transaction
// deep (tx_deep): tip height − block height + 1 ≥ it. One number for
// every card until rules per card or Space set their own.
const TxDeepConfirmations = 6

// Bounds of the account's chain events: a ring like the audit records.
const (
	// chainEventsMax is how many an account keeps. An account holds at
	// most 110 cards; a thousand events is a day of several payments a
	// block to each, and an agent polling every few minutes misses none.
	chainEventsMax = 1000
	// chainEventsAgeMax drops older events on the next one.
	chainEventsAgeMax = auditAgeMax
)

// ChainEvent is one event of one card. Its ID is derived, not stored
// (ID): it is a function of the fields that make the fact.
type ChainEvent struct {
	Seq     uint64         `json:"seq"` // from Account.ChainEventSeq: the feed's order and cursor
	At      int64          `json:"at"`  // the observation's command time
	Kind    ChainEventKind `json:"kind"`
	CardID  string         `json:"card_id"`
	SpaceID string         `json:"space_id,omitempty"` // a bitcoin Space's card; empty for an Account card
	Address string         `json:"address"`
	TxID    string         `json:"txid"`
	// Occurrence counts how many times the transaction entered Kind on
	// this address, this one included (WatchedTx.Entered): a redelivery of
	// a fact has the same, a second confirmation after a reorg the next.
	Occurrence uint32 `json:"occurrence"`
	// AmountSat is the card's net change: received − sent by the
	// transaction for the address.
	AmountSat     int64  `json:"amount_sat"`
	Height        int64  `json:"height,omitempty"`        // confirmed, deep, reorged: the block's height
	BlockHash     string `json:"block_hash,omitempty"`    // as Height
	Confirmations int64  `json:"confirmations,omitempty"` // confirmed, deep: at the observation's tip
	ReplacedBy    string `json:"replaced_by,omitempty"`   // replaced
}

// ID is the event's stable ID: derived from (card, txid, kind,
// occurrence), so the same fact always has the same ID and a new fact a
// new one. The API shows it as an opaque string.
func (e ChainEvent) ID() string {
	return ChainEventID(e.CardID, e.TxID, e.Kind, e.Occurrence)
}

// ChainEventID is the ID of the occurrence-th time txid entered kind on
// the card: "ce_" and the first 16 bytes of a SHA-256 over the four, in
// hex. The fields are joined with a byte none of them holds.
func ChainEventID(cardID, txid string, kind ChainEventKind, occurrence uint32) string {
	h := sha256.New()
	for _, field := range []string{cardID, txid, string(kind), strconv.FormatUint(uint64(occurrence), 10)} {
		h.Write([]byte(field))
		h.Write([]byte{0})
	}
	return "ce_" + hex.EncodeToString(h.Sum(nil)[:16])
}

func (e ChainEvent) feedSeq() uint64 { return e.Seq }
func (e ChainEvent) feedAt() int64   { return e.At }

// TxOccurrences counts, per kind, the chain events a transaction gave on
// one address.
type TxOccurrences struct {
	Seen      uint32 `json:"seen,omitempty"`
	Confirmed uint32 `json:"confirmed,omitempty"`
	Deep      uint32 `json:"deep,omitempty"`
	Replaced  uint32 `json:"replaced,omitempty"`
	Dropped   uint32 `json:"dropped,omitempty"`
	Reorged   uint32 `json:"reorged,omitempty"`
}

// enter counts one more occurrence of kind and returns it.
func (o *TxOccurrences) enter(kind ChainEventKind) uint32 {
	n := occurrencesOf[kind](o)
	*n++
	return *n
}

// occurrencesOf is the counter of each kind.
var occurrencesOf = map[ChainEventKind]func(*TxOccurrences) *uint32{
	ChainTxSeen:      func(o *TxOccurrences) *uint32 { return &o.Seen },
	ChainTxConfirmed: func(o *TxOccurrences) *uint32 { return &o.Confirmed },
	ChainTxDeep:      func(o *TxOccurrences) *uint32 { return &o.Deep },
	ChainTxReplaced:  func(o *TxOccurrences) *uint32 { return &o.Replaced },
	ChainTxDropped:   func(o *TxOccurrences) *uint32 { return &o.Dropped },
	ChainTxReorged:   func(o *TxOccurrences) *uint32 { return &o.Reorged },
}

// txChange is one event a recorded change gives, with the observation
// whose block or replacement it names (a reorg names the block left).
type txChange struct {
	kind ChainEventKind
	of   TxObservation
}

// txChanges are the events of a transaction going from before (nil: not
// recorded) to now. Leaving a block, for another or for none, undoes the
// confirmation (tx_reorged) before anything else; a transaction first
// seen confirmed is confirmed, never seen; and coming back to the mempool
// after a reorg says nothing more, the reorg did.
func txChanges(before *TxObservation, now TxObservation) []txChange {
	var out []txChange
	wasConfirmed := before != nil && before.State == TxConfirmed
	leftBlock := wasConfirmed && (now.State != TxConfirmed || now.BlockHash != before.BlockHash)
	if leftBlock {
		out = append(out, txChange{ChainTxReorged, *before})
	}
	var kind ChainEventKind
	switch now.State {
	case TxMempool:
		if before == nil || before.State == TxDropped || before.State == TxReplaced {
			kind = ChainTxSeen
		}
	case TxConfirmed:
		if !wasConfirmed || leftBlock {
			kind = ChainTxConfirmed
		}
	case TxReplaced:
		if before == nil || before.State != TxReplaced || before.ReplacedBy != now.ReplacedBy {
			kind = ChainTxReplaced
		}
	case TxDropped:
		if before == nil || before.State != TxDropped {
			kind = ChainTxDropped
		}
	}
	if kind != "" {
		out = append(out, txChange{kind, now})
	}
	return out
}

// confirmations is how deep a block at height is under a tip at tip: 1
// for the tip itself. A tip read before the block came is taken as the
// block.
func confirmations(tip, height int64) int64 {
	return max(tip-height+1, 1)
}

// cardPlace names a card holding a watched address: its ID and, for a
// bookmark card, its Space; and the depth its rule tells tx_deep at.
type cardPlace struct {
	cardID, spaceID string
	depth           int64
}

// cardsHolding are the cards holding address, Account cards first, then
// the bitcoin Spaces' cards, in stored order.
func (a *Account) cardsHolding(address string) []cardPlace {
	var out []cardPlace
	for _, c := range a.Portfolio {
		if c.Address == address {
			out = append(out, cardPlace{cardID: c.ID, depth: a.deepDepth(c.ID, "")})
		}
	}
	for _, s := range a.Spaces {
		if s.Type != SpaceBitcoin {
			continue
		}
		for _, c := range s.Cards {
			if c.Address == address {
				out = append(out, cardPlace{cardID: c.ID, spaceID: s.ID, depth: a.deepDepth(c.ID, s.ID)})
			}
		}
	}
	return out
}

// tell records the change of t, a transaction of w, as an event for every
// card in cards and returns how many it recorded. The occurrence is
// counted once, on the address's record: each card's event of it shares
// the number.
func (a *Account) tell(c *Command, cards []cardPlace, w *WatchedAddress, t *WatchedTx, change txChange) int {
	return a.tellAs(c, cards, w, t, change, t.Entered.enter(change.kind))
}

// tellAs is tell with the occurrence given: the cards of one tx_deep may
// be told at different tips, each at its rule's depth, and share it.
// Each event is enqueued for the owner's channels its card's rule
// selects (notify_outbox.go).
func (a *Account) tellAs(c *Command, cards []cardPlace, w *WatchedAddress, t *WatchedTx, change txChange, occurrence uint32) int {
	tip := w.TipHeight
	e := ChainEvent{At: c.At, Kind: change.kind, Address: w.Address, TxID: t.TxID,
		Occurrence: occurrence, AmountSat: t.ReceivedSat - t.SentSat}
	switch change.kind {
	case ChainTxConfirmed, ChainTxDeep:
		e.Height, e.BlockHash, e.Confirmations = change.of.Height, change.of.BlockHash, confirmations(tip, change.of.Height)
	case ChainTxReorged:
		e.Height, e.BlockHash = change.of.Height, change.of.BlockHash
	case ChainTxReplaced:
		e.ReplacedBy = change.of.ReplacedBy
	}
	for _, card := range cards {
		e.CardID, e.SpaceID = card.cardID, card.spaceID
		a.enqueue(c, a.appendChainEvent(e))
	}
	return len(cards)
}

// appendChainEvent numbers e, keeps the ring within its bounds, and
// returns e as numbered.
func (a *Account) appendChainEvent(e ChainEvent) ChainEvent {
	a.ChainEventSeq++
	e.Seq = a.ChainEventSeq
	a.ChainEvents = keepRecent(append(a.ChainEvents, e), chainEventsMax, chainEventsAgeMax)
	return e
}
