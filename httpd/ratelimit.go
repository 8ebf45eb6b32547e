package httpd

import (
	"bytes"
	"math"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"github.com/addrwatch/addrwatch/actors"
)

// Edge rate limits of the spec's Limits table, as token buckets:
//
//	regular requests  30/min per client IP, burst 20
//	Sheet routes      20/min per client IP, plus 20/s over all clients;
//	                  they do not spend the regular budget
//	authentication    240/min per client IP and per key
//
// Validation requests are regular requests. The public documents are not
// limited. The per-account Sheet-write budget is separate: it lives in the
// replicated account state (actors/sheet_budget.go).
var (
	regularRate   = bucketRate{every: 2 * time.Second, burst: 20}
	sheetIPRate   = bucketRate{every: 3 * time.Second, burst: 20}
	sheetAllRate  = bucketRate{every: time.Second / 20, burst: 20}
	authRate      = bucketRate{every: time.Minute / actors.AgentRequestsPerKeyPerMinute, burst: actors.AgentRequestsPerKeyPerMinute}
	bucketIdleMax = 2 * time.Minute // an idle bucket is full again and can go
)

// bucketsMax bounds the buckets one set keeps; past it, idle ones are
// dropped first.
const bucketsMax = 100_000

type bucketRate struct {
	every time.Duration
	burst int
}

// bucketSet is a bounded map of token buckets by key.
type bucketSet struct {
	rate bucketRate

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

func newBucketSet(r bucketRate) *bucketSet {
	return &bucketSet{rate: r, buckets: map[string]*bucket{}}
}

// reserve takes one token from key's bucket at now, or reports how long to
// wait for one (taking nothing).
func (s *bucketSet) reserve(key string, now time.Time) (*rate.Reservation, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[key]
	if b == nil {
		if len(s.buckets) >= bucketsMax {
			s.sweep(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Every(s.rate.every), s.rate.burst)}
		s.buckets[key] = b
	}
	b.last = now
	return take(b.lim, now)
}

// sweep drops idle buckets; if every bucket is busy, it drops them all
// rather than grow without bound (the clients just get fresh buckets).
func (s *bucketSet) sweep(now time.Time) {
	for k, b := range s.buckets {
		if now.Sub(b.last) > bucketIdleMax {
			delete(s.buckets, k)
		}
	}
	if len(s.buckets) >= bucketsMax {
		clear(s.buckets)
	}
}

// len returns the number of buckets held.
func (s *bucketSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buckets)
}

// take reserves a token now, or cancels and returns the wait.
func take(lim *rate.Limiter, now time.Time) (*rate.Reservation, time.Duration) {
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d
	}
	return r, 0
}

// edgeLimits applies the buckets to the agent API.
type edgeLimits struct {
	regular, sheetIP, authIP, authKey *bucketSet
	mu                                sync.Mutex
	sheetAll                          *rate.Limiter
	trusted                           []*net.IPNet
	now                               func() time.Time
}

func newEdgeLimits(trusted []*net.IPNet, now func() time.Time) *edgeLimits {
	return &edgeLimits{
		regular:  newBucketSet(regularRate),
		sheetIP:  newBucketSet(sheetIPRate),
		authIP:   newBucketSet(authRate),
		authKey:  newBucketSet(authRate),
		sheetAll: rate.NewLimiter(rate.Every(sheetAllRate.every), sheetAllRate.burst),
		trusted:  trusted,
		now:      now,
	}
}

// wrap limits every /v1 request except the public documents.
func (e *edgeLimits) wrap(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := e.check(ctx); err != nil {
			writeError(ctx, err)
			return
		}
		next(ctx)
	}
}

var (
	agentPathPrefix = []byte(agentPrefix + "/")
	docsPathPrefix  = []byte(agentPrefix + "/docs")
	openAPIPath     = []byte(agentPrefix + "/openapi.json")
	spacesPath      = []byte(agentPrefix + "/bookmark-spaces/")
	sheetPathSuffix = []byte("/sheet")
)

// check takes the request's tokens, all or none.
func (e *edgeLimits) check(ctx *fasthttp.RequestCtx) *actors.Error {
	path := ctx.Path()
	if forwarded(ctx) {
		return nil // limited on the node that received it
	}
	if !bytes.HasPrefix(path, agentPathPrefix) || bytes.HasPrefix(path, docsPathPrefix) || bytes.Equal(path, openAPIPath) {
		return nil
	}
	now := e.now()
	ip := e.clientIP(ctx)
	var taken []*rate.Reservation
	refuse := func(wait time.Duration) *actors.Error {
		for _, r := range taken {
			r.CancelAt(now)
		}
		return rateLimited(wait)
	}
	if header := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization); len(header) > 0 {
		for _, b := range []struct {
			set *bucketSet
			key string
		}{{e.authIP, ip}, {e.authKey, bearerKeyID(header)}} {
			r, wait := b.set.reserve(b.key, now)
			if wait > 0 {
				return refuse(wait)
			}
			taken = append(taken, r)
		}
	}
	if bytes.HasPrefix(path, spacesPath) && bytes.HasSuffix(path, sheetPathSuffix) {
		r, wait := e.sheetIP.reserve(ip, now)
		if wait > 0 {
			return refuse(wait)
		}
		taken = append(taken, r)
		e.mu.Lock()
		_, wait = take(e.sheetAll, now)
		e.mu.Unlock()
		if wait > 0 {
			return refuse(wait)
		}
		return nil
	}
	if _, wait := e.regular.reserve(ip, now); wait > 0 {
		return refuse(wait)
	}
	return nil
}

func rateLimited(wait time.Duration) *actors.Error {
	return &actors.Error{
		Code:       actors.CodeRateLimited,
		Message:    "rate limit exceeded; wait for Retry-After seconds before retrying (limits: /v1/docs#limits, Sheets: /v1/docs/sheets)",
		RetryAfter: int(math.Ceil(wait.Seconds())),
	}
}

// bearerKeyID names the key a request authenticates with, for the per-key
// bucket, without looking it up: the key id part of an API key, or the
// whole (bounded) token for anything else.
func bearerKeyID(header []byte) string {
	token, found := bearerToken(header)
	if !found {
		return "malformed"
	}
	if cred, valid := parseBearer(token, 0); valid {
		return cred.AccountID + "." + cred.ID
	}
	return "invalid:" + truncate(token)
}

// clientIP names the request's client (clientip.go).
func (e *edgeLimits) clientIP(ctx *fasthttp.RequestCtx) string { return clientIP(ctx, e.trusted) }
