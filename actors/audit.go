package actors

import "time"

// EventKind is one of the spec's four change-event kinds.
type EventKind string

const (
	EventPortfolioChanged EventKind = "portfolio_changed"
	EventBookmarkChanged  EventKind = "bookmark_changed"
	EventCardsChanged     EventKind = "cards_changed"
	EventScopeChanged     EventKind = "scope_changed"
)

// AuditEvent records one change: what kind, to which resource, by whom and
// when. The change feed is built from these; they never hold card contents.
type AuditEvent struct {
	Seq       uint64      `json:"seq"` // from Account.AuditSeq: unique and increasing
	At        int64       `json:"at"`
	Kind      EventKind   `json:"kind"`
	Resource  ResourceRef `json:"resource"`
	Principal Principal   `json:"principal"`
	// Removed marks a change after which the resource no longer exists (a
	// delete, or the source of a move); Granted is the agent grant it had
	// then. The feed cannot ask the state about a resource that is gone.
	Removed bool  `json:"removed,omitempty"`
	Granted Level `json:"granted,omitempty"`
}

// recordEvent appends an audit event and keeps the log within its bounds of
// count and age.
func (a *Account) recordEvent(c *Command, kind EventKind, ref ResourceRef) {
	a.appendEvent(AuditEvent{At: c.At, Kind: kind, Resource: ref, Principal: c.Principal})
}

// recordRemoval records the change that removed a resource which had the
// given agent grant.
func (a *Account) recordRemoval(c *Command, kind EventKind, ref ResourceRef, granted Level) {
	a.appendEvent(AuditEvent{At: c.At, Kind: kind, Resource: ref, Principal: c.Principal, Removed: true, Granted: granted})
}

func (a *Account) appendEvent(e AuditEvent) {
	// Events are numbered by a counter of their own, so they are unique
	// and ordered even when one change records two of them.
	a.AuditSeq++
	e.Seq = a.AuditSeq
	a.Audit = keepRecent(append(a.Audit, e), auditEventsMax, auditAgeMax)
}

func (e AuditEvent) feedSeq() uint64 { return e.Seq }
func (e AuditEvent) feedAt() int64   { return e.At }

// feedItem is a record of a feed an agent polls by cursor: numbered in
// the order it was recorded, with the time of the command that did.
type feedItem interface {
	feedSeq() uint64
	feedAt() int64
}

// keepRecent bounds a feed's records after one was appended: at most
// countMax, none older than ageMax before the newest.
func keepRecent[E feedItem](items []E, countMax int, ageMax time.Duration) []E {
	if len(items) == 0 {
		return items
	}
	drop := max(len(items)-countMax, 0)
	cutoff := items[len(items)-1].feedAt() - int64(ageMax)
	for drop < len(items) && items[drop].feedAt() <= cutoff {
		drop++
	}
	// Reslicing drops the oldest without copying the rest; append moves
	// the live window to a new array when it runs out of room, so each
	// record is copied a constant number of times on average.
	return items[drop:]
}
