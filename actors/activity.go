package actors

import (
	"sort"
	"time"
)

// Agent activity: what each key asked of the Agent API, when, and with
// what outcome, for the owner's activity pages. The audit events hold only
// the changes that were made; activity also holds reads and refusals.
//
// Reads never reach the log, so the edge that serves agent requests (the
// leader) counts them in memory and proposes one RecordActivity per key
// about once a second: the requests of that window with the same
// operation, resource and outcome become one entry with a count, the
// first and the last time. The entries are part of the account state, so
// they are replicated and survive a restart, and they are bounded like
// the audit events: by count and by age, and (activity_shares.go) so that
// no key's requests can push out another key's lines, nor its own changes.

// ActivityEntry is one line of a key's activity.
type ActivityEntry struct {
	Seq   uint64 `json:"seq"` // from Account.ActivitySeq, set at apply: unique and increasing
	KeyID string `json:"key_id"`
	// Op is the request's method and route, as the spec writes it:
	// "PATCH /v1/portfolio/cards/{card_id}".
	Op       string      `json:"op"`
	Resource ResourceRef `json:"resource,omitempty"`
	Status   int         `json:"status"`
	Code     Code        `json:"code,omitempty"` // the error code of a refusal
	Count    int         `json:"count"`
	First    int64       `json:"first"` // Unix nanoseconds at the edge
	Last     int64       `json:"last"`
}

// Bounds of activity: per account, per key, per flush, and per field.
const (
	activityEntriesMax = 2000
	activityAgeMax     = 7 * 24 * time.Hour
	ActivityFlushMax   = 64  // itemised entries of one key in one record
	activityOpBytesMax = 120 // longer than any route of the spec
	activityIDBytesMax = 100
	activityPageMax    = 100
)

// ActivityOther is the Op of the entry that counts a window's requests
// beyond ActivityFlushMax distinct ones: they are counted, not itemised,
// and its status is 0 (they had several). Since RecordKeyActivity, it
// counts reads and refusals only, and ActivityOtherChanges the changes,
// so that a flood of distinct reads cannot hide a change in a line that
// is evicted first.
const (
	ActivityOther        = "other requests"
	ActivityOtherChanges = "other changes"
)

// ActivityUnknown is the Op of the one entry of a window that counts a
// key's refusals of unknown resources (404 NOT_FOUND, whatever the
// route): probing made-up IDs is one line a second, not one per ID.
const ActivityUnknown = "unknown resources"

// RecordActivity appends the acting key's activity of one window and
// keeps the account's newest 2,000 lines, whoever's (feature version 2).
// A cluster records with RecordKeyActivity once every voter supports it;
// this kind stays for the logs and the clusters that hold it.
type RecordActivity struct {
	Entries []ActivityEntry `json:"entries"`
}

func (*RecordActivity) Kind() Kind { return KindRecordActivity }

func (p *RecordActivity) apply(a *Account, c *Command, _ Level) Result {
	if err := checkActivity(c, p.Entries, ActivityFlushMax+1, false); err != nil {
		return fail(err)
	}
	a.appendActivity(p.Entries)
	// Entries arrive in commit order, not request order; age is judged by
	// the command's time so that every replica drops the same ones.
	drop := max(len(a.Activity)-activityEntriesMax, 0)
	cutoff := c.At - int64(activityAgeMax)
	for drop < len(a.Activity) && a.Activity[drop].Last <= cutoff {
		drop++
	}
	if drop > 0 {
		a.Activity = a.Activity[drop:]
	}
	return noContent()
}

// RecordKeyActivity appends the acting key's activity of one window, and
// keeps every key within its share of the account's lines, changes
// longest (activity_shares.go; feature version 3).
type RecordKeyActivity struct {
	Entries []ActivityEntry `json:"entries"`
}

func (*RecordKeyActivity) Kind() Kind { return KindRecordKeyActivity }

func (p *RecordKeyActivity) apply(a *Account, c *Command, _ Level) Result {
	// Two overflow lines: other requests and other changes.
	if err := checkActivity(c, p.Entries, ActivityFlushMax+2, true); err != nil {
		return fail(err)
	}
	a.appendActivity(p.Entries)
	a.keepActivityShares(c.At)
	return noContent()
}

// checkActivity refuses a record the edge could not have made: not a
// key's, empty or longer than entriesMax, or with an entry that is not
// the acting key's or not well formed. changesLine allows the
// ActivityOtherChanges line.
func checkActivity(c *Command, entries []ActivityEntry, entriesMax int, changesLine bool) *Error {
	if c.Principal.Kind != PrincipalAgent {
		return Errorf(CodeForbidden, "activity is recorded for a key")
	}
	if len(entries) == 0 || len(entries) > entriesMax {
		return Errorf(CodeValidation, "a record holds 1 to %d entries", entriesMax)
	}
	for _, e := range entries {
		if err := e.check(c.Principal.KeyID, changesLine); err != nil {
			return err
		}
	}
	return nil
}

