package edge

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// start is the time the buckets' tests begin at.
var start = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// requestFrom is a request to path from a client at ip, with a bearer
// token unless it is empty.
func requestFrom(path, ip, bearer string) *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.SetRequestURI(path)
	if bearer != "" {
		ctx.Request.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
	}
	ctx.SetRemoteAddr(&net.TCPAddr{IP: net.ParseIP(ip), Port: 40000})
	return ctx
}

// The global Sheet ceiling is 20 a second over all accounts, of which
// one account takes at most its share; a refusal spends nothing.
func TestSheetRoutesHaveAGlobalCeiling(t *testing.T) {
	now := start
	ceiling := newSheetCeiling()
	for i := range 20 {
		if err := ceiling.take("account"+strconv.Itoa(i%2), now); err != nil {
			t.Fatalf("request %d of 20: %v", i+1, err)
		}
	}
	// A fresh account is refused by the global 20/s ceiling...
	if err := asError(ceiling.take("fresh", now)); err == nil || err.Code != actors.CodeRateLimited || err.RetryAfter != 1 {
		t.Fatalf("past the ceiling: %+v", err)
	}
	// ...and the refusal spent none of its share.
	now = now.Add(50 * time.Millisecond)
	if err := ceiling.take("fresh", now); err != nil {
		t.Fatalf("once a token is back: %v", err)
	}
	// One account alone stops at its share.
	now = now.Add(time.Minute)
	for range SheetAccountRate.Burst {
		if err := ceiling.take("greedy", now); err != nil {
			t.Fatal(err)
		}
	}
	if err := ceiling.take("greedy", now); err == nil {
		t.Fatal("one account took more than its share")
	}
	if err := ceiling.take("modest", now); err != nil {
		t.Fatalf("another account after one took its share: %v", err)
	}
}

// spendByHeader spends as an agent API route does: the regular budget,
// and the authentication budgets for a request with a credential (named
// here by its whole header).
func spendByHeader(ctx *fasthttp.RequestCtx) Spending {
	return Spending{Limited: true, Key: string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))}
}

func TestAuthenticationBudgetPerKeyAcrossClients(t *testing.T) {
	e := (&Edge{}).NewLimits(func() time.Time { return start }, spendByHeader)
	e.regular = newBucketSet(Rate{Every: time.Nanosecond, Burst: 1 << 20}) // isolate the auth buckets
	key := "awk.acct.keyid.secret"
	for i := range 240 {
		if err := e.Check(requestFrom("/v1/me", "10.0.0."+strconv.Itoa(i%200+1), key)); err != nil {
			t.Fatalf("request %d of 240 refused: %v", i+1, err)
		}
	}
	if err := asError(e.Check(requestFrom("/v1/me", "10.0.1.1", key))); err == nil || err.Code != actors.CodeRateLimited || err.RetryAfter != 1 {
		t.Fatalf("the key's 241st request: %+v, want RATE_LIMITED with Retry-After 1", err)
	}
	// Another key from the same clients is unaffected.
	if err := e.Check(requestFrom("/v1/me", "10.0.0.1", "awk.acct.other.secret")); err != nil {
		t.Fatalf("another key refused: %v", err)
	}
}

// A full set forgets its least recently used bucket, never a busy one: a
// client that keeps sending keeps its bucket (and its spent tokens) while
// a thousand new clients pass through a set of 100.
func TestBucketSetForgetsTheLeastRecentlyUsed(t *testing.T) {
	now := start
	s := newBucketSetOf(Rate{Every: time.Hour, Burst: 2}, 100)
	busy := func() time.Duration {
		_, wait := s.reserve("busy", now)
		return wait
	}
	busy()
	busy() // its burst of 2 is spent
	for i := range 1000 {
		s.reserve("client-"+strconv.Itoa(i), now)
		if i%50 == 0 {
			if wait := busy(); wait == 0 {
				t.Fatalf("after %d new clients the busy client got a fresh bucket", i)
			}
		}
	}
	if n := s.len(); n != 100 {
		t.Fatalf("the set holds %d buckets, want its bound of 100", n)
	}
	if _, wait := s.reserve("client-0", now); wait != 0 {
		t.Fatal("a client forgotten long ago did not get a fresh bucket")
	}
}
