package edge

import (
	"math"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
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
// A client IP is an IPv4 address or an IPv6 /64 (Clients.Key).
//
// Which request spends which budget is the routes' to say (Spending).
// Validation requests are regular requests. The public documents are not
// limited. The per-account Sheet-write budget is separate: it lives in the
// replicated account state (actors/sheet_budget.go). The Sheet routes'
// global ceiling is not taken by Check, before the key is known, but by
// the Sheet handlers once it has authenticated (TakeSheetCeiling).
var (
	// RegularRate is a client's budget of regular requests.
	RegularRate = Rate{Every: 2 * time.Second, Burst: 20}
	// SheetIPRate is a client's budget of Sheet requests.
	SheetIPRate = Rate{Every: 3 * time.Second, Burst: 20}
	authRate    = Rate{Every: time.Minute / actors.AgentRequestsPerKeyPerMinute, Burst: actors.AgentRequestsPerKeyPerMinute}
)

// bucketsMax bounds the buckets one set keeps; past it, the least
// recently used goes. A bucket unused for a while is full again, so
// forgetting it costs its client nothing; only a flood of more than this
// many clients at once can hand one of them a fresh bucket early.
const bucketsMax = 100_000

// Rate is a token bucket's refill and size: one token comes back Every,
// up to Burst tokens.
type Rate struct {
	Every time.Duration
	Burst int
}

// bucketSet is a bounded set of token buckets by key: a least-recently-used
// cache (hashicorp/golang-lru), so a new client costs the same whatever the
// set holds, where a map swept when full cost a scan of every bucket under
// one lock.
type bucketSet struct {
	rate    Rate
	buckets *lru.Cache[string, *rate.Limiter]
}

func newBucketSet(r Rate) *bucketSet { return newBucketSetOf(r, bucketsMax) }

func newBucketSetOf(r Rate, size int) *bucketSet {
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
		lim = rate.NewLimiter(rate.Every(s.rate.Every), s.rate.Burst)
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

// Spending is what one request spends of the limits, as the routes behind
// the edge say.
type Spending struct {
	// Limited: the request spends a budget at all. A public document, a
	// route of another API and a request another node forwarded (its
	// client was limited on the node that received it) spend nothing.
	Limited bool
	// Key names the key the request authenticates with; the request
	// spends the authentication budgets of its client and of that key.
	// Empty: it spends neither (no credential, or a tool call whose MCP
	// request spent them).
	Key string
	// AuthOnly: once it has spent the authentication budgets the request
	// spends nothing more (an MCP request: each of its tool calls spends
	// the budget of the request it stands for).
	AuthOnly bool
	// Sheet: the request spends its client's Sheet budget in place of the
	// regular one.
	Sheet bool
}

// Limits applies the buckets to the requests that spend them.
type Limits struct {
	regular, sheetIP, authIP, authKey *bucketSet
	sheets                            *sheetCeiling
	clients                           Clients
	spend                             func(*fasthttp.RequestCtx) Spending
	writeError                        func(*fasthttp.RequestCtx, error)
	now                               func() time.Time
}

// NewLimits returns the spec's limits at the time now gives: spend says
// what each request spends, the edge's Clients who its client is.
func (e *Edge) NewLimits(now func() time.Time, spend func(*fasthttp.RequestCtx) Spending) *Limits {
	return &Limits{
		regular:    newBucketSet(RegularRate),
		sheetIP:    newBucketSet(SheetIPRate),
		authIP:     newBucketSet(authRate),
		authKey:    newBucketSet(authRate),
		sheets:     newSheetCeiling(),
		clients:    e.Clients,
		spend:      spend,
		writeError: e.WriteError,
		now:        now,
	}
}

// Wrap refuses a request over its budgets before next runs.
func (l *Limits) Wrap(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := l.Check(ctx); err != nil {
			l.writeError(ctx, err)
			return
		}
		next(ctx)
	}
}

// Check takes the request's tokens, all or none, or returns the refusal.
func (l *Limits) Check(ctx *fasthttp.RequestCtx) error {
	spend := l.spend(ctx)
	if !spend.Limited {
		return nil
	}
	return l.take(l.clients.Key(ctx), spend)
}

// CheckAs is Check for a request that the caller has already told apart:
// its client's key (Clients.Key, KeyOf) and what it spends. A tool call
// of an MCP request is checked so, as its MCP request's client.
func (l *Limits) CheckAs(client string, spend Spending) error {
	if !spend.Limited {
		return nil
	}
	return l.take(client, spend)
}

// take takes the tokens spend names of the client ip, all or none, or
// returns the refusal.
func (l *Limits) take(ip string, spend Spending) error {
	now := l.now()
	var taken []*rate.Reservation
	refuse := func(wait time.Duration) error {
		for _, r := range taken {
			r.CancelAt(now)
		}
		return RateLimited(wait)
	}
	if spend.Key != "" {
		for _, b := range []struct {
			set *bucketSet
			key string
		}{{l.authIP, ip}, {l.authKey, spend.Key}} {
			r, wait := b.set.reserve(b.key, now)
			if wait > 0 {
				return refuse(wait)
			}
			taken = append(taken, r)
		}
		if spend.AuthOnly {
			return nil
		}
	}
	if spend.Sheet {
		if _, wait := l.sheetIP.reserve(ip, now); wait > 0 {
			return refuse(wait)
		}
		return nil
	}
	if _, wait := l.regular.reserve(ip, now); wait > 0 {
		return refuse(wait)
	}
	return nil
}

// RateLimited is the refusal of a request over a budget: 429, with the
// wait, in whole seconds rounded up, as its Retry-After.
func RateLimited(wait time.Duration) error {
	return &actors.Error{
		Code:       actors.CodeRateLimited,
		Message:    "rate limit exceeded; wait for Retry-After seconds before retrying (limits: /v1/docs#limits, Sheets: /v1/docs/sheets)",
		RetryAfter: int(math.Ceil(wait.Seconds())),
	}
}

// The spec's global ceiling on the Sheet routes (20 requests a second over
// all clients) is shared by every account, so it must not be spent by
// anyone who is not one (issue 28: 40 clients sending Sheet GETs without a
// key spent it, and a real key's Sheet requests answered 429, 5 of 5). So
// the agent API's Sheet handlers take it only once the request's key has
// authenticated: without a key, or with one that does not authenticate,
// the request is refused with 401 and spends nothing of it. (The client's
// own Sheet budget, 20 a minute per IP, is still taken by Check, before
// the key is known: it is that client's to spend.)
//
// A fair share per account: one account takes at most half the ceiling,
// whatever number of clients its keys send from, so the others always
// keep the other half. A legitimate agent meets no new limit: at 20 Sheet
// requests a minute per client, an account needs 30 clients at once to
// reach its share.
//
// The ceiling is taken on the node that serves the request (the leader of
// its account): a request a follower forwards meets it there, once.
var (
	sheetAllRate = Rate{Every: time.Second / 20, Burst: 20}
	// SheetAccountRate is one account's share of the Sheet ceiling.
	SheetAccountRate = Rate{Every: time.Second / 10, Burst: 10}
)

// sheetCeiling is the global Sheet bucket and the accounts' shares of it.
type sheetCeiling struct {
	accounts *bucketSet
	mu       sync.Mutex
	all      *rate.Limiter
}

func newSheetCeiling() *sheetCeiling {
	return &sheetCeiling{
		accounts: newBucketSet(SheetAccountRate),
		all:      rate.NewLimiter(rate.Every(sheetAllRate.Every), sheetAllRate.Burst),
	}
}

// TakeSheetCeiling spends one request of account's share of the Sheet
// routes' global ceiling, and of the ceiling, or refuses it.
func (l *Limits) TakeSheetCeiling(account string) error {
	return l.sheets.take(account, l.now())
}

// take spends one request of account's share and of the ceiling at now,
// both or neither, or says how long to wait.
func (c *sheetCeiling) take(account string, now time.Time) error {
	share, wait := c.accounts.reserve(account, now)
	if wait > 0 {
		return RateLimited(wait)
	}
	c.mu.Lock()
	_, wait = take(c.all, now)
	c.mu.Unlock()
	if wait > 0 {
		share.CancelAt(now)
		return RateLimited(wait)
	}
	return nil
}
