package site

import (
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The site's agent activity: what each key asked of the Agent API, newest
// first (actors/activity.go), for the whole account or one key, about one
// resource, within a time range, a page at a time.

// activityTimeLayout is how the filter's times are typed and shown: a
// datetime-local input's value, read as UTC.
const activityTimeLayout = "2006-01-02T15:04"

// activityData is the activity page's.
type activityData struct {
	Rows    []activityRow
	Keys    []actors.KeyView
	Key     string // the key filtered on
	KeyName string
	// UnknownKey: Key is no key of the account, live or revoked.
	UnknownKey bool
	Resource   string
	Since      string
	Until      string
	// Changes: only the changes the keys made (no reads, no refusals).
	Changes bool
	Older   string // the link to the next page, "" on the last
	Oldest  string
	Problem string
}

// activityRow is one entry as the page shows it: what happened in the
// owner's words (activity_words.go), and the request as the API saw it
// (its method and route, and the outcome) for a technical owner.
type activityRow struct {
	When, Key, Words, Op, Outcome string
	Count                         int
	Refused, Change               bool
}

func (s *Site) activityPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	panel, page := r.layout("activity")
	if r.failed(ctx) {
		return
	}
	args := ctx.QueryArgs()
	d := activityData{Keys: panel.Keys, Key: string(args.Peek("key")), Resource: string(args.Peek("resource")),
		Since: string(args.Peek("since")), Until: string(args.Peek("until")), Changes: string(args.Peek("changes")) == "1"}
	q := actors.ActivityQuery{KeyID: d.Key, ResourceID: d.Resource, Limit: 50, ChangesOnly: d.Changes}
	status := fasthttp.StatusOK
	var problems []string
	var err *actors.Error
	if q.Since, err = activityTime("since", d.Since); err != nil {
		problems = append(problems, err.Message)
	}
	if q.Until, err = activityTime("until", d.Until); err != nil {
		problems = append(problems, err.Message)
	}
	if q.Until != 0 {
		q.Until += int64(time.Minute) - 1 // the whole minute typed
	}
	if before := string(args.Peek("before")); before != "" {
		if q.Before, _ = strconv.ParseUint(before, 10, 64); q.Before == 0 {
			problems = append(problems, "before must be a page's cursor")
		}
	}
	if len(problems) > 0 {
		status = fasthttp.StatusUnprocessableEntity
		page.Problem = "The filter was not applied: " + problems[0]
		q = actors.ActivityQuery{KeyID: d.Key, Limit: 50, ChangesOnly: d.Changes}
	}
	res := read(r, q)
	if r.failed(ctx) {
		return
	}
	keys := map[string]string{}
	for _, k := range panel.Keys {
		keys[k.KeyID] = k.Name
	}
	names := s.activityNamesOf(sess, panel, res.Entries)
	for _, e := range res.Entries {
		d.Rows = append(d.Rows, newActivityRow(e, keys, names))
	}
	if d.Key != "" {
		d.KeyName = keys[d.Key]
		switch {
		case d.KeyName != "":
		case res.KeyKnown:
			d.KeyName = "key " + d.Key + " (revoked)"
		default:
			// An ID that was never a key here, or one revoked so long ago
			// that nothing of it is kept: either way no key of this
			// account, and the page must not call it revoked.
			d.KeyName, d.UnknownKey = "", true
			status = fasthttp.StatusNotFound
			page.Problem = "This account has no key " + d.Key + ", and keeps no activity of one."
		}
	}
	if res.Next != 0 {
		d.Older = activityOlderLink(d, res.Next, status == fasthttp.StatusOK)
	}
	if res.Oldest != 0 {
		d.Oldest = activityWhen(res.Oldest)
	}
	page.Title, page.Data = "Agent activity", d
	switch {
	case d.KeyName != "":
		page.Title = "Activity of " + d.KeyName
	case d.UnknownKey:
		page.Title = "Unknown key " + d.Key
	}
	s.renderPage(ctx, status, "activity", page)
}

// activityOlderLink is the link to the page of entries before next. It
// keeps the filter it continues, when the filter was applied (filtered).
func activityOlderLink(d activityData, next uint64, filtered bool) string {
	older := url.Values{"before": {strconv.FormatUint(next, 10)}}
	if filtered {
		for name, v := range map[string]string{"key": d.Key, "resource": d.Resource, "since": d.Since, "until": d.Until} {
			if v != "" {
				older.Set(name, v)
			}
		}
		if d.Changes {
			older.Set("changes", "1")
		}
	}
	return "/activity?" + older.Encode()
}

// activityTime reads a filter time typed as activityTimeLayout, in UTC.
func activityTime(name, v string) (int64, *actors.Error) {
	if v == "" {
		return 0, nil
	}
	t, err := time.ParseInLocation(activityTimeLayout, v, time.UTC)
	if err != nil {
		return 0, actors.Errorf(actors.CodeValidation, "%s must be a date and time like 2026-11-26T09:30 (UTC)", name)
	}
	return t.UnixNano(), nil
}

func activityWhen(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05 UTC")
}

func newActivityRow(e actors.ActivityEntry, keys map[string]string, names activityNames) activityRow {
	r := activityRow{When: activityWhen(e.Last), Key: keys[e.KeyID], Words: activityWords(e, names), Op: e.Op, Outcome: activityOutcome(e),
		Count: e.Count, Refused: e.Status >= 400, Change: actors.ActivityIsChange(e.Op, e.Status)}
	if first := activityWhen(e.First); first != r.When {
		r.When = first + " to " + time.Unix(0, e.Last).UTC().Format("15:04:05")
	}
	if r.Key == "" {
		r.Key = "key " + e.KeyID + " (revoked)"
	}
	return r
}

// activityNamesOf are the names the owner sees now of the cards and
// Spaces entries name: the panel's Account cards and Spaces, and the
// bookmark cards of the Spaces the entries name a card of (one read a
// Space; a Space the plan hides answers nothing, and its cards are
// said as gone).
func (s *Site) activityNamesOf(sess *siteSession, panel actors.AccessPanelView, entries []actors.ActivityEntry) activityNames {
	n := activityNames{accountCards: map[string]string{}, bookmarkCards: map[string]string{}, spaces: map[string]string{}}
	for _, c := range panel.Cards {
		n.accountCards[c.ID] = c.Name
	}
	for _, sp := range panel.Spaces {
		n.spaces[sp.ID] = sp.Name
	}
	// The Spaces whose cards are named: the entry's Space, or, for a
	// History read (its path names a card, not its Space), every Space.
	var spaces []string
	for _, e := range entries {
		_, account := n.accountCards[e.Resource.ID]
		switch {
		case e.Resource.Kind != actors.ResourceBookmarkCard || account:
		case e.Resource.SpaceID == "":
			for _, sp := range panel.Spaces {
				spaces = append(spaces, sp.ID)
			}
		default:
			spaces = append(spaces, e.Resource.SpaceID)
		}
	}
	read := map[string]bool{}
	for _, space := range spaces {
		if _, known := n.spaces[space]; !known || read[space] {
			continue
		}
		read[space] = true
		if list, err := ask(s, sess, actors.ListBookmarksQuery{SpaceID: space}); err == nil {
			for _, c := range list.Cards {
				n.bookmarkCards[c.ID] = c.Name
			}
		}
	}
	return n
}
