package httpd

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/addrwatch/addrwatch/actors"
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
// A POST is authenticated before anything else, so an unknown caller
// learns nothing of the server beyond the 401.
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
		Logger:  s.log,
	})
	if err != nil {
		// The embedded document and the tool table are checked together
		// by mcpserver's tests; a mismatch is a build defect.
		panic(err)
	}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK's DNS-rebinding guard refuses a loopback listener a
		// foreign Host; here every request must carry an API key, which a
		// page rebound to this address does not have, and the guard would
		// refuse the usual reverse proxy on the same machine.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        int64(bodyBytesMax),
		Logger:                     s.log,
	})
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if who, ok := ctx.Value(mcpCallerKey{}).(*auth.TokenInfo); ok {
			return who, nil
		}
		return nil, auth.ErrInvalidToken
	}, nil)(streamable)
	adapted := fasthttpadaptor.NewFastHTTPHandler(verified)
	serve := func(ctx *fasthttp.RequestCtx) {
		who, err := s.mcpCaller(ctx)
		if err == nil {
			err = mcpHead(ctx)
		}
		if err != nil {
			writeError(ctx, err)
			return
		}
		ctx.SetUserValue(mcpCallerKey{}, who)
		adapted(ctx)
	}
	r.POST(mcpPath, serve)
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
// does, and names its capability for the tool list.
func (s *Server) mcpCaller(ctx *fasthttp.RequestCtx) (*auth.TokenInfo, error) {
	cred, err := s.credential(ctx, audienceAgent)
	if err != nil {
		return nil, err
	}
	res, err := s.store.Query(withActivity(context.Background(), ctx), cred, actors.AuthQuery{}, ReadLeader)
	if err != nil {
		return nil, storeError(err)
	}
	if res.Err != nil {
		return nil, res.Err
	}
	view := res.Body.(actors.AuthView)
	caller := mcpCaller{
		bearer:   string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)),
		remote:   ctx.RemoteAddr(),
		clientIP: clientIP(ctx, s.trustedProxies),
		host:     bytes.Clone(ctx.Host()),
	}
	return &auth.TokenInfo{
		UserID:     cred.AccountID + "." + cred.ID,
		Scopes:     []string{view.Capability.String()},
		Expiration: s.now().Add(requestTimeout),
		Extra:      map[string]any{"caller": caller},
	}, nil
}

// callAPI runs one tool call's request through api in process and returns
// its answer.
func (s *Server) callAPI(api fasthttp.RequestHandler, who *auth.TokenInfo, r mcpserver.Request) (mcpserver.Reply, error) {
	var caller mcpCaller
	if who != nil {
		caller, _ = who.Extra["caller"].(mcpCaller)
	}
	var req fasthttp.Request
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
	remote := caller.remote
	if remote == nil {
		remote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, remote, nil)
	ctx.SetUserValue(mcpToolCallKey{}, caller.clientIP)
	api(&ctx)
	reply := mcpserver.Reply{
		Status:     ctx.Response.StatusCode(),
		Body:       bytes.Clone(ctx.Response.Body()),
		RetryAfter: string(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter)),
	}
	return reply, nil
}

// mcpToolCall reports whether a request is one a tool call made, and for
// which client.
func mcpToolCall(ctx *fasthttp.RequestCtx) (string, bool) {
	ip, ok := ctx.UserValue(mcpToolCallKey{}).(string)
	return ip, ok
}
