package httpd

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// GET /owner/v1/activity: the agents' activity (package httpd/activity) for the
// owner's own tools, newest first, with the site's filters.

// activityEntryView is one line as the owner API renders it.
type activityEntryView struct {
	KeyID    string              `json:"key_id"`
	Op       string              `json:"op"`
	Resource *actors.ResourceRef `json:"resource"`
	Status   int                 `json:"status"`
	Code     actors.Code         `json:"code,omitempty"`
	Count    int                 `json:"count"`
	First    string              `json:"first"`
	Last     string              `json:"last"`
}

type activityView struct {
	Entries    []activityEntryView `json:"entries"`
	NextBefore *uint64             `json:"next_before"`
	Oldest     *string             `json:"oldest"`
}

var activityOperations = []operation{
	{id: "listActivity", method: fasthttp.MethodGet, path: "/activity", apis: ownerAPI,
		response: typeOf[activityView](), status: fasthttp.StatusOK, serve: (*Server).listActivity},
}

func (s *Server) listActivity(r *request) error {
	page, err := askPage(s, r, func() (actors.QueryOf[actors.ActivityPage], error) { return activityQuery(r.ctx.QueryArgs()) })
	if err != nil {
		return err
	}
	v := activityView{Entries: make([]activityEntryView, len(page.Entries))}
	for i, e := range page.Entries {
		v.Entries[i] = activityEntryView{KeyID: e.KeyID, Op: e.Op, Status: e.Status, Code: e.Code, Count: e.Count,
			First: rfc3339(e.First), Last: rfc3339(e.Last)}
		if e.Resource.Kind != "" {
			ref := e.Resource
			v.Entries[i].Resource = &ref
		}
	}
	if page.Next != 0 {
		v.NextBefore = &page.Next
	}
	if page.Oldest != 0 {
		oldest := rfc3339(page.Oldest)
		v.Oldest = &oldest
	}
	return answer(r.ctx, fasthttp.StatusOK, v)
}

func rfc3339(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// activityQuery reads the filters; any other parameter is refused, so a
// misspelt filter is never silently ignored.
func activityQuery(args *fasthttp.Args) (actors.ActivityQuery, error) {
	q := actors.ActivityQuery{Limit: 100}
	for k, v := range args.All() {
		value := string(v)
		switch string(k) {
		case "key_id":
			q.KeyID = value
		case "resource_id":
			q.ResourceID = value
		case "since", "until":
			t, perr := time.Parse(time.RFC3339Nano, value)
			if perr != nil {
				return q, actors.Errorf(actors.CodeValidation, "%s must be an RFC 3339 time with a time zone", k)
			}
			if string(k) == "since" {
				q.Since = unixNanoClamped(t)
			} else {
				q.Until = unixNanoClamped(t)
			}
		case "before":
			n, perr := strconv.ParseUint(value, 10, 64)
			if perr != nil || n == 0 {
				return q, actors.Errorf(actors.CodeValidation, "before must be the next_before of a page")
			}
			q.Before = n
		case "limit":
			n, err := queryInt("limit", value, 1, 100)
			if err != nil {
				return q, err
			}
			q.Limit = n
		case "changes_only":
			switch value {
			case "true":
				q.ChangesOnly = true
			case "false":
				q.ChangesOnly = false
			default:
				return q, actors.Errorf(actors.CodeValidation, "changes_only must be true or false")
			}
		default:
			return q, actors.Errorf(actors.CodeValidation, "unknown query parameter %q: use key_id, resource_id, since, until, changes_only, before or limit", truncate(string(k)))
		}
	}
	return q, nil
}
