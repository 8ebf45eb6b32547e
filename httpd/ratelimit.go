package httpd

import (
	"bytes"
	"math"
	"net"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// Edge rate limits of the spec's Limits table, as token buckets:
//
//	regular requests  30/min per client IP, burst 20
//	Sheet routes      20/min per client IP, plus 20/s over all clients;
//	                  they do not spend the regular budget
//	authentication    240/min per client IP and per key
//
// A client IP is an IPv4 address or an IPv6 /64 (clientKeyOf).
//
// Validation requests are regular requests. The public documents are not
// limited. The per-account Sheet-write budget is separate: it lives in the
// replicated account state (actors/sheet_budget.go). The Sheet routes'
// global ceiling is not taken here, before the key is known, but by the
// Sheet handlers once it has authenticated (sheet_ceiling.go).
var (
	regularRate = bucketRate{every: 2 * time.Second, burst: 20}
	sheetIPRate = bucketRate{every: 3 * time.Second, burst: 20}
	authRate    = bucketRate{every: time.Minute / actors.AgentRequestsPerKeyPerMinute, burst: actors.AgentRequestsPerKeyPerMinute}
)

// bucketsMax bounds the buckets one set keeps; past it, the least
// recently used goes. A bucket unused for a while is full again, so
// forgetting it costs its client nothing; only a flood of more than this
// many clients at once can hand one of them a fresh bucket early.
const bucketsMax = 100_000

type bucketRate struct {
	every time.Duration
	burst int
}

// bucketSet is a bounded set of token buckets by key: a least-recently-used
// cache (hashicorp/golang-lru), so a new client costs the same whatever the
// set holds, where a map swept when full cost a scan of every bucket under
// one lock.
type bucketSet struct {
	rate    bucketRate
	buckets *lru.Cache[string, *rate.Limiter]
}

func newBucketSet(r bucketRate) *bucketSet { return newBucketSetOf(r, bucketsMax) }

func newBucketSetOf(r bucketRate, size int) *bucketSet {
	buckets, err := lru.New[string, *rate.Limiter](size)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &bucketSet{rate: r, buckets: buckets}
}

// reserve takes one token from key's bucket at now, or reports how long to
// wait for one (taking nothing).
func (s *bucketSet) reserve(key string, now time.Time) (*rate.Reservation, time.Duration) {
	lim, found := s.buckets.Get(key)
	if !found {
		lim = rate.NewLimiter(rate.Every(s.rate.every), s.rate.burst)
		// Two first requests of one client at once share one bucket.
		if earlier, had, _ := s.buckets.PeekOrAdd(key, lim); had {
			lim = earlier
		}
	}
	return take(lim, now)
}

// len returns the number of buckets held.
func (s *bucketSet) len() int { return s.buckets.Len() }

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
	sheets                            *sheetCeiling
	trusted                           []*net.IPNet
	now                               func() time.Time
}

func newEdgeLimits(trusted []*net.IPNet, now func() time.Time) *edgeLimits {
	return &edgeLimits{
		regular: newBucketSet(regularRate),
		sheetIP: newBucketSet(sheetIPRate),
		authIP:  newBucketSet(authRate),
		authKey: newBucketSet(authRate),
		sheets:  newSheetCeiling(),
		trusted: trusted,
		now:     now,
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
func (e *edgeLimits) check(ctx *fasthttp.RequestCtx) error {
	path := ctx.Path()
	if forward.Forwarded(ctx) {
		return nil // limited on the node that received it
	}
	if !bytes.HasPrefix(path, agentPathPrefix) || bytes.HasPrefix(path, docsPathPrefix) || bytes.Equal(path, openAPIPath) {
		return nil
	}
	now := e.now()
	ip := e.client(ctx)
	var taken []*rate.Reservation
	refuse := func(wait time.Duration) error {
		for _, r := range taken {
			r.CancelAt(now)
		}
		return rateLimited(wait)
	}
	// An MCP request (/v1/mcp) spends the authentication budget, as it
	// authenticates; each tool call in it is the API request it stands
	// for and spends that request's regular or Sheet budget, but not the
	// authentication budget a second time.
	_, toolCall := mcpToolCall(ctx)
	mcpRequest := bytes.Equal(path, mcpPathBytes)
	if header := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization); len(header) > 0 && !toolCall {
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
		if mcpRequest {
			return nil
		}
	}
	if bytes.HasPrefix(path, spacesPath) && bytes.HasSuffix(path, sheetPathSuffix) {
		if _, wait := e.sheetIP.reserve(ip, now); wait > 0 {
			return refuse(wait)
		}
		return nil
	}
	if _, wait := e.regular.reserve(ip, now); wait > 0 {
		return refuse(wait)
	}
	return nil
}

func rateLimited(wait time.Duration) error {
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

// client is the key of the request's client: its IPv4 address or its
// IPv6 /64 (clientip.go).
func (e *edgeLimits) client(ctx *fasthttp.RequestCtx) string { return clientKeyOf(ctx, e.trusted) }
