package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The spec's global ceiling on the Sheet routes (20 requests a second over
// all clients, of which one account takes at most half) is the edge's
// (edge/ratelimit.go, which says why). The agent API's Sheet handlers take
// it only once the request's key has authenticated: without a key, or with
// one that does not authenticate, the request is refused with 401 and
// spends nothing of it.

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
	return s.limits.TakeSheetCeiling(cred.AccountID)
}
