package httpd

import (
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func eventsRequest(query string) *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod(fasthttp.MethodGet)
	ctx.Request.SetRequestURI("/v1/events?" + query)
	return ctx
}

// An RFC 3339 since names a time; the feed holds events at or after it.
// Times beyond what Unix nanoseconds can hold (before 1677-09-21 or after
// 2262-04-11) are valid RFC 3339 all the same: they are clamped to the
// ends of the range, so a far-future since shows no event and a far-past
// one shows every event kept, instead of wrapping around int64.
func TestEventsSinceTimeIsClampedToTheClockRange(t *testing.T) {
	t.Parallel()
	ordinary := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	cases := []struct {
		since string
		want  int64
	}{
		{"2026-03-01T12:00:00Z", ordinary},
		{"2026-03-01T13:00:00+01:00", ordinary},
		{"2262-04-11T23:47:16.854775807Z", math.MaxInt64},
		{"2262-04-12T00:47:16.854775807+01:00", math.MaxInt64},
		{"2262-04-11T23:47:16.854775808Z", math.MaxInt64},
		{"2262-04-11T23:47:16.854775807-00:01", math.MaxInt64},
		{"2262-04-12T00:00:00Z", math.MaxInt64},
		{"2300-01-01T00:00:00Z", math.MaxInt64},
		{"9999-12-31T23:59:59.999999999Z", math.MaxInt64},
		{"1677-09-21T00:12:43.145224192Z", math.MinInt64},
		{"1677-09-21T00:12:43.145224191Z", math.MinInt64},
		{"1677-09-21T00:12:43.145224192+00:01", math.MinInt64},
		{"1000-01-01T00:00:00Z", math.MinInt64},
		{"0001-01-01T00:00:00Z", math.MinInt64},
		{"0000-01-01T00:00:00Z", math.MinInt64},
	}
	for _, tc := range cases {
		q, err := eventsQuery(eventsRequest("since=" + url.QueryEscape(tc.since)))
		if err != nil {
			t.Errorf("since=%s: %v", tc.since, err)
			continue
		}
		if q.SinceTime == nil || *q.SinceTime != tc.want {
			got := "none"
			if q.SinceTime != nil {
				got = time.Unix(0, *q.SinceTime).UTC().Format(time.RFC3339Nano)
			}
			t.Errorf("since=%s reads as %s, want %s", tc.since, got, time.Unix(0, tc.want).UTC().Format(time.RFC3339Nano))
		}
	}
}
