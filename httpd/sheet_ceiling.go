package httpd

import (
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
func (s *Server) sheetCeilingGate(aud audience, next func(*request) error) func(*request) error {
	if aud != audienceAgent {
		return next
	}
	return func(r *request) error {
		if s.limits == nil {
			return next(r)
		}
		if err := s.takeSheetCeiling(r); err != nil {
			return err
		}
		return next(r)
	}
}

// takeSheetCeiling authenticates the request's key on applied state (a
// 401 spends nothing) and takes its account's share of the ceiling. Its
// query is the gate's own, like the edge limits' refusals not a line of
// the key's activity: it runs as a request value of its own, so a request
// the gate refuses is not counted.
func (s *Server) takeSheetCeiling(r *request) error {
	gate := newRequest(r.ctx, r.aud)
	if err := s.bearer(gate); err != nil {
		return err
	}
	c, cancel := s.context()
	defer cancel()
	if _, err := ask(c, s, gate, actors.AuthQuery{}, ReadLeader); err != nil {
		return err
	}
	return s.limits.TakeSheetCeiling(gate.cred.AccountID)
}
