package actors

import (
	"slices"
	"time"
	"unicode/utf8"
)

// Acknowledgements through the log. The leader's deliverer tries the due
// entries and proposes what each try gave (RecordDeliveries); apply
// records it, schedules the next try, gives up after a day, and tells
// the channel's health. Two leaders may both have tried one entry (a
// leader deposed mid-try): the first result the log orders wins, the
// second names an attempt that is no longer the next and changes nothing.

// Timing of tries.
const (
	// deliveryGiveUpAfter: a failure a day or more after the entry's
	// first try is its last.
	deliveryGiveUpAfter = 24 * time.Hour
	// channelFailingMax: a channel whose tries have all failed for a day
	// is disabled ("failing").
	channelFailingMax = 24 * time.Hour
)

// deliveryBackoff is the wait after the n-th failed try (1-based); past
// its end, every deliveryBackoffLast.
var deliveryBackoff = []time.Duration{
	30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour,
}

const deliveryBackoffLast = 4 * time.Hour

// DeliveryBackoff is the wait after the attempts-th failed try.
func DeliveryBackoff(attempts int) time.Duration {
	if attempts >= 1 && attempts <= len(deliveryBackoff) {
		return deliveryBackoff[attempts-1]
	}
	return deliveryBackoffLast
}

// Bounds of an acknowledgement.
const (
	// DeliveryResultsMax bounds the tries one RecordDeliveries carries.
	DeliveryResultsMax = 256
	// DeliveryDetailBytesMax bounds a try's detail: one line of the log.
	DeliveryDetailBytesMax = 300
	deliveryClassBytesMax  = 32
	deliveryEntryIDBytes   = 35 // "nd_" and 32 hex digits
	deliveryRetryAfterMax  = 24 * time.Hour
	deliveryLatencyMax     = time.Hour
	deliveryAttemptsMax    = 1 << 20
)

// DeliveryResult is what one try of one entry gave.
type DeliveryResult struct {
	EntryID string `json:"entry_id"`
	// Attempt is the try's number: the entry's Attempts+1 when it was
	// read due; any other is a try recorded already, and ignored.
	Attempt   int    `json:"attempt"`
	At        int64  `json:"at"` // when the try started, Unix nanoseconds
	Delivered bool   `json:"delivered,omitempty"`
	Status    int    `json:"status,omitempty"` // HTTP status or SMTP reply code; 0 for none
	LatencyMs int64  `json:"latency_ms,omitempty"`
	Class     string `json:"class,omitempty"`
	Detail    string `json:"detail,omitempty"`
	// RetryAfterMs is the receiver's Retry-After (or a rate limit's
	// wait): the next try comes no sooner.
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
}

// RecordDeliveries records a batch of tries. Only the system proposes it
// (the leader's deliverer).
type RecordDeliveries struct {
	Results []DeliveryResult `json:"results"`
}

func (*RecordDeliveries) Kind() Kind { return KindRecordDeliveries }

// RecordedDeliveriesView is the body of an applied RecordDeliveries.
type RecordedDeliveriesView struct {
	Recorded int `json:"recorded"`
	// Ignored tries named an entry that is gone, not pending, or whose
	// next attempt is another: a try recorded already.
	Ignored int `json:"ignored"`
}

func (p *RecordDeliveries) apply(a *Account, c *Command, _ Level) Result {
	if c.Principal.Kind != PrincipalSystem {
		return fail(errUnauthorized)
	}
	if err := p.validate(); err != nil {
		return fail(err)
	}
	var v RecordedDeliveriesView
	for i := range p.Results {
		if a.recordDelivery(&p.Results[i]) {
			v.Recorded++
		} else {
			v.Ignored++
		}
	}
	if v.Recorded > 0 {
		a.settleOutbox(c)
	}
	return ok(v)
}

func (p *RecordDeliveries) validate() *Error {
	if len(p.Results) == 0 || len(p.Results) > DeliveryResultsMax {
		return Errorf(CodeValidation, "a batch records 1 to %d tries", DeliveryResultsMax)
	}
	for i := range p.Results {
		if err := p.Results[i].validate(); err != nil {
			return err
		}
	}
	return nil
}

