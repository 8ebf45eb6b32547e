package actors

import "sort"

// The change feed: a key polls the account's audit events for invalidation
// signals. An event shows only an opaque id, its time and its kind: never a
// card's contents or ID.

// EventsQuery is GET /events.
type EventsQuery struct{ FeedCursor }

// FeedCursor is where a poll of a feed (GET /events, GET
// /history/activity) starts and how much it takes. The edge has parsed
// since into either a cursor (AfterSeq: the records after it) or a time
// (SinceTime: the records at or after it); with neither, the feed starts
// 24 hours before now.
type FeedCursor struct {
	AfterSeq  *uint64
	SinceTime *int64
	Limit     int
}

// eventsDefaultWindow is how far back a first poll without since looks.
const eventsDefaultWindow = 24 * 60 * 60 * 1e9

// EventView is one event of the feed.
type EventView struct {
	Seq  uint64    `json:"-"` // the edge renders id from it
	At   string    `json:"at"`
	Kind EventKind `json:"kind"`
}

// EventsPage is what EventsQuery returns; the edge renders the cursors.
type EventsPage struct {
	Events []EventView
	// NextSeq is the cursor to poll from next: past every event examined,
	// visible or not, so the cursor may advance across other keys' records.
	NextSeq uint64
	HasMore bool
}

func (q EventsQuery) answer(a *Account, who Principal, capability Level, now int64) (EventsPage, *Error) {
	visible := func(e AuditEvent) bool { return a.eventVisible(e, who, capability) }
	events, next, more, err := feedPage(a.Audit, a.AuditSeq, q.FeedCursor, now, visible, func(e AuditEvent) EventView {
		return EventView{Seq: e.Seq, At: formatTime(e.At), Kind: e.Kind}
	})
	return EventsPage{Events: events, NextSeq: next, HasMore: more}, err
}

// feedPage is one page of a feed's records (oldest first, numbered up to
// last) from the cursor q: the visible ones, at most q.Limit, as view has them,
// and the cursor to poll from next. That cursor is past every record
// examined, visible or not, so it may advance across records the reader
// cannot see; with more waiting, it is the last one shown.
func feedPage[E feedItem, V any](items []E, last uint64, q FeedCursor, now int64, visible func(E) bool, view func(E) V) (page []V, next uint64, more bool, err *Error) {
	var start int
	switch {
	case q.AfterSeq != nil:
		if *q.AfterSeq > last {
			return nil, 0, false, Errorf(CodeValidation, "since is not a cursor this feed issued")
		}
		start = sort.Search(len(items), func(i int) bool { return items[i].feedSeq() > *q.AfterSeq })
	default:
		since := now - eventsDefaultWindow
		if q.SinceTime != nil {
			since = *q.SinceTime
		}
		start = sort.Search(len(items), func(i int) bool { return items[i].feedAt() >= since })
	}
	page, next = []V{}, last
	shown := 0 // the index of the last record shown
	for i := start; i < len(items); i++ {
		if !visible(items[i]) {
			continue
		}
		if len(page) == q.Limit {
			return page, items[shown].feedSeq(), true, nil
		}
		page, shown = append(page, view(items[i])), i
	}
	return page, next, false, nil
}

// eventVisible decides whether a key receives an event:
//   - its own changes, always, even after a grant was removed;
//   - scope changes, always: they tell the key to re-read /me;
//   - a removal (delete, or the source of a move): an agent's always, as a
//     generic signal; the owner's when the resource was granted;
//   - anything else when the key can read the resource now.
func (a *Account) eventVisible(e AuditEvent, who Principal, capability Level) bool {
	switch {
	case !who.isAgent():
		return true
	case e.Principal.Kind == PrincipalAgent && e.Principal.KeyID == who.KeyID:
		return true
	case e.Kind == EventScopeChanged:
		return true
	case e.Removed:
		return e.Principal.Kind == PrincipalAgent || e.Granted >= LevelRead
	}
	return a.canSee(who, capability, e.Resource)
}
