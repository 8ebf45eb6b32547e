package actors

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// The outbox: one entry per chain event and channel its card's rule
// selects, enqueued in apply of ObserveChain, so every replica holds the
// same entries and a new leader delivers what the old one had not. Per
// channel and card the entries go out in order: an entry is due only
// when every earlier entry of its card on its channel is delivered or
// given up (a receiver must never hear tx_deep before tx_confirmed).

// DeliveryState is where an outbox entry stands.
type DeliveryState string

const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryGivenUp   DeliveryState = "given_up"
)

// ClassOutboxFull is the class of an entry given up because the account's
// outbox held outboxPendingMax entries not yet delivered.
const ClassOutboxFull = "outbox_full"

// OutboxEntry is one event to one channel.
type OutboxEntry struct {
	ID string `json:"id"` // DeliveryEntryID(event, channel)
	// Event is a copy: the chain-event ring may drop the event before
	// its delivery ends.
	Event     ChainEvent    `json:"event"`
	ChannelID string        `json:"channel_id"`
	CreatedAt int64         `json:"created_at"`
	State     DeliveryState `json:"state"`
	// Attempts counts the tries recorded (RecordDeliveries); the next is
	// Attempts+1. "Send again" does not reset it.
	Attempts int   `json:"attempts"`
	NextAt   int64 `json:"next_at"`
	// FirstTryAt starts the entry's day of tries (deliveryGiveUpAfter);
	// "send again" starts another.
	FirstTryAt    int64  `json:"first_try_at,omitempty"`
	LastAt        int64  `json:"last_at,omitempty"`
	LastStatus    int    `json:"last_status,omitempty"`
	LastClass     string `json:"last_class,omitempty"`
	LastLatencyMs int64  `json:"last_latency_ms,omitempty"`
	// DoneAt is when it was delivered or given up: it leaves the outbox
	// outboxDoneAgeMax later.
	DoneAt int64 `json:"done_at,omitempty"`
}

