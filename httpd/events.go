package httpd

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The change feed. Cursors and event ids share one opaque form: an event's
// id is the cursor that resumes right after it.
const (
	cursorPrefix       = "ev1."
	eventsLimitDefault = 100
	eventsLimitMax     = 100
)

func cursorFor(seq uint64) string { return feedCursorFor(cursorPrefix, seq) }

// feedCursorFor is the opaque cursor of a feed whose cursors start with
// prefix: the one that resumes after the record numbered seq.
func feedCursorFor(prefix string, seq uint64) string { return prefix + strconv.FormatUint(seq, 36) }

// eventView is one event as the feed shows it.
type eventView struct {
	ID   string           `json:"id"`
	At   string           `json:"at"`
	Kind actors.EventKind `json:"kind"`
}

// eventsView is the body of GET /events.
type eventsView struct {
	Events    []eventView `json:"events"`
	NextSince string      `json:"next_since"`
	HasMore   bool        `json:"has_more"`
}

// eventsQuery parses since (a cursor, or an RFC 3339 time with a zone for
// the first poll) and limit.
func eventsQuery(ctx *fasthttp.RequestCtx) (actors.EventsQuery, error) {
	c, err := feedCursor(ctx, cursorPrefix)
	return actors.EventsQuery{FeedCursor: c}, err
}

// feedCursor parses the query of a feed paged by the /events rules: since
// (a cursor of this feed, which starts with prefix, or an RFC 3339 time
// with a zone for the first poll) and limit (1 to 100, default 100); any
// other parameter is refused.
func feedCursor(ctx *fasthttp.RequestCtx, prefix string) (actors.FeedCursor, error) {
	q := actors.FeedCursor{Limit: eventsLimitDefault}
	if err := onlyParams(ctx, "since", "limit"); err != nil {
		return q, err
	}
	var err error
	if q.Limit, err = queryIntDefault(ctx, "limit", eventsLimitDefault, 1, eventsLimitMax); err != nil {
		return q, err
	}
	if !ctx.QueryArgs().Has("since") {
		return q, nil
	}
	since := string(ctx.QueryArgs().Peek("since"))
	if rest, isCursor := strings.CutPrefix(since, prefix); isCursor {
		seq, perr := strconv.ParseUint(rest, 36, 64)
		if perr != nil {
			return q, actors.Errorf(actors.CodeValidation, "since is not a cursor this feed issued")
		}
		q.AfterSeq = &seq
		return q, nil
	}
	t, perr := time.Parse(time.RFC3339Nano, since)
	if perr != nil {
		return q, actors.Errorf(actors.CodeValidation, "since must be a next_since cursor or an RFC 3339 time with a time zone")
	}
	at := unixNanoClamped(t)
	q.SinceTime = &at
	return q, nil
}

// Event times are Unix nanoseconds, which end in 1677 and 2262.
var (
	unixNanoFirst = time.Unix(0, math.MinInt64)
	unixNanoLast  = time.Unix(0, math.MaxInt64)
)

// unixNanoClamped is t in Unix nanoseconds, clamped to the ends of their
// range. The spec takes any RFC 3339 time as since, and RFC 3339 runs from
// year 0000 to 9999: a time past the end still means "after every event"
// and one before the start "every event kept", where t.UnixNano would wrap
// around (2300-01-01 became 1715, and the feed showed every event).
func unixNanoClamped(t time.Time) int64 {
	switch {
	case t.Before(unixNanoFirst):
		return math.MinInt64
	case t.After(unixNanoLast):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var eventOperations = []operation{
	{id: "listEvents", method: fasthttp.MethodGet, path: "/events", apis: bothAPIs,
		response: typeOf[eventsView](), status: fasthttp.StatusOK, serve: (*Server).listEvents},
}

func (s *Server) listEvents(r *request) error {
	page, err := askPage(s, r, func() (actors.QueryOf[actors.EventsPage], error) { return eventsQuery(r.ctx) })
	if err != nil {
		return err
	}
	v := eventsView{Events: make([]eventView, len(page.Events)), NextSince: cursorFor(page.NextSeq), HasMore: page.HasMore}
	for i, e := range page.Events {
		v.Events[i] = eventView{ID: cursorFor(e.Seq), At: e.At, Kind: e.Kind}
	}
	return answer(r.ctx, fasthttp.StatusOK, v)
}

// askPage is the read path of the paged feeds (the events feed and the
// owner's activity): it checks the caller's credential for the route's
// audience, builds the query from the request (after the credential's
// shape is checked, before it is looked up) and asks it at the request's
// read consistency within requestTimeout, returning the page.
func askPage[T any](s *Server, r *request, build func() (actors.QueryOf[T], error)) (T, error) {
	var none T
	if err := s.bearer(r); err != nil {
		return none, err
	}
	q, err := build()
	if err != nil {
		return none, err
	}
	c, cancel := readContext(requestTimeout)
	defer cancel()
	return ask(c, s, r, q, r.consistency)
}
