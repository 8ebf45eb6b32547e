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
	Older      string // the link to the next page, "" on the last
	Oldest     string
	Problem    string
}

// activityRow is one entry as the page shows it.
type activityRow struct {
	When, Key, Op, Resource, Outcome string
	Count                            int
	Refused                          bool
}

func (s *Site) activityPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	panel, page := r.layout("activity")
	if r.failed(ctx) {
		return
	}
	args := ctx.QueryArgs()
	d := activityData{Keys: panel.Keys, Key: string(args.Peek("key")), Resource: string(args.Peek("resource")),
		Since: string(args.Peek("since")), Until: string(args.Peek("until"))}
	q := actors.ActivityQuery{KeyID: d.Key, ResourceID: d.Resource, Limit: 50}
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
		q = actors.ActivityQuery{KeyID: d.Key, Limit: 50}
	}
	res := read(r, q)
	if r.failed(ctx) {
		return
	}
	names := map[string]string{}
	for _, k := range panel.Keys {
		names[k.KeyID] = k.Name
	}
	resources := map[string]string{}
	for _, c := range panel.Cards {
		resources[c.ID] = "Account card " + c.Name
	}
	for _, sp := range panel.Spaces {
		resources[sp.ID] = "Space " + sp.Name
	}
	view := res
	for _, e := range view.Entries {
		d.Rows = append(d.Rows, newActivityRow(e, names, resources))
	}
	if d.Key != "" {
		d.KeyName = names[d.Key]
		switch {
		case d.KeyName != "":
		case view.KeyKnown:
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
	if view.Next != 0 {
		older := url.Values{"before": {strconv.FormatUint(view.Next, 10)}}
		for name, v := range map[string]string{"key": d.Key, "resource": d.Resource, "since": d.Since, "until": d.Until} {
			if v != "" && status == fasthttp.StatusOK {
				older.Set(name, v)
			}
		}
		d.Older = "/activity?" + older.Encode()
	}
	if view.Oldest != 0 {
		d.Oldest = activityWhen(view.Oldest)
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

func newActivityRow(e actors.ActivityEntry, names, resources map[string]string) activityRow {
	r := activityRow{When: activityWhen(e.Last), Key: names[e.KeyID], Op: e.Op, Count: e.Count, Refused: e.Status >= 400}
	if first := activityWhen(e.First); first != r.When {
		r.When = first + " to " + time.Unix(0, e.Last).UTC().Format("15:04:05")
	}
	if r.Key == "" {
		r.Key = e.KeyID + " (revoked)"
	}
	switch {
	case e.Resource.ID == "":
	case resources[e.Resource.ID] != "":
		r.Resource = resources[e.Resource.ID]
	case e.Resource.Kind == actors.ResourceNote:
		r.Resource = "note on " + e.Resource.ID
	default:
		r.Resource = string(e.Resource.Kind) + " " + e.Resource.ID
	}
	switch {
	case e.Op == actors.ActivityOther, e.Op == actors.ActivityOtherChanges:
		r.Outcome = "several outcomes"
	case e.Code != "":
		r.Outcome = strconv.Itoa(e.Status) + " " + string(e.Code)
	default:
		r.Outcome = strconv.Itoa(e.Status) + " " + fasthttp.StatusMessage(e.Status)
	}
	return r
}
