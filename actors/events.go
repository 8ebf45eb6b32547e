package actors

import "sort"

// The change feed: a key polls the account's audit events for invalidation
// signals. An event shows only an opaque id, its time and its kind: never a
// card's contents or ID.

// EventsQuery is GET /events. The edge has parsed since into either a
// cursor (AfterSeq: the events after it) or a time (SinceTime: the events
// at or after it); with neither, the feed starts 24 hours before now.
type EventsQuery struct {
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
	var start int
	switch {
	case q.AfterSeq != nil:
		if *q.AfterSeq > a.AuditSeq {
			return EventsPage{}, Errorf(CodeValidation, "since is not a cursor this feed issued")
		}
		start = sort.Search(len(a.Audit), func(i int) bool { return a.Audit[i].Seq > *q.AfterSeq })
	default:
		since := now - eventsDefaultWindow
		if q.SinceTime != nil {
			since = *q.SinceTime
		}
		start = sort.Search(len(a.Audit), func(i int) bool { return a.Audit[i].At >= since })
	}
	page := EventsPage{Events: []EventView{}, NextSeq: a.AuditSeq}
	for i := start; i < len(a.Audit); i++ {
		e := a.Audit[i]
		if !a.eventVisible(e, who, capability) {
			continue
		}
		if len(page.Events) == q.Limit {
			page.HasMore = true
			page.NextSeq = page.Events[len(page.Events)-1].Seq
			break
		}
		page.Events = append(page.Events, EventView{Seq: e.Seq, At: formatTime(e.At), Kind: e.Kind})
	}
	return page, nil
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
