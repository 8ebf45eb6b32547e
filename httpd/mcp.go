package httpd

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/addrwatch/addrwatch/mcpserver"
)

// mcpPath serves the Agent API to agent hosts over MCP's Streamable HTTP
// transport, with the same Bearer key as /v1.
const mcpPath = agentPrefix + "/mcp"

var mcpPathBytes = []byte(mcpPath)

// mcpCaller is who an MCP request came from, as the edge verified it: the
// key, and the client the per-client limits count the key's tool calls
// against.
type mcpCaller struct {
	bearer   string // the whole Authorization header
	remote   net.Addr
	clientIP string
	host     []byte
}

// mcpCallerKey carries the verified caller from the fasthttp handler, through
// the net/http adaptor (a RequestCtx is the context of the request it
// makes), to the SDK's bearer-token check.
type mcpCallerKey struct{}

// mcpToolCallKey marks a request a tool call made, for the edge limits.
type mcpToolCallKey struct{}

// registerMCP serves /v1/mcp. Each tool call is run in process by api, the
// public routes below the forwarding step: no loopback HTTP hop, and the
// very same authentication, authorization, validation, limits and
// activity count as the REST request it stands for.
//
// The transport is stateless with JSON answers: every POST carries its
// own key and is answered whole, so no session has to live on one node,
// a follower can hand the request to the leader like any other, and no
// stream has to outlive a leader change. GET (the server's own stream)
// answers 405, as the transport allows.
//
// A tools/call takes the direct path (mcp_direct.go) when it can; every
// other message, and a tools/call the direct path leaves alone, goes to
// the SDK's handler, authenticated first.
func (s *Server) registerMCP(r routeAdder, api fasthttp.RequestHandler) {
	server, err := mcpserver.New(mcpserver.Config{
		OpenAPI: agentOpenAPI,
		Call: func(ctx context.Context, who *auth.TokenInfo, req mcpserver.Request) (mcpserver.Reply, error) {
			return s.callAPI(api, who, req)
		},
		ReadOnly: func(_ context.Context, who *auth.TokenInfo) bool {
			return who == nil || len(who.Scopes) == 0 || who.Scopes[0] != actors.LevelWrite.String()
		},
		Version: "v1",
		Logger:  mcpLogger(s.log),
	})
	if err != nil {
		// The embedded document and the tool table are checked together
		// by mcpserver's tests; a mismatch is a build defect.
		panic(err)
	}
	s.mcp = &mcpEndpoint{server: s, tools: server, sdk: s.mcpSDKHandler(server)}
	r.POST(mcpPath, s.mcp.serve)
}

// mcpEndpoint is /v1/mcp.
type mcpEndpoint struct {
	server *Server
	tools  *mcpserver.Server
	sdk    fasthttp.RequestHandler // the SDK's transport; wants an authenticated caller
	// sdkOnly turns the direct path off (tests compare the two).
	sdkOnly bool
}

func (e *mcpEndpoint) serve(ctx *fasthttp.RequestCtx) {
	if err := e.server.mcpOrigin(ctx); err != nil {
		writeError(ctx, err)
		return
	}
	// An unknown caller learns nothing of the server beyond the 401: the
	// credential's shape is checked before anything else, and the key
	// itself before anything reaches the SDK or the API.
	if _, err := e.server.credential(ctx, audienceAgent); err != nil {
		writeError(ctx, err)
		return
	}
	if err := mcpHead(ctx); err != nil {
		writeError(ctx, err)
		return
	}
	if !e.sdkOnly && e.direct(ctx) {
		return
	}
	who, err := e.server.mcpCaller(ctx)
	if err != nil {
		writeError(ctx, err)
		return
	}
	ctx.SetUserValue(mcpCallerKey{}, who)
	e.sdk(ctx)
}

// errMCPOrigin refuses a request from a page of another origin.
var errMCPOrigin = actors.Errorf(actors.CodeForbidden, "Origin is not this server's own origin; a page of another site may not call /v1/mcp (send no Origin from an agent that is not a browser)")

// mcpOrigin refuses, before anything else, a request whose Origin is not
// this server's own: MCP's Streamable HTTP transport requires it against
// DNS rebinding, where a page of another site reaches a server through a
// name it rebound to the server's address. The key would stop such a page
// anyway, but the answer must not depend on that. A request without
// Origin comes from an agent that is not a browser and is served.
func (s *Server) mcpOrigin(ctx *fasthttp.RequestCtx) error {
	origin := ctx.Request.Header.Peek("Origin")
	if len(origin) == 0 || site.OurOrigin(ctx, origin, s.requestIsHTTPS(ctx)) {
		return nil
	}
	return errMCPOrigin
}