func (r *DeliveryResult) validate() *Error {
	switch {
	case len(r.EntryID) != deliveryEntryIDBytes || r.EntryID[:3] != "nd_" || !isIDChars(r.EntryID):
		return Errorf(CodeValidation, "entry_id must be an outbox entry's id")
	case r.Attempt < 1 || r.Attempt > deliveryAttemptsMax:
		return Errorf(CodeValidation, "attempt must be from 1 to %d", deliveryAttemptsMax)
	case r.At <= 0:
		return Errorf(CodeValidation, "a try needs its time")
	case r.Status < 0 || r.Status > 999:
		return Errorf(CodeValidation, "status must be from 0 to 999")
	case r.LatencyMs < 0 || r.LatencyMs > deliveryLatencyMax.Milliseconds():
		return Errorf(CodeValidation, "latency out of range")
	case r.RetryAfterMs < 0 || r.RetryAfterMs > deliveryRetryAfterMax.Milliseconds():
		return Errorf(CodeValidation, "retry_after_ms out of range")
	case len(r.Class) > deliveryClassBytesMax || !isIDChars(r.Class):
		return Errorf(CodeValidation, "class must be at most %d letters, digits, - or _", deliveryClassBytesMax)
	case len(r.Detail) > DeliveryDetailBytesMax || !utf8.ValidString(r.Detail) || !isPrintable(r.Detail):
		return Errorf(CodeValidation, "detail must be one printable line of at most %d bytes", DeliveryDetailBytesMax)
	case r.Delivered && r.Class != "":
		return Errorf(CodeValidation, "a delivered try has no failure class")
	}
	return nil
}

// recordDelivery records one try and reports whether it did: a try of an
// entry that is gone or not pending, or not its next attempt, is one
// recorded already (by another leader) and changes nothing.
func (a *Account) recordDelivery(r *DeliveryResult) bool {
	if a.Notify == nil {
		return false
	}
	e := a.Notify.outboxEntry(r.EntryID)
	if e == nil || e.State != DeliveryPending || r.Attempt != e.Attempts+1 {
		return false
	}
	e.Attempts = r.Attempt
	e.LastAt, e.LastStatus, e.LastClass, e.LastLatencyMs = r.At, r.Status, r.Class, r.LatencyMs
	if e.FirstTryAt == 0 {
		e.FirstTryAt = r.At
	}
	ch := a.notifyChannel(e.ChannelID)
	if r.Delivered {
		e.State, e.DoneAt = DeliveryDelivered, r.At
		if ch != nil {
			ch.FailingSince, ch.LastSuccessAt = 0, max(ch.LastSuccessAt, r.At)
		}
	} else {
		if r.At-e.FirstTryAt >= int64(deliveryGiveUpAfter) {
			e.State, e.DoneAt = DeliveryGivenUp, r.At
		} else {
			wait := max(DeliveryBackoff(e.Attempts), time.Duration(r.RetryAfterMs)*time.Millisecond)
			e.NextAt = r.At + int64(wait)
		}
		if ch != nil && r.Class != string(ClassRateLimitedOurs) {
			ch.failed(r.At)
		}
	}
	a.logDelivery(DeliveryLine{At: r.At, ChannelID: e.ChannelID, EntryID: e.ID, Attempt: r.Attempt,
		Delivered: r.Delivered, Status: r.Status, Class: r.Class, LatencyMs: r.LatencyMs, Detail: r.Detail}, e)
	return true
}

// ClassRateLimitedOurs is the class of a try our own budgets held back
// (notify/egress's rate_limited): the receiver was not asked, so it says
// nothing of the channel's health.
const ClassRateLimitedOurs = "rate_limited"

// failed counts a failed try at at against the channel: the first since
// a success starts its failing day, and one a day or more after that
// disables it.
func (ch *NotifyChannel) failed(at int64) {
	if ch.FailingSince == 0 {
		ch.FailingSince = at
		return
	}
	if ch.Enabled && at-ch.FailingSince >= int64(channelFailingMax) {
		ch.Enabled, ch.DisabledAt, ch.DisabledReason = false, at, DisabledFailing
	}
}

// DeliveryLine is one line of the delivery log: one try, or an entry
// given up without one (outbox_full).
type DeliveryLine struct {
	Seq       uint64         `json:"seq"`
	At        int64          `json:"at"`
	ChannelID string         `json:"channel_id"`
	EntryID   string         `json:"entry_id"`
	EventID   string         `json:"event_id"`
	Kind      ChainEventKind `json:"kind"`
	CardID    string         `json:"card_id"`
	// AmountSat is the event's (the card's net change), for the log's
	// reader: the event may leave the chain-event ring before the line.
	AmountSat int64  `json:"amount_sat,omitempty"`
	Attempt   int    `json:"attempt"`
	Delivered bool   `json:"delivered,omitempty"`
	Status    int    `json:"status,omitempty"`
	Class     string `json:"class,omitempty"`
	LatencyMs int64  `json:"latency_ms,omitempty"`
	Detail    string `json:"detail,omitempty"`
	// GaveUp says this try (or the outbox's bound) ended the entry
	// undelivered.
	GaveUp bool `json:"gave_up,omitempty"`
}

