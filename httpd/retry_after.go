package httpd

import (
	"math"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// Every 503 says when to come back (issue 28): a client that is told
// "retry later" without a time either hammers the server or gives up.
// Where the cause knows its time (the upstream's Retry-After, the
// breaker's open time, the password-hashing queue), the error carries it;
// every other 503 (no leader, an outcome unknown, a relay that failed, an
// upgrade under way, a page of the site) gets retryAfterDefaultSeconds,
// about how long a raft election or a leader's restart takes. writeError
// adds it to the errors it writes, and sayWhenToRetry to any 503 that
// reaches the listener without one (the site's pages, answers relayed
// from the leader).

// retryAfterDefaultSeconds is the Retry-After of a 503 whose cause does
// not say how long it lasts.
const retryAfterDefaultSeconds = 1

// retryAfterSeconds is a wait as a Retry-After: whole seconds, rounded up,
// at least one.
func retryAfterSeconds(d time.Duration) int {
	return max(retryAfterDefaultSeconds, int(math.Ceil(d.Seconds())))
}

// sayWhenToRetry adds the default Retry-After to a 503 that has none.
func sayWhenToRetry(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		next(ctx)
		if ctx.Response.StatusCode() == fasthttp.StatusServiceUnavailable && len(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter)) == 0 {
			ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(retryAfterDefaultSeconds))
		}
	}
}
