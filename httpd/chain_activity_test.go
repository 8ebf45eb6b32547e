package httpd

import (
	"errors"
	"net/url"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// Each feed reads only its own cursors: an /events cursor given to the
// chain activity, or the other way round, is refused (422), not read as
// a position in the other feed's numbering; a feed's own cursor reads
// back as the record it resumes after.
func TestEachFeedReadsOnlyItsOwnCursors(t *testing.T) {
	t.Parallel()
	for _, feed := range []struct{ own, other string }{{activityCursorPrefix, cursorPrefix}, {cursorPrefix, activityCursorPrefix}} {
		c, err := feedCursor(eventsRequest("since="+url.QueryEscape(feedCursorFor(feed.own, 1234))), feed.own)
		if err != nil || c.AfterSeq == nil || *c.AfterSeq != 1234 || c.Limit != eventsLimitDefault {
			t.Errorf("%s: its own cursor reads as %+v, %v", feed.own, c, err)
		}
		_, err = feedCursor(eventsRequest("since="+url.QueryEscape(feedCursorFor(feed.other, 1234))), feed.own)
		if refusal, is := errors.AsType[*actors.Error](err); !is || refusal.Code != actors.CodeValidation {
			t.Errorf("%s: the other feed's cursor gave %v, want VALIDATION", feed.own, err)
		}
	}
}

// FuzzFeedCursor checks that no query panics the feeds' parser, that
// every refusal is a VALIDATION error with a message, that what it
// accepts is within the rules (limit 1 to 100; since a cursor or a time,
// never both), and that a cursor it issues reads back as its number.
func FuzzFeedCursor(f *testing.F) {
	for _, q := range []string{
		"", "limit=1", "limit=100", "limit=0", "limit=101", "limit=-1", "limit=1e2", "limit=%00",
		"since=ca1.0", "since=ca1.zz", "since=ca1.", "since=ca1.-1", "since=ev1.5", "since=CA1.5",
		"since=2026-03-01T00:00:00Z", "since=2026-03-01T00:00:00", "since=9999-12-31T23:59:59.999999999%2B14:00",
		"since=a&since=b", "limit=5&limit=5", "cursor=x", "since=ca1.3w5e11264sgsf&limit=7", "since",
	} {
		f.Add(q, uint64(42))
	}
	f.Fuzz(func(t *testing.T, query string, seq uint64) {
		for _, prefix := range []string{activityCursorPrefix, cursorPrefix} {
			c, err := feedCursor(eventsRequest(query), prefix)
			if err != nil {
				refusal, is := errors.AsType[*actors.Error](err)
				if !is || refusal.Code != actors.CodeValidation || refusal.Message == "" {
					t.Fatalf("%q: refused with %v", query, err)
				}
				continue
			}
			if c.Limit < 1 || c.Limit > eventsLimitMax || (c.AfterSeq != nil && c.SinceTime != nil) {
				t.Fatalf("%q: accepted as %+v", query, c)
			}
		}
		own := feedCursorFor(activityCursorPrefix, seq)
		c, err := feedCursor(eventsRequest("since="+url.QueryEscape(own)), activityCursorPrefix)
		if err != nil || c.AfterSeq == nil || *c.AfterSeq != seq {
			t.Fatalf("the cursor %s reads back as %+v, %v", own, c, err)
		}
	})
}