func (l DeliveryLine) feedSeq() uint64 { return l.Seq }
func (l DeliveryLine) feedAt() int64   { return l.At }

// logDelivery numbers l, fills in what it says of e, and keeps the log
// within its bounds.
func (a *Account) logDelivery(l DeliveryLine, e *OutboxEntry) {
	n := a.Notify
	n.DeliverySeq++
	l.Seq, l.EventID, l.Kind, l.CardID, l.GaveUp = n.DeliverySeq, e.Event.ID(), e.Event.Kind, e.Event.CardID, e.State == DeliveryGivenUp
	l.AmountSat = e.Event.AmountSat
	// The ring is kept in log order, which a try's own time (the
	// deliverer's clock) need not follow: age is judged by the newest
	// line, as for the other rings.
	n.Deliveries = keepRecent(append(n.Deliveries, l), deliveryLinesMax, deliveryLinesAgeMax)
}

// DeliveryLogQuery is the owner's read of the delivery log, newest first:
// lines numbered below Before (0: from the newest), at most Limit, of the
// channel ChannelID only when set.
type DeliveryLogQuery struct {
	Before    uint64
	Limit     int
	ChannelID string
}

// Paging of the delivery log.
const (
	DeliveryLogLimitDefault = 50
	DeliveryLogLimitMax     = 200
)

// DeliveryLogView is the body of GET /owner/v1/notifications/deliveries.
// NextBefore pages on (the next page's before) when HasMore.
type DeliveryLogView struct {
	Deliveries []DeliveryLineView `json:"deliveries"`
	HasMore    bool               `json:"has_more"`
	NextBefore *uint64            `json:"next_before"`
}

// DeliveryLineView is one line as the owner sees it.
type DeliveryLineView struct {
	Seq       uint64         `json:"seq"`
	At        string         `json:"at"`
	ChannelID string         `json:"channel_id"`
	EntryID   string         `json:"entry_id"`
	EventID   string         `json:"event_id"`
	Kind      ChainEventKind `json:"kind"`
	CardID    string         `json:"card_id"`
	AmountSat int64          `json:"amount_sat"`
	Attempt   int            `json:"attempt"`
	Delivered bool           `json:"delivered"`
	Status    int            `json:"status"`
	Class     string         `json:"class"`
	LatencyMs int64          `json:"latency_ms"`
	Detail    string         `json:"detail"`
	GaveUp    bool           `json:"gave_up"`
}

func (q DeliveryLogQuery) answer(a *Account, who Principal, _ Level, _ int64) (DeliveryLogView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return DeliveryLogView{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DeliveryLogLimitDefault
	}
	if limit < 1 || limit > DeliveryLogLimitMax {
		return DeliveryLogView{}, Errorf(CodeValidation, "limit must be from 1 to %d", DeliveryLogLimitMax)
	}
	v := DeliveryLogView{Deliveries: []DeliveryLineView{}}
	if a.Notify == nil {
		return v, nil
	}
	lines := a.Notify.Deliveries
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if (q.Before != 0 && l.Seq >= q.Before) || (q.ChannelID != "" && l.ChannelID != q.ChannelID) {
			continue
		}
		if len(v.Deliveries) == limit {
			v.HasMore = true
			next := v.Deliveries[limit-1].Seq
			v.NextBefore = &next
			break
		}
		v.Deliveries = append(v.Deliveries, l.view())
	}
	return v, nil
}

func (l DeliveryLine) view() DeliveryLineView {
	return DeliveryLineView{Seq: l.Seq, At: formatTime(l.At), ChannelID: l.ChannelID, EntryID: l.EntryID,
		EventID: l.EventID, Kind: l.Kind, CardID: l.CardID, AmountSat: l.AmountSat, Attempt: l.Attempt, Delivered: l.Delivered,
		Status: l.Status, Class: l.Class, LatencyMs: l.LatencyMs, Detail: l.Detail, GaveUp: l.GaveUp}
}

// deliveryLinesOf are the lines of the log about entry id, oldest first
// (tests and the site's entry page).
func (n *NotifyState) deliveryLinesOf(id string) []DeliveryLine {
	return slices.DeleteFunc(slices.Clone(n.Deliveries), func(l DeliveryLine) bool { return l.EntryID != id })
}
