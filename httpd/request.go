package httpd

import (
	"context"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// request is what one API request carries between this package's layers.
// It is passed as an argument, from the route down to the store calls and
// back: nothing of it rides in the context of a store call or in a
// fasthttp user value.
//
// Who fills what:
//   - the route (routes.handle) makes it when the request reaches its
//     handler, or takes up its connection's (conn_memo.go), which it
//     clears once the request is answered: ctx, the audience of the API
//     the route belongs to, the read consistency the client asked for
//     (ConsistencyHeader), and on the owner API the owner-credential
//     attempt the back-off admitted;
//   - the handler parses the bearer credential into cred (s.bearer) before
//     its first query;
//   - ask (s.query) notes what a query proved: an API key that
//     authenticated is named in key, for the key's activity;
//   - the route's error writer (fail) keeps the code it answered with;
//   - a password check (checkOwnerPassword, checkLoginPassword) marks the
//     attempt PasswordChecked.
//
// Once the handler returns, the route counts an agent request whose key
// authenticated in that key's activity, from key and code (activity.go),
// and tells the owner back-off how an owner request was answered: a 401
// whose password was not checked is a wrong bearer secret.
//
// The site's calls (site_backend.go) make their own: the session's
// credential, and passive for a request the page made on its own (the
// live view's polls), whose queries are not a use of the session
// (credential_use.go).
//
// Nothing may keep a route's request value past its answer (a streamed
// answer, written before the connection's next request is read, is the
// longest it may live): its connection's next request takes it up.
type request struct {
	// ctx is the fasthttp request; nil for a site call made through
	// site.Store, which has none.
	ctx *fasthttp.RequestCtx
	// aud is who the route serves: its credential must be of that kind.
	aud audience
	// consistency is how fresh the client asked its reads to be. A read
	// that must be the leader's whatever was asked (an authorization, a
	// password check) says ReadLeader instead.
	consistency ReadConsistency
	// cred is the bearer credential, once parsed (s.bearer).
	cred actors.Credential
	// idempotent: the route honours the Idempotency-Key header (its
	// operation's declaration).
	idempotent bool
	// attempt, on the owner API, is the request's owner-credential attempt
	// (edge.Attempt): nil without an owner bearer. The password checks mark
	// it, so the back-off does not count a wrong password's 401 a second
	// time as a wrong bearer secret.
	attempt *edge.Attempt
	// passive marks a request the page makes on its own: its queries do
	// not count as a use of its credential.
	passive bool
	// key is the API key a query authenticated; zero until one did.
	key activityKeyRef
	// code is the error code the request was answered with, if any.
	code actors.Code
	// memo is the memo of the request's connection, if it has one
	// (conn_memo.go).
	memo *connMemo
}

// newRequest is a request value of its own of ctx on a route of aud (a
// route's is Server.newRequest's).
func newRequest(ctx *fasthttp.RequestCtx, aud audience) *request {
	return &request{ctx: ctx, aud: aud, consistency: consistencyOf(ctx)}
}

// bearer parses r's bearer credential for its audience into r.cred.
func (s *Server) bearer(r *request) error {
	cred, err := s.credential(r.ctx, r.aud)
	r.cred = cred
	return err
}

// fail answers r with err, in the spec's shape (writeError), and keeps its
// code for the activity count.
func (r *request) fail(err error) {
	e := specError(err)
	r.code = e.Code
	writeSpecError(r.ctx, e)
}

// query runs q as r's credential through the store, as fresh as rc. A
// query the credential authenticated (it did not fail UNAUTHORIZED: a
// rule's other refusals, a card not found, still followed an
// authenticated credential) is a use of it unless r is passive
// (credential_use.go), and names r's API key for its activity. Every
// authenticated request makes at least one query (a write's authorize
// included), so no route needs to remember to record.
func (s *Server) query(c context.Context, r *request, q actors.Query, rc ReadConsistency) (actors.Result, error) {
	res, err := s.store.Query(c, r.cred, q, rc)
	if refused, isRefusal := errors.AsType[*actors.Error](err); err != nil && (!isRefusal || refused.Code == actors.CodeUnauthorized) {
		return res, err // not authenticated, or not known to be
	}
	if r.cred.Kind == actors.CredentialAPIKey {
		r.key = activityKeyRef{account: r.cred.AccountID, keyID: r.cred.ID}
	}
	if !r.passive {
		s.used(r)
	}
	return res, err
}

// used notes a use of r's credential (credentialUse.used), unless r's
// connection already knows that none is due before r's time: then the
// use would be a look under credentialUse's lock that finds nothing to do.
func (s *Server) used(r *request) {
	m := r.memo
	if m == nil || !m.holds(r.cred) {
		s.use.used(r.cred)
		return
	}
	if r.cred.Now != 0 && r.cred.Now < m.useDue {
		return
	}
	m.useDue = s.use.used(r.cred)
}

// ask is query with its answer as the type q declares (actors.QueryOf),
// so no handler asserts a result's type.
func ask[T any](c context.Context, s *Server, r *request, q actors.QueryOf[T], rc ReadConsistency) (T, error) {
	return actors.Answer[T](s.query(c, r, q, rc))
}

// routes registers the operations of one API, the agent API's or the
// owner API's (registerOperations): each is given the request value, made
// when the request reaches it, and returns its error, which the route
// writes (fail). Once it returns, an agent request whose key authenticated
// is counted in the key's activity under the route's method and pattern.
type routes struct {
	add routeAdder
	s   *Server
	aud audience
	// owner, on the owner API, is the credential back-off every route is
	// admitted by (edge.OwnerLimits.Admit) and tells how it was answered.
	owner *edge.OwnerLimits
}

// handle registers op at path, the op's path under the API's prefix.
func (rt routes) handle(op operation, path string) {
	h := func(r *request) error { return op.serve(rt.s, r) }
	if op.sheet {
		h = rt.s.sheetCeilingGate(rt.aud, h)
	}
	pattern, count := op.method+" "+path, rt.aud == audienceAgent
	rt.add.Handle(op.method, path, func(ctx *fasthttp.RequestCtx) {
		r := rt.s.routeRequest(ctx, rt.aud)
		defer r.done()
		r.idempotent = op.idempotent
		if rt.owner != nil {
			attempt, err := rt.owner.Admit(ctx)
			if err != nil {
				r.fail(err)
				return
			}
			r.attempt = attempt
		}
		if count {
			defer func() {
				if v := recover(); v != nil {
					// The router answers a panic with INTERNAL (newRouter);
					// the request is counted as answered so.
					r.code = actors.CodeInternal
					countActivity(rt.s.activity, r, pattern, path, fasthttp.StatusInternalServerError)
					panic(v)
				}
			}()
		}
		if err := h(r); err != nil {
			r.fail(err)
		}
		r.attempt.Answered(ctx.Response.StatusCode())
		if count {
			countActivity(rt.s.activity, r, pattern, path, ctx.Response.StatusCode())
		}
	})
}

// pinned is where a route's method pins (onlyMethods) are registered: on
// the owner API behind the credential back-off, as the route itself is.
func (rt routes) pinned() pinnedRoutes { return pinnedRoutes(rt) }

// pinnedRoutes registers handlers without a request value of their own.
type pinnedRoutes routes

func (p pinnedRoutes) Handle(method, path string, h fasthttp.RequestHandler) {
	if p.owner != nil {
		h = p.owner.Guard(h)
	}
	p.add.Handle(method, path, h)
}
