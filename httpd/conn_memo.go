package httpd

import (
	"crypto/subtle"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// connMemo is what one connection's requests keep for the next
// (edge.ConnMemo): an agent sends request after request with the same
// key on a keep-alive connection, and fasthttp serves them one at a time,
// so what one request derived from its bytes alone can be taken up by the
// next that sends the same bytes, and the request value can be reused.
// Nothing here skips a check: every query still authenticates its
// credential on the account (a revoked key, a changed plan or grant
// answers the very next request), and each request's own values are its
// own.
type connMemo struct {
	s *Server // the server whose handlers keep it

	// header is the Authorization header of the connection's last
	// request whose bearer parsed, and cred what it parsed into, without
	// the request's time. The same bytes parse into the same credential
	// and hash, so a request with the same header skips the parse, the
	// token's copy and the SHA-256. The header is compared in constant
	// time: requests of several clients may share a connection.
	header []byte
	cred   actors.Credential
	// useDue is when a use of cred may next be due to be recorded
	// (credentialUse.used); 0: not known.
	useDue int64

	// req is the request value of the connection's requests; busy while
	// one uses it. A request value must not be kept past its answer
	// (a streamed answer is written before the next request is read).
	req  request
	busy bool
}

// memoOf is the memo of ctx's connection, or nil when it has none.
func (s *Server) memoOf(ctx *fasthttp.RequestCtx) *connMemo {
	slot := edge.ConnMemo(ctx)
	if slot == nil {
		return nil
	}
	m, _ := (*slot).(*connMemo)
	if m == nil || m.s != s {
		m = &connMemo{s: s}
		*slot = m
	}
	return m
}

// parsed is what the memo knows of header: the credential it parses
// into (without a time), if it is the last one parsed.
func (m *connMemo) parsed(header []byte) (actors.Credential, bool) {
	if m == nil || len(m.header) == 0 || subtle.ConstantTimeCompare(header, m.header) != 1 {
		return actors.Credential{}, false
	}
	return m.cred, true
}

// keep remembers that header parsed into cred (without a time).
func (m *connMemo) keep(header []byte, cred actors.Credential) {
	if m == nil {
		return
	}
	m.header = append(m.header[:0], header...)
	m.cred = cred
	m.useDue = 0
}

// holds reports whether cred is the credential the memo parsed last.
func (m *connMemo) holds(cred actors.Credential) bool {
	return len(m.header) > 0 && cred.Kind == m.cred.Kind && cred.AccountID == m.cred.AccountID && cred.ID == m.cred.ID
}

// routeRequest is the request value of ctx on a route of aud: the
// connection's own when it is free, else a new one. done gives it back.
func (s *Server) routeRequest(ctx *fasthttp.RequestCtx, aud audience) *request {
	m := s.memoOf(ctx)
	if m == nil || m.busy {
		return newRequest(ctx, aud)
	}
	m.busy = true
	m.req = request{ctx: ctx, aud: aud, consistency: consistencyOf(ctx), memo: m}
	return &m.req
}

// outliving is r for work that goes on after the handler returns (a
// streamed answer): a copy of its own, which the connection's next
// request does not take up, and which done leaves as it is.
func (r *request) outliving() *request {
	own := *r
	own.memo = nil
	return &own
}

// done ends r's use: the connection's next request may take it up.
func (r *request) done() {
	if m := r.memo; m != nil && r == &m.req {
		*r = request{}
		m.busy = false
	}
}