// DeliveryEntryID is the ID of the entry of the event eventID to the
// channel channelID: "nd_" and the first 16 bytes of a SHA-256 over the
// two, in hex. One fact to one channel is one entry, whoever enqueues it.
func DeliveryEntryID(eventID, channelID string) string {
	h := sha256.New()
	h.Write([]byte(eventID))
	h.Write([]byte{0})
	h.Write([]byte(channelID))
	return "nd_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// queueKey names the order an entry is delivered in: its channel and card.
type queueKey struct{ channel, card string }

func (e *OutboxEntry) queue() queueKey { return queueKey{e.ChannelID, e.Event.CardID} }

// enqueue adds an entry for e to every enabled channel e's card's rule
// selects, and returns how many. Without channels it does nothing at
// all: an account that never had notifications keeps the state it had.
func (a *Account) enqueue(c *Command, e ChainEvent) int {
	n := a.Notify
	if n == nil || len(n.Channels) == 0 {
		return 0
	}
	rule := a.effectiveRule(e.CardID, e.SpaceID)
	if !rule.selects(&e) {
		return 0
	}
	id, added := e.ID(), 0
	for _, ch := range n.Channels {
		if !ch.Enabled || !rule.sendsTo(ch.ID) {
			continue
		}
		n.Outbox = append(n.Outbox, &OutboxEntry{ID: DeliveryEntryID(id, ch.ID), Event: e, ChannelID: ch.ID,
			CreatedAt: c.At, State: DeliveryPending, NextAt: c.At})
		added++
	}
	return added
}

// outboxLen is how many entries the outbox holds.
func (a *Account) outboxLen() int {
	if a.Notify == nil {
		return 0
	}
	return len(a.Notify.Outbox)
}

// settleOutbox keeps the outbox within its bounds after a change: the
// oldest pending entries past outboxPendingMax are given up, each with a
// line in the delivery log; delivered and given-up entries leave after
// outboxDoneAgeMax, and the oldest past outboxDoneMax.
func (a *Account) settleOutbox(c *Command) {
	n := a.Notify
	if n == nil || len(n.Outbox) == 0 {
		return
	}
	pending, done := 0, 0
	for _, e := range n.Outbox {
		if e.State == DeliveryPending {
			pending++
		}
	}
	for _, e := range n.Outbox {
		if pending <= outboxPendingMax {
			break
		}
		if e.State == DeliveryPending {
			e.State, e.DoneAt, e.LastClass = DeliveryGivenUp, c.At, ClassOutboxFull
			a.logDelivery(DeliveryLine{At: c.At, ChannelID: e.ChannelID, EntryID: e.ID, Attempt: e.Attempts,
				Class: ClassOutboxFull, Detail: "the account's outbox is full: the oldest undelivered notification was given up"}, e)
			pending--
		}
	}
	cutoff := c.At - int64(outboxDoneAgeMax)
	n.Outbox = slices.DeleteFunc(n.Outbox, func(e *OutboxEntry) bool {
		return e.State != DeliveryPending && e.DoneAt <= cutoff
	})
	for _, e := range n.Outbox {
		if e.State != DeliveryPending {
			done++
		}
	}
	if done > outboxDoneMax {
		drop := done - outboxDoneMax
		n.Outbox = slices.DeleteFunc(n.Outbox, func(e *OutboxEntry) bool {
			if drop > 0 && e.State != DeliveryPending {
				drop--
				return true
			}
			return false
		})
	}
}

// outboxEntry is the entry id, nil when there is none.
func (n *NotifyState) outboxEntry(id string) *OutboxEntry {
	for _, e := range n.Outbox {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// RedeliverEntry is the owner's "send again": the entry is pending again
// and due now, with the same event (so the same event ID) and its tries
// counted on; it has another day of tries. It still waits for the
// earlier entries of its card on its channel.
type RedeliverEntry struct {
	EntryID string `json:"entry_id"`
}

func (*RedeliverEntry) Kind() Kind { return KindRedeliverEntry }

func (p *RedeliverEntry) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	var e *OutboxEntry
	if a.Notify != nil {
		e = a.Notify.outboxEntry(p.EntryID)
	}
	if e == nil {
		return fail(Errorf(CodeNotFound, "no such delivery in the outbox"))
	}
	ch := a.notifyChannel(e.ChannelID)
	if ch == nil || !ch.Enabled {
		return fail(Errorf(CodeConflict, "the channel is disabled: enable it first"))
	}
	e.State, e.NextAt, e.FirstTryAt, e.DoneAt = DeliveryPending, c.At, 0, 0
	a.settleOutbox(c)
	a.nextVersion()
	return Result{Status: 202, Body: e.view()}
}

// OutboxEntryView is an entry as the owner sees it.
type OutboxEntryView struct {
	EntryID   string         `json:"entry_id"`
	EventID   string         `json:"event_id"`
	Kind      ChainEventKind `json:"kind"`
	CardID    string         `json:"card_id"`
	ChannelID string         `json:"channel_id"`
	State     DeliveryState  `json:"state"`
	Attempts  int            `json:"attempts"`
	NextAt    string         `json:"next_at"`
}

func (e *OutboxEntry) view() OutboxEntryView {
	return OutboxEntryView{EntryID: e.ID, EventID: e.Event.ID(), Kind: e.Event.Kind, CardID: e.Event.CardID,
		ChannelID: e.ChannelID, State: e.State, Attempts: e.Attempts, NextAt: formatTime(e.NextAt)}
}

// DueDeliveriesQuery is the leader's deliverer's read: the entries due at
// Now, at most one per channel and card (the first not yet delivered or
// given up, when its NextAt has come), at most Max (0: dueDeliveriesMax),
// each with what a sender needs; and the earliest NextAt of the rest, so
// the deliverer can sleep until then. A disabled channel's entries are
// not due. Only the system reads it.
type DueDeliveriesQuery struct {
	Now int64
	Max int
}

// dueDeliveriesMax bounds one answer.
const dueDeliveriesMax = 256

// DueDeliveries is DueDeliveriesQuery's answer.
type DueDeliveries struct {
	Due []DueDelivery
	// NextAt is the earliest time an entry not in Due becomes due (0:
	// none is waiting on time; a later event or ack may add one).
	NextAt int64
}

// DueDelivery is one try to make: Attempt is the one its ack must name.
type DueDelivery struct {
	EntryID string
	Attempt int
	Event   ChainEvent
	Channel NotifyChannelTarget
	// CardName is the card's name now (the owner's text).
	CardName string
}

func (q DueDeliveriesQuery) answer(a *Account, who Principal, _ Level, _ int64) (DueDeliveries, *Error) {
	if who.Kind != PrincipalSystem {
		return DueDeliveries{}, errUnauthorized
	}
	var out DueDeliveries
	if a.Notify == nil {
		return out, nil
	}
	limit := q.Max
	if limit <= 0 || limit > dueDeliveriesMax {
		limit = dueDeliveriesMax
	}
	heads := map[queueKey]bool{}
	for _, e := range a.Notify.Outbox {
		if e.State != DeliveryPending || heads[e.queue()] {
			continue
		}
		heads[e.queue()] = true
		ch := a.notifyChannel(e.ChannelID)
		if ch == nil || !ch.Enabled {
			continue
		}
		if e.NextAt > q.Now || len(out.Due) >= limit {
			if at := max(e.NextAt, q.Now); out.NextAt == 0 || at < out.NextAt {
				out.NextAt = at
			}
			continue
		}
		out.Due = append(out.Due, DueDelivery{EntryID: e.ID, Attempt: e.Attempts + 1, Event: e.Event,
			Channel: ch.target(q.Now), CardName: a.cardName(e.Event.CardID)})
	}
	return out, nil
}

// cardName is the name of the Account card or bitcoin Space card id ("" when
// it is gone).
func (a *Account) cardName(id string) string {
	if _, c := a.portfolioCard(id); c != nil {
		return c.Name
	}
	if s := a.spaceCardOf(id); s != nil {
		for _, c := range s.Cards {
			if c.ID == id {
				return c.Name
			}
		}
	}
	return ""
}

// OutboxQuery is the owner's summary of the outbox per channel.
type OutboxQuery struct{}

// OutboxView is the body of GET /owner/v1/notifications/outbox.
type OutboxView struct {
	Channels []OutboxChannelView `json:"channels"`
}

// OutboxChannelView is one channel's share of the outbox.
type OutboxChannelView struct {
	ChannelID      string  `json:"channel_id"`
	Name           string  `json:"name"`
	Enabled        bool    `json:"enabled"`
	DisabledReason string  `json:"disabled_reason,omitempty"`
	Pending        int     `json:"pending"`
	OldestPending  *string `json:"oldest_pending_at"`
	NextAt         *string `json:"next_at"`
	FailingSince   *string `json:"failing_since"`
	LastSuccessAt  *string `json:"last_success_at"`
}

func (OutboxQuery) answer(a *Account, who Principal, _ Level, _ int64) (OutboxView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return OutboxView{}, err
	}
	v := OutboxView{Channels: []OutboxChannelView{}}
	if a.Notify == nil {
		return v, nil
	}
	for _, ch := range a.Notify.Channels {
		cv := OutboxChannelView{ChannelID: ch.ID, Name: ch.Name, Enabled: ch.Enabled, DisabledReason: ch.DisabledReason,
			FailingSince: optionalTime(ch.FailingSince), LastSuccessAt: optionalTime(ch.LastSuccessAt)}
		var oldest, next int64
		for _, e := range a.Notify.Outbox {
			if e.ChannelID != ch.ID || e.State != DeliveryPending {
				continue
			}
			cv.Pending++
			if oldest == 0 || e.CreatedAt < oldest {
				oldest = e.CreatedAt
			}
			if next == 0 || e.NextAt < next {
				next = e.NextAt
			}
		}
		cv.OldestPending, cv.NextAt = optionalTime(oldest), optionalTime(next)
		v.Channels = append(v.Channels, cv)
	}
	return v, nil
}
