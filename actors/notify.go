package actors

import "time"

// The owner's notifications: channels (a signed webhook, an ntfy topic,
// an email address), rules per card or Space saying which chain events
// reach which channels, and the outbox of deliveries the leader's
// deliverer works through, acknowledged through the log. All of it is
// replicated state, so a new leader goes on where the old one stopped:
// at least once, never lost, the same event ID on every try.
//
// The files: notify_channels.go (the channels), notify_rules.go (the
// rules and a card's effective one), notify_outbox.go (entries, their
// order and bounds, "send again", what is due), notify_deliveries.go (the
// acknowledgements, the back-off and the delivery log). DESIGN.md has the
// outbox's section.

// NotifyState is an account's notification settings and outbox. It is
// nil until the owner makes a channel or a rule (feature version 6): an
// account without it holds exactly what it held before notifications
// existed, so a log a version-5 node applies gives it the same state.
type NotifyState struct {
	Channels []*NotifyChannel `json:"channels,omitempty"`
	// Rules: at most one default, one per card and one per bitcoin
	// Space, in the order they were first set.
	Rules []*NotifyRule `json:"rules,omitempty"`
	// Outbox holds the deliveries, in the order they were enqueued: the
	// order of the chain events, which is the order of delivery per
	// channel and card.
	Outbox []*OutboxEntry `json:"outbox,omitempty"`
	// Deliveries is the delivery log, oldest first (a ring, like the
	// audit records); DeliverySeq numbers its lines.
	Deliveries  []DeliveryLine `json:"deliveries,omitempty"`
	DeliverySeq uint64         `json:"delivery_seq,omitempty"`
}

// NotifyChannelsMax is the most notification channels an account holds,
// whatever its plan; the site says it beside the add form it hides.
const NotifyChannelsMax = 10

// Bounds of the notification state.
const (
	// notifyChannelsMax: an owner has a few places to be told at; ten
	// bounds the fan-out of one event.
	notifyChannelsMax = NotifyChannelsMax
	// outboxPendingMax bounds the entries not yet delivered or given up
	// per account: a receiver down for a day behind a busy account. Past
	// it the oldest pending entry is given up (outbox_full), in the
	// delivery log, never silently.
	outboxPendingMax = 5000
	// outboxDoneMax and outboxDoneAgeMax bound the delivered and given-up
	// entries kept for "send again".
	outboxDoneMax    = 1000
	outboxDoneAgeMax = 7 * 24 * time.Hour
	// deliveryLinesMax and deliveryLinesAgeMax bound the delivery log.
	deliveryLinesMax    = 1000
	deliveryLinesAgeMax = 7 * 24 * time.Hour
)

// notify is the account's notification state, made empty when it has
// none: only a command of feature version 6 calls it.
func (a *Account) notify() *NotifyState {
	if a.Notify == nil {
		a.Notify = &NotifyState{}
	}
	return a.Notify
}

// notifyChannel is the channel id of the account, nil when there is none.
func (a *Account) notifyChannel(id string) *NotifyChannel {
	if a.Notify == nil {
		return nil
	}
	for _, ch := range a.Notify.Channels {
		if ch.ID == id {
			return ch
		}
	}
	return nil
}

// requireOwnerOnly refuses every principal but the owner: the system has
// its own commands, and an API key never manages notifications.
func requireOwnerOnly(c *Command) *Error {
	if c.Principal.Kind != PrincipalOwner {
		return Errorf(CodeForbidden, "only the owner manages notifications")
	}
	return nil
}

// ownerOnlyQuery refuses an agent's read of the notification settings.
func ownerOnlyQuery(who Principal) *Error {
	if who.isAgent() {
		return Errorf(CodeForbidden, "API keys cannot read the notification settings")
	}
	return nil
}

// optionalTime renders a time the view leaves out when it is zero.
func optionalTime(unixNanos int64) *string {
	if unixNanos == 0 {
		return nil
	}
	s := formatTime(unixNanos)
	return &s
}
