package httpd

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// requestTimeout bounds the whole server side of one request.
const requestTimeout = 15 * time.Second

// audience is who a listener path serves: each accepts only its own
// credentials (an owner secret is 401 on /v1, an API key 401 on /owner/v1).
type audience uint8

const (
	audienceAgent audience = iota + 1
	audienceOwner
)

// credential is the bearer credential of ctx for aud, parsed (its
// connection's memo may know it already: conn_memo.go), not yet checked on
// its account.
func (s *Server) credential(ctx *fasthttp.RequestCtx, aud audience) (actors.Credential, error) {
	header := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	m := s.memoOf(ctx)
	cred, valid := m.parsed(header)
	if !valid {
		token, found := edge.BearerToken(header)
		if !found {
			return actors.Credential{}, errUnauthorized
		}
		if cred, valid = parseBearer(token, 0); !valid {
			return actors.Credential{}, errUnauthorized
		}
		m.keep(header, cred)
	}
	cred.Now = s.requestTime(ctx).UnixNano()
	switch aud {
	case audienceAgent:
		valid = cred.Kind == actors.CredentialAPIKey
	case audienceOwner:
		valid = cred.Kind == actors.CredentialOwnerSecret || cred.Kind == actors.CredentialSession
	}
	if !valid {
		return actors.Credential{}, errUnauthorized
	}
	return cred, nil
}

var errUnauthorized = actors.ErrUnauthorized

// requestTime is the time of ctx's request: the time fasthttp took it up,
// read once for every use (reading the clock is a measurable share of a
// read here), or the server's clock when that is a test's, or for a
// request fasthttp did not take up itself (an MCP tool call, a framed
// forwarded request), whose time is unset.
func (s *Server) requestTime(ctx *fasthttp.RequestCtx) time.Time {
	if t := ctx.Time(); s.realClock && !t.IsZero() {
		return t
	}
	return s.now()
}

func (s *Server) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), requestTimeout)
}

// ConsistencyHeader asks for a linearizable read: the leader confirms with
// a quorum that it still leads before answering. Without it a read is
// answered by the leader from applied state (see cluster/DESIGN.md).
const ConsistencyHeader = "X-Addrwatch-Read-Consistency"

// consistencyOf is the read consistency the request asked for with
// ConsistencyHeader.
func consistencyOf(ctx *fasthttp.RequestCtx) ReadConsistency {
	if string(ctx.Request.Header.Peek(ConsistencyHeader)) == "linearizable" {
		return ReadLinearizable
	}
	return ReadLeader
}

// readContext is the context of a request's reads: bounded by timeout.
func readContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), timeout)
}

// read authenticates and answers a query.
func (s *Server) read(r *request, q actors.Query) error {
	return s.readWith(r, func() (actors.Query, error) { return q, nil })
}

// readWith is read for a query built from the request (after the
// credential's shape is checked, before it is looked up).
func (s *Server) readWith(r *request, build func() (actors.Query, error)) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	q, err := build()
	if err != nil {
		return err
	}
	c := context.Background()
	if r.consistency == ReadLinearizable {
		// Only the quorum check waits on the context; an ordinary read
		// is bounded by the store's own query timeout, so it skips the
		// cost of a timer per request.
		var cancel context.CancelFunc
		c, cancel = readContext(requestTimeout)
		defer cancel()
	}
	// The answer is written out as it is, so the account may answer it
	// already rendered, as it did last time if nothing has applied since
	// (actors.Render).
	res, err := s.query(c, r, actors.Render(q), r.consistency)
	if err != nil {
		return err
	}
	return writeResult(r.ctx, res)
}

// writeSpec describes one write route.
type writeSpec struct {
	// payload decodes the request into a command payload (422 on failure).
	payload func(ctx *fasthttp.RequestCtx, account string) (actors.Payload, error)
	// decorate, when set, adds edge-held values (a new secret) to a success.
	decorate func(res actors.Result) actors.Result
}

// write runs the write path: decode, authenticate, refuse a read-only key
// before anything reaches the log, propose, and render the applied result.
func (s *Server) write(r *request, spec writeSpec) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	payload, err := spec.payload(r.ctx, r.cred.AccountID)
	if err != nil {
		return err
	}
	var idem *actors.IdempotencyRequest
	if r.idempotent {
		if idem, err = idempotencyRequest(r.ctx); err != nil {
			return err
		}
	}
	c, cancel := s.context()
	defer cancel()
	who, err := s.authorize(c, r)
	if err != nil {
		return err
	}
	cmd := &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal, Idempotency: idem, Payload: payload}
	res, err := s.propose(c, cmd)
	if err != nil {
		return err
	}
	if spec.decorate != nil {
		res = spec.decorate(res)
	}
	return writeResult(r.ctx, res)
}

// propose replicates cmd and returns its successful result, or the error
// of the store or of the rule. The error is kept whole: a caller that can
// say the same with older kinds when a voter lacks this one
// (clustererr.ErrFeatureNotAdmitted) may (labels_import.go).
func (s *Server) propose(c context.Context, cmd *actors.Command) (actors.Result, error) {
	return s.store.Propose(c, cmd)
}

// authorize authenticates r's credential on applied state and refuses a
// read-only key, which may never change anything.
func (s *Server) authorize(c context.Context, r *request) (actors.AuthView, error) {
	who, err := ask(c, s, r, actors.AuthQuery{}, ReadLeader)
	if err != nil {
		return actors.AuthView{}, err
	}
	if who.Principal.Kind == actors.PrincipalAgent && who.Capability < actors.LevelWrite {
		return actors.AuthView{}, errReadOnlyKey
	}
	return who, nil
}

// errReadOnlyKey refuses a change asked with a read key.
var errReadOnlyKey = actors.ErrReadOnlyKey

// idempotencyRequest reads the optional Idempotency-Key header.
func idempotencyRequest(ctx *fasthttp.RequestCtx) (*actors.IdempotencyRequest, error) {
	token := string(ctx.Request.Header.Peek("Idempotency-Key"))
	if token == "" {
		return nil, nil
	}
	if err := actors.ValidateIdempotencyToken(token); err != nil {
		return nil, err
	}
	return &actors.IdempotencyRequest{
		Token:        token,
		Method:       string(ctx.Method()),
		Path:         string(ctx.Path()),
		BodyHash:     canonicalBodyHash(ctx.PostBody()),
		PerPrincipal: true,
	}, nil
}

// pathParam returns a path parameter as a string.
func pathParam(ctx *fasthttp.RequestCtx, name string) string {
	v, _ := ctx.UserValue(name).(string)
	return v
}
