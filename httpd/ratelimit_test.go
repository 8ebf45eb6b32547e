package httpd

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
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

func mustPass(t *testing.T, e *edgeLimits, ctx *fasthttp.RequestCtx) {
	t.Helper()
	if err := e.check(ctx); err != nil {
		t.Fatalf("%s refused: %v", ctx.Path(), err)
	}
}

func mustRefuse(t *testing.T, e *edgeLimits, ctx *fasthttp.RequestCtx, retryAfter int) {
	t.Helper()
	err := typedErr(e.check(ctx))
	if err == nil || err.Code != actors.CodeRateLimited || err.RetryAfter != retryAfter {
		t.Fatalf("%s: %+v, want RATE_LIMITED with Retry-After %d", ctx.Path(), err, retryAfter)
	}
}

func TestRegularBudgetIsThirtyPerMinuteWithBurstTwenty(t *testing.T) {
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

// The global Sheet ceiling is 20 a second over all accounts, of which
// one account takes at most its share; a refusal spends nothing.
func TestSheetRoutesHaveAGlobalCeiling(t *testing.T) {
	c := newClock()
	ceiling := newSheetCeiling()
	for i := range 20 {
		if err := ceiling.take("account"+strconv.Itoa(i%2), c.now()); err != nil {
			t.Fatalf("request %d of 20: %v", i+1, err)
		}
	}
	// A fresh account is refused by the global 20/s ceiling...
	if err := typedErr(ceiling.take("fresh", c.now())); err == nil || err.Code != actors.CodeRateLimited || err.RetryAfter != 1 {
		t.Fatalf("past the ceiling: %+v", err)
	}
	// ...and the refusal spent none of its share.
	c.advance(50 * time.Millisecond)
	if err := ceiling.take("fresh", c.now()); err != nil {
		t.Fatalf("once a token is back: %v", err)
	}
	// One account alone stops at its share.
	c.advance(time.Minute)
	for range sheetAccountRate.burst {
		if err := ceiling.take("greedy", c.now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := ceiling.take("greedy", c.now()); err == nil {
		t.Fatal("one account took more than its share")
	}
	if err := ceiling.take("modest", c.now()); err != nil {
		t.Fatalf("another account after one took its share: %v", err)
	}
}

func TestAuthenticationBudgetPerKeyAcrossClients(t *testing.T) {
	c := newClock()
	e := newEdgeLimits(nil, c.now)
	e.regular = newBucketSet(bucketRate{every: time.Nanosecond, burst: 1 << 20}) // isolate the auth buckets
	key := "awk.acct.keyid.secret"
	for i := range 240 {
		mustPass(t, e, limitedReq("/v1/me", "10.0.0."+strconv.Itoa(i%200+1), key))
	}
	mustRefuse(t, e, limitedReq("/v1/me", "10.0.1.1", key), 1)
	// Another key from the same clients is unaffected.
	mustPass(t, e, limitedReq("/v1/me", "10.0.0.1", "awk.acct.other.secret"))
}

func TestPublicDocumentsAreNotLimited(t *testing.T) {
	c := newClock()
	e := newEdgeLimits(nil, c.now)
	for range 100 {
		mustPass(t, e, limitedReq("/v1/docs", "203.0.113.9", ""))
		mustPass(t, e, limitedReq("/v1/docs/sheets", "203.0.113.9", ""))
		mustPass(t, e, limitedReq("/v1/openapi.json", "203.0.113.9", ""))
		mustPass(t, e, limitedReq("/owner/v1/keys", "203.0.113.9", ""))
	}
}

func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	e := newEdgeLimits([]*net.IPNet{proxies}, newClock().now)
	ctx := limitedReq("/v1/me", "10.1.2.3", "")
	ctx.Request.Header.Set("X-Forwarded-For", "198.51.100.7, 10.1.9.9")
	if ip := e.client(ctx); ip != "198.51.100.7" {
		t.Fatalf("behind a trusted proxy the client is %s, want 198.51.100.7", ip)
	}
	ctx = limitedReq("/v1/me", "203.0.113.1", "")
	ctx.Request.Header.Set("X-Forwarded-For", "198.51.100.7")
	if ip := e.client(ctx); ip != "203.0.113.1" {
		t.Fatalf("an untrusted peer chose its own IP: %s", ip)
	}
	ctx = limitedReq("/v1/me", "10.1.2.3", "")
	ctx.Request.Header.Set("X-Forwarded-For", "not-an-ip")
	if ip := e.client(ctx); ip != "10.1.2.3" {
		t.Fatalf("a garbage X-Forwarded-For gave %s", ip)
	}
}

// A full set forgets its least recently used bucket, never a busy one: a
// client that keeps sending keeps its bucket (and its spent tokens) while
// a thousand new clients pass through a set of 100.
func TestBucketSetForgetsTheLeastRecentlyUsed(t *testing.T) {
	c := newClock()
	s := newBucketSetOf(bucketRate{every: time.Hour, burst: 2}, 100)
	busy := func() time.Duration {
		_, wait := s.reserve("busy", c.now())
		return wait
	}
	busy()
	busy() // its burst of 2 is spent
	for i := range 1000 {
		s.reserve("client-"+strconv.Itoa(i), c.now())
		if i%50 == 0 {
			if wait := busy(); wait == 0 {
				t.Fatalf("after %d new clients the busy client got a fresh bucket", i)
			}
		}
	}
	if n := s.len(); n != 100 {
		t.Fatalf("the set holds %d buckets, want its bound of 100", n)
	}
	if _, wait := s.reserve("client-0", c.now()); wait != 0 {
		t.Fatal("a client forgotten long ago did not get a fresh bucket")
	}
}

func TestRateLimitedAnswerHasRetryAfterAndDocs(t *testing.T) {
	var ctx fasthttp.RequestCtx
	writeError(&ctx, rateLimited(1500*time.Millisecond))
	if ctx.Response.StatusCode() != 429 || string(ctx.Response.Header.Peek("Retry-After")) != "2" {
		t.Fatalf("status %d Retry-After %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Retry-After"))
	}
	if body := string(ctx.Response.Body()); !strings.Contains(body, `"code":"RATE_LIMITED"`) || !strings.Contains(body, "/v1/docs") {
		t.Fatalf("body %s does not link the docs", body)
	}
}
