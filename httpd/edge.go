package httpd

import (
	"bytes"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/edge"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// The edge's hardening lives in package edge. This file wires it to the
// Server: the rules of each listener, the error writer, the client a
// forwarded request's node named, and which request spends which of the
// edge's budgets. (An MCP tool call is checked as its MCP request's
// client by the tool-call chain itself, mcp.go.)

// NewHTTPServer returns the public listener's server: request bodies up
// to bodyBytesMax are read before the handler runs. Every answer to a
// request made over HTTPS, the edge's own included, carries
// Strict-Transport-Security (edge/tls.go).
func (s *Server) NewHTTPServer(name string, handler fasthttp.RequestHandler) *edge.Server {
	l := s.listener(name, false)
	l.HSTS = true
	e := s.newEdge()
	// Clients reach this listener, and its chain drops the node headers
	// (PublicHandler): no request on it was forwarded, so its edge need
	// not ask (forward.Scheme) for every answer's HSTS.
	e.Clients.Forwarded = nil
	return e.NewServer(l, handler)
}

// NewAdminHTTPServer returns the admin listener's server. Its bodies are
// streamed: the handler sees the headers first, so the operator token is
// checked before a byte of a backup upload is read, and a restore writes
// the upload to disk instead of holding it in memory (admin/restore.go).
func (s *Server) NewAdminHTTPServer(name string, handler fasthttp.RequestHandler) *edge.Server {
	return s.newHTTPServer(name, handler, true)
}

func (s *Server) newHTTPServer(name string, handler fasthttp.RequestHandler, adminListener bool) *edge.Server {
	if adminListener {
		handler = admin.ReadBody(writeError, handler)
	}
	return s.newEdge().NewServer(s.listener(name, adminListener), handler)
}

// listener returns the edge rules of the public listener, or of the admin
// listener when adminListener is set.
func (s *Server) listener(name string, adminListener bool) edge.Listener {
	if adminListener {
		return edge.Listener{Name: name, BodyBytesMax: admin.BodyBytesMax, StreamBodies: true, ConnsPerClient: s.connsPerClient, Request: admin.Request}
	}
	return edge.Listener{Name: name, BodyBytesMax: bodyBytesMax, ConnsPerClient: s.connsPerClient, Request: publicRequest}
}

// publicRequest gives a History CSV download its long write timeout.
func publicRequest(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if isHistoryCSV(h.Method(), h.RequestURI()) {
		return fasthttp.RequestConfig{WriteTimeout: historyCSVWriteTimeout}
	}
	return fasthttp.RequestConfig{}
}

// newEdge returns the edge of s's listeners.
func (s *Server) newEdge() *edge.Edge {
	return &edge.Edge{Log: s.log, WriteError: writeError, Clients: clients(s.trustedProxies)}
}

// clients names requests' clients behind the trusted proxies; a request
// another node forwarded names its own (package forward's Receive and
// Scheme).
func clients(trusted []*net.IPNet) edge.Clients {
	return edge.Clients{Trusted: trusted, Forwarded: forward.Scheme}
}

// clientIP is the client of ctx behind the trusted proxies (edge.Clients).
func clientIP(ctx *fasthttp.RequestCtx, trusted []*net.IPNet) string {
	return clients(trusted).IP(ctx)
}

// requestIsHTTPS reports whether the client reached us over HTTPS
// (edge.Clients).
func (s *Server) requestIsHTTPS(ctx *fasthttp.RequestCtx) bool {
	return clients(s.trustedProxies).IsHTTPS(ctx)
}

var (
	agentPathPrefix = []byte(agentPrefix + "/")
	docsPathPrefix  = []byte(agentPrefix + "/docs")
	openAPIPath     = []byte(agentPrefix + "/openapi.json")
	spacesPath      = []byte(agentPrefix + "/bookmark-spaces/")
	sheetPathSuffix = []byte("/sheet")
)

// newEdgeLimits returns the edge's rate limits of the agent API, for
// clients behind trusted.
func newEdgeLimits(trusted []*net.IPNet, now func() time.Time) *edge.Limits {
	e := edge.Edge{WriteError: writeError, Clients: clients(trusted)}
	return e.NewLimits(now, spending)
}

// spending is what a request spends of the edge limits: every /v1 request
// but the public documents spends. (A request another node forwarded is
// not limited here: the chain of the forwarded listener has no limits,
// publicRoutes.) A Sheet route spends the
// Sheet budget. A request with an Authorization spends the authentication
// budgets; an MCP request (/v1/mcp) spends nothing else, as each tool
// call in it is the API request it stands for and spends that request's
// regular or Sheet budget (toolCallSpending).
func spending(ctx *fasthttp.RequestCtx) edge.Spending {
	return spendingOf(ctx, false)
}

// toolCallSpending is what a tool call spends: what the request it stands
// for would, but for the authentication budgets, which its MCP request
// spent.
func toolCallSpending(ctx *fasthttp.RequestCtx) edge.Spending {
	return spendingOf(ctx, true)
}

func spendingOf(ctx *fasthttp.RequestCtx, toolCall bool) edge.Spending {
	path := ctx.Path()
	if !bytes.HasPrefix(path, agentPathPrefix) || bytes.HasPrefix(path, docsPathPrefix) || bytes.Equal(path, openAPIPath) {
		return edge.Spending{}
	}
	spend := edge.Spending{Limited: true, Sheet: bytes.HasPrefix(path, spacesPath) && bytes.HasSuffix(path, sheetPathSuffix)}
	if header := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization); len(header) > 0 && !toolCall {
		spend.Key, spend.AuthOnly = bearerKeyID(header), bytes.Equal(path, mcpPathBytes)
	}
	return spend
}

// bearerKeyID names the key a request authenticates with, for the per-key
// bucket, without looking it up: the key id part of an API key, or the
// whole (bounded) token for anything else.
func bearerKeyID(header []byte) string {
	token, found := edge.BearerToken(header)
	if !found {
		return "malformed"
	}
	if cred, valid := bearerShape(token); valid {
		return cred.AccountID + "." + cred.ID
	}
	return "invalid:" + truncate(token)
}
