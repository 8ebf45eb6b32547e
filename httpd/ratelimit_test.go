package httpd

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// clock is an injected time source for the buckets.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }
func limitedReq(path, ip, bearer string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI(path)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}, nil)
	return ctx
}

func mustPass(t *testing.T, e *edge.Limits, ctx *fasthttp.RequestCtx) {
	t.Helper()
	if err := e.Check(ctx); err != nil {
		t.Fatalf("%s refused: %v", ctx.Path(), err)
	}
}

func mustRefuse(t *testing.T, e *edge.Limits, ctx *fasthttp.RequestCtx, retryAfter int) {
	t.Helper()
	err := typedErr(e.Check(ctx))
	if err == nil || err.Code != actors.CodeRateLimited || err.RetryAfter != retryAfter {
		t.Fatalf("%s: %+v, want RATE_LIMITED with Retry-After %d", ctx.Path(), err, retryAfter)
	}
}

func TestRegularBudgetIsThirtyPerMinuteWithBurstTwenty(t *testing.T) {
	t.Parallel()
	c := newClock()
	e := newEdgeLimits(nil, c.now)
	for range 20 {
		mustPass(t, e, limitedReq("/v1/me", "203.0.113.5", ""))
	}
	mustRefuse(t, e, limitedReq("/v1/me", "203.0.113.5", ""), 2)
	// Another client has its own bucket.
	mustPass(t, e, limitedReq("/v1/me", "203.0.113.6", ""))
	// One token comes back every 2 s: 30 a minute.
	c.advance(2 * time.Second)
	mustPass(t, e, limitedReq("/v1/portfolio/cards/validate", "203.0.113.5", ""))
	mustRefuse(t, e, limitedReq("/v1/me", "203.0.113.5", ""), 2)
	c.advance(time.Minute)
	for range 20 {
		mustPass(t, e, limitedReq("/v1/me", "203.0.113.5", ""))
	}
}

func TestSheetRoutesHaveTheirOwnBudget(t *testing.T) {
	t.Parallel()
	c := newClock()
	e := newEdgeLimits(nil, c.now)
	sheet := "/v1/bookmark-spaces/abc/sheet"
	for range 20 {
		mustPass(t, e, limitedReq(sheet, "198.51.100.1", ""))
	}
	mustRefuse(t, e, limitedReq(sheet, "198.51.100.1", ""), 3)
	// The regular budget is untouched.
	for range 20 {
		mustPass(t, e, limitedReq("/v1/me", "198.51.100.1", ""))
	}
}

func TestPublicDocumentsAreNotLimited(t *testing.T) {
	t.Parallel()
	c := newClock()
	e := newEdgeLimits(nil, c.now)
	for range 100 {
		mustPass(t, e, limitedReq("/v1/docs", "203.0.113.9", ""))
		mustPass(t, e, limitedReq("/v1/docs/sheets", "203.0.113.9", ""))
		mustPass(t, e, limitedReq("/v1/openapi.json", "203.0.113.9", ""))
		mustPass(t, e, limitedReq("/owner/v1/keys", "203.0.113.9", ""))
	}
}

func TestRateLimitedAnswerHasRetryAfterAndDocs(t *testing.T) {
	t.Parallel()
	var ctx fasthttp.RequestCtx
	writeError(&ctx, edge.RateLimited(1500*time.Millisecond))
	if ctx.Response.StatusCode() != 429 || string(ctx.Response.Header.Peek("Retry-After")) != "2" {
		t.Fatalf("status %d Retry-After %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Retry-After"))
	}
	if body := string(ctx.Response.Body()); !strings.Contains(body, `"code":"RATE_LIMITED"`) || !strings.Contains(body, "/v1/docs") {
		t.Fatalf("body %s does not link the docs", body)
	}
}