// mcpSDKHandler is the SDK's Streamable HTTP transport for server, behind
// the SDK's bearer-token check, which finds the caller serve verified.
func (s *Server) mcpSDKHandler(server *mcpserver.Server) fasthttp.RequestHandler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server.MCP }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK's DNS-rebinding guard refuses a loopback listener a
		// foreign Host, which would refuse the usual reverse proxy on the
		// same machine. Rebinding is stopped by serve's Origin check
		// (mcpOrigin) instead, and every request must carry an API key,
		// which a page rebound to this address does not have.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        int64(bodyBytesMax),
		Logger:                     mcpLogger(s.log),
	})
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if who, ok := ctx.Value(mcpCallerKey{}).(*auth.TokenInfo); ok {
			return who, nil
		}
		return nil, auth.ErrInvalidToken
	}, nil)(streamable)
	return fasthttpadaptor.NewFastHTTPHandler(verified)
}

// mcpHead refuses, in the API's error shape, a request the transport
// would refuse in plain text: a body that is not JSON, or a client that
// does not accept both of the transport's answer types. (Other methods
// than POST get the router's 405.)
func mcpHead(ctx *fasthttp.RequestCtx) error {
	if err := requireJSONContentType(ctx); err != nil {
		return err
	}
	accept := string(ctx.Request.Header.Peek(fasthttp.HeaderAccept))
	if !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		return actors.Errorf(codeBadRequest, "Accept must list both application/json and text/event-stream (MCP Streamable HTTP)")
	}
	return nil
}

// mcpCaller authenticates an MCP request with the agent's key, as /v1
// does, and names its capability for the tool list. The check records no
// agent activity: the owner's activity page counts API operations, and
// each tool call is counted as the one it runs.
func (s *Server) mcpCaller(ctx *fasthttp.RequestCtx) (*auth.TokenInfo, error) {
	cred, err := s.credential(ctx, audienceAgent)
	if err != nil {
		return nil, err
	}
	view, err := ask(context.Background(), s.store, cred, actors.AuthQuery{}, ReadLeader)
	if err != nil {
		return nil, specError(err)
	}
	return &auth.TokenInfo{
		UserID: cred.AccountID + "." + cred.ID,
		Scopes: []string{view.Capability.String()},
		// The SDK checks this against the wall clock, whatever clock
		// the server was given.
		Expiration: time.Now().Add(requestTimeout),
		Extra:      map[string]any{"caller": s.callerOf(ctx)},
	}, nil
}

// callerOf is what a tool call of ctx's request needs to be the API
// request it stands for.
func (s *Server) callerOf(ctx *fasthttp.RequestCtx) mcpCaller {
	return mcpCaller{
		bearer:   string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)),
		remote:   ctx.RemoteAddr(),
		clientIP: clientIP(ctx, s.trustedProxies),
		host:     bytes.Clone(ctx.Host()),
	}
}

// callAPI runs one tool call's request through api in process and returns
// its answer.
func (s *Server) callAPI(api fasthttp.RequestHandler, who *auth.TokenInfo, r mcpserver.Request) (mcpserver.Reply, error) {
	var caller mcpCaller
	if who != nil {
		caller, _ = who.Extra["caller"].(mcpCaller)
	}
	remote := caller.remote
	if remote == nil {
		remote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	ctx := toolCallContexts.Get().(*fasthttp.RequestCtx)
	defer toolCallContexts.Put(ctx)
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.ResetUserValues()
	req := &ctx.Request
	req.Header.SetMethod(r.Method)
	uri := agentPrefix + r.Path
	if len(r.Query) > 0 {
		uri += "?" + r.Query.Encode()
	}
	req.SetRequestURI(uri)
	req.Header.SetHostBytes(caller.host)
	if caller.bearer != "" {
		req.Header.Set(fasthttp.HeaderAuthorization, caller.bearer)
	}
	if r.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	}
	if r.Body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(r.Body)
	}
	ctx.Init2(&toolCallConn{remote: remote}, fasthttpDiscard{}, true)
	ctx.SetUserValue(mcpToolCallKey{}, caller.clientIP)
	api(ctx)
	return mcpserver.Reply{
		Status:     ctx.Response.StatusCode(),
		Body:       bytes.Clone(ctx.Response.Body()),
		RetryAfter: string(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter)),
	}, nil
}

// toolCallContexts keeps the request contexts of tool calls for reuse: a
// RequestCtx is several kilobytes, and a tool call is a hot path.
var toolCallContexts = sync.Pool{New: func() any { return new(fasthttp.RequestCtx) }}

// toolCallConn is the connection a tool call's request claims to have
// come on: none, but with the MCP request's client address.
type toolCallConn struct {
	net.Conn
	remote net.Addr
}

func (c *toolCallConn) RemoteAddr() net.Addr { return c.remote }
func (c *toolCallConn) LocalAddr() net.Addr  { return &net.TCPAddr{} }

// fasthttpDiscard is the logger of a tool call's context: the handlers
// log through the server's slog, not the context's logger.
type fasthttpDiscard struct{}

func (fasthttpDiscard) Printf(string, ...any) {}

// mcpToolCall reports whether a request is one a tool call made, and for
// which client.
func mcpToolCall(ctx *fasthttp.RequestCtx) (string, bool) {
	ip, ok := ctx.UserValue(mcpToolCallKey{}).(string)
	return ip, ok
}
