package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// errUnauthorized is the answer to a missing or wrong operator token.
var errUnauthorized = actors.ErrUnauthorized

// Gate checks the operator token on every admin operation (a route and
// method r serves, health probes aside) before anything else happens to
// it, forwarding included: next is r's handler behind whatever the
// server puts in front of it. OPTIONS, 405 and 307 answers need no token.
// checkedByNode says every request the gate sees was forwarded by another
// node over an authenticated node connection, which checked the token
// itself (nodes may have different tokens): the gate of the forwarded
// admin listener, when node connections are not plain TCP, on which any
// process can claim to be a node. It is the listener's, never the
// request's: nothing a request carries stands in for the token.
func (a *API) Gate(r *router.Router, next fasthttp.RequestHandler, checkedByNode bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		if path == "/healthz" || path == "/readyz" || checkedByNode || !strings.HasPrefix(path, Prefix+"/") {
			next(ctx)
			return
		}
		if h, _ := r.Lookup(string(ctx.Method()), path, ctx); h == nil {
			next(ctx)
			return
		}
		if !a.tokenValid(ctx) {
			a.cfg.WriteError(ctx, errUnauthorized)
			return
		}
		next(ctx)
	}
}

// tokenValid compares the request's bearer with the operator token in
// constant time.
func (a *API) tokenValid(ctx *fasthttp.RequestCtx) bool {
	token, found := edge.BearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	given := sha256.Sum256([]byte(token))
	return found && subtle.ConstantTimeCompare(given[:], a.tokenHash[:]) == 1
}

// metricsGate asks for the operator token on /metrics unless the server
// was started to serve it openly. The figures are not secrets, but they
// show who uses the service how much (request counts by route and status,
// account count, write rates): by default only the operator's monitoring
// reads them. Prometheus sends the token with
// `authorization: {credentials_file: ...}` in its scrape config.
func (a *API) metricsGate(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if a.cfg.OpenMetrics {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		if !a.tokenValid(ctx) {
			a.cfg.WriteError(ctx, errUnauthorized)
			return
		}
		next(ctx)
	}
}
