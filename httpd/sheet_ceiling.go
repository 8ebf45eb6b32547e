package httpd

import (
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"github.com/addrwatch/addrwatch/actors"
)

// The spec's global ceiling on the Sheet routes (20 requests a second over
// all clients) is shared by every account, so it must not be spent by
// anyone who is not one (issue 28: 40 clients sending Sheet GETs without a
// key spent it, and a real key's Sheet requests answered 429, 5 of 5). So
// the agent API's Sheet handlers take it only once the request's key has
// authenticated: without a key, or with one that does not authenticate,
// the request is refused with 401 and spends nothing of it. (The client's
// own Sheet budget, 20 a minute per IP, is still taken at the edge, before
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
	sheetAllRate     = bucketRate{every: time.Second / 20, burst: 20}
	sheetAccountRate = bucketRate{every: time.Second / 10, burst: 10}
)

// sheetCeiling is the global Sheet bucket and the accounts' shares of it.
type sheetCeiling struct {
	accounts *bucketSet
	mu       sync.Mutex
	all      *rate.Limiter
}

func newSheetCeiling() *sheetCeiling {
	return &sheetCeiling{
		accounts: newBucketSet(sheetAccountRate),
		all:      rate.NewLimiter(rate.Every(sheetAllRate.every), sheetAllRate.burst),
	}
}

// take spends one request of account's share and of the ceiling at now,
// both or neither, or says how long to wait.
func (c *sheetCeiling) take(account string, now time.Time) error {
	share, wait := c.accounts.reserve(account, now)
	if wait > 0 {
		return rateLimited(wait)
	}
	c.mu.Lock()
	_, wait = take(c.all, now)
	c.mu.Unlock()
	if wait > 0 {
		share.CancelAt(now)
		return rateLimited(wait)
	}
	return nil
}

// sheetCeilingGate returns a Sheet handler that, on the agent API with
// the limits on, authenticates the key and takes the ceiling before next
// runs. The owner API's Sheet routes are not rate limited (the edge limits
// are the agent API's).
func (s *Server) sheetCeilingGate(aud audience, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if aud != audienceAgent {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		if s.limits == nil {
			next(ctx)
			return
		}
		if err := s.takeSheetCeiling(ctx, aud); err != nil {
			writeError(ctx, err)
			return
		}
		next(ctx)
	}
}

// takeSheetCeiling authenticates the request's key on applied state (a
// 401 spends nothing) and takes its account's share of the ceiling.
func (s *Server) takeSheetCeiling(ctx *fasthttp.RequestCtx, aud audience) error {
	cred, err := s.credential(ctx, aud)
	if err != nil {
		return err
	}
	c, cancel := s.context()
	defer cancel()
	if _, err := ask(c, s.store, cred, actors.AuthQuery{}, ReadLeader); err != nil {
		return err
	}
	return s.limits.sheets.take(cred.AccountID, s.limits.now())
}