// appendActivity numbers entries and appends them.
func (a *Account) appendActivity(entries []ActivityEntry) {
	for _, e := range entries {
		a.ActivitySeq++
		e.Seq = a.ActivitySeq
		a.Activity = append(a.Activity, e)
	}
}

// check refuses an entry the edge could not have made.
func (e ActivityEntry) check(keyID string, changesLine bool) *Error {
	overflow := e.Op == ActivityOther || changesLine && e.Op == ActivityOtherChanges
	switch {
	case e.KeyID != keyID:
		return Errorf(CodeForbidden, "an entry names another key")
	case e.Op == "" || len(e.Op) > activityOpBytesMax || !isPrintable(e.Op):
		return Errorf(CodeValidation, "op must be 1 to %d printable bytes", activityOpBytesMax)
	case len(e.Resource.ID) > activityIDBytesMax || len(e.Resource.SpaceID) > activityIDBytesMax || len(e.Resource.Kind) > activityIDBytesMax:
		return Errorf(CodeValidation, "resource ids must be at most %d bytes", activityIDBytesMax)
	case (e.Status < 100 || e.Status > 599) && !(overflow && e.Status == 0) || len(e.Code) > activityIDBytesMax:
		return Errorf(CodeValidation, "status must be an HTTP status (or 0 for %q)", ActivityOther)
	case e.Count < 1 || e.First <= 0 || e.Last < e.First || e.Seq != 0:
		return Errorf(CodeValidation, "count must be positive and first no later than last")
	}
	return nil
}

// ActivityQuery reads activity, newest first, for the owner: all keys' or
// one key's, optionally about one resource and within a time range, a
// page at a time (Before is the Seq the previous page ended at).
type ActivityQuery struct {
	KeyID      string
	ResourceID string // a card, Space or transaction ID
	Since      int64  // Unix nanoseconds; zero: no bound
	Until      int64
	Before     uint64 // zero: the newest
	Limit      int
	// ChangesOnly keeps the changes the keys made (ActivityIsChange):
	// no reads, no refusals.
	ChangesOnly bool
}

// ActivityPage answers an ActivityQuery. Next is the Before of the next
// page, zero when there is none.
type ActivityPage struct {
	Entries []ActivityEntry `json:"entries"`
	Next    uint64          `json:"next,omitempty"`
	// Oldest is the time of the oldest entry kept: older activity has left
	// the bounded record.
	Oldest int64 `json:"oldest,omitempty"`
	// KeyKnown, on a query of one key, says whether the account knows the
	// key: it holds it, or a kept line of activity or an audit event names
	// it (a revoked key leaves no other trace). The site tells an ID that
	// is no key of the account from a revoked key by it.
	KeyKnown bool `json:"-"`
}

func (q ActivityQuery) answer(a *Account, who Principal, _ Level, _ int64) (ActivityPage, *Error) {
	if who.isAgent() {
		return ActivityPage{}, Errorf(CodeForbidden, "activity is the owner's to read")
	}
	limit := q.Limit
	if limit < 1 || limit > activityPageMax {
		limit = activityPageMax
	}
	end := len(a.Activity)
	if q.Before != 0 {
		end = sort.Search(len(a.Activity), func(i int) bool { return a.Activity[i].Seq >= q.Before })
	}
	page := ActivityPage{Entries: []ActivityEntry{}}
	if len(a.Activity) > 0 {
		page.Oldest = a.Activity[0].First
	}
	if q.KeyID != "" {
		page.KeyKnown = a.knowsKey(q.KeyID)
	}
	for i := end - 1; i >= 0; i-- {
		e := a.Activity[i]
		if !q.matches(e) {
			continue
		}
		if len(page.Entries) == limit {
			page.Next = page.Entries[limit-1].Seq
			break
		}
		page.Entries = append(page.Entries, e)
	}
	return page, nil
}

// knowsKey reports whether id is a key of the account, live or revoked
// with a trace kept.
func (a *Account) knowsKey(id string) bool {
	if a.key(id) != nil {
		return true
	}
	for _, e := range a.Activity {
		if e.KeyID == id {
			return true
		}
	}
	for _, e := range a.Audit {
		if e.Principal.KeyID == id {
			return true
		}
	}
	return false
}

func (q ActivityQuery) matches(e ActivityEntry) bool {
	switch {
	case q.KeyID != "" && e.KeyID != q.KeyID:
		return false
	case q.ResourceID != "" && e.Resource.ID != q.ResourceID && e.Resource.SpaceID != q.ResourceID:
		return false
	case q.Since != 0 && e.Last < q.Since:
		return false
	case q.Until != 0 && e.First > q.Until:
		return false
	case q.ChangesOnly && !ActivityIsChange(e.Op, e.Status):
		return false
	}
	return true
}
