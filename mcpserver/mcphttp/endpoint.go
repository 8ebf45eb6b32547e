package mcphttp

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/mcpserver"
)

// Host is what the endpoint needs of the HTTP server it is mounted in.
// Every error it returns is in the API's own terms (an *actors.Error, or
// what WriteError turns into one).
type Host interface {
	// CheckBearer refuses a request whose Authorization header is not an
	// agent key by its shape alone: no look-up, nothing recorded.
	CheckBearer(ctx *fasthttp.RequestCtx) error
	// Authenticate looks the request's agent key up, as /v1 does, and
	// names it. It records no agent activity: each tool call is counted
	// as the API operation it runs.
	Authenticate(ctx *fasthttp.RequestCtx) (Key, error)
	// OwnOrigin reports whether origin (an Origin header) is this
	// server's own origin as ctx reached it.
	OwnOrigin(ctx *fasthttp.RequestCtx, origin []byte) bool
	// ClientIP names the client of ctx, as the per-client limits count it.
	ClientIP(ctx *fasthttp.RequestCtx) string
	// RequireJSON refuses a body not declared as application/json, as
	// the API refuses one.
	RequireJSON(ctx *fasthttp.RequestCtx) error
	// BadRequest is the API's refusal of a malformed request, saying
	// message.
	BadRequest(message string) error
	// Forbidden is the API's refusal of a request it will not serve,
	// saying message. (The codes are the edge's and actors' to mint.)
	Forbidden(message string) error
	// WriteError answers ctx with err in the API's {code, error} shape,
	// its status and headers, and notes its code for the activity count.
	WriteError(ctx *fasthttp.RequestCtx, err error)
	// Run serves ctx, the API request a tool call stands for, through the
	// API's routes in process (below forwarding to the leader: the node
	// that serves the MCP request serves its tool calls), as a request of
	// clientIP, the MCP request's client.
	Run(ctx *fasthttp.RequestCtx, clientIP string)
}

// Key is an agent key as Host.Authenticate verified it.
type Key struct {
	// ID names the key within the server: "account.key".
	ID string
	// Capability is what the key may do; a read key is listed only the
	// tools a read key can use.
	Capability actors.Level
}

// Config wires an Endpoint.
type Config struct {
	// OpenAPI is the Agent API's document; the tools are made from it.
	OpenAPI []byte
	// Prefix is the API's base path ("/v1"), under which a tool call's
	// request path lies.
	Prefix string
	// Version is the server version announced to clients.
	Version string
	// Host is the server the endpoint is mounted in.
	Host Host
	// MaxBodyBytes caps the body the SDK's transport reads.
	MaxBodyBytes int
	// RequestTimeout bounds one request; a verified key is good for the
	// SDK this long.
	RequestTimeout time.Duration
	// Logger is the server's log; the SDK logs to it from warnings up.
	Logger *slog.Logger
}

// Endpoint is the Agent API over MCP's Streamable HTTP transport.
//
// The transport is stateless with JSON answers: every POST carries its
// own key and is answered whole, so no session has to live on one node,
// a follower can hand the request to the leader like any other, and no
// stream has to outlive a leader change. GET (the server's own stream)
// answers 405, as the transport allows (the host mounts POST alone).
//
// A tools/call takes the direct path (direct.go) when it can; every other
// message, and a tools/call the direct path leaves alone, goes to the
// SDK's handler, authenticated first.
type Endpoint struct {
	host   Host
	prefix string
	expiry time.Duration
	tools  *mcpserver.Server
	sdk    fasthttp.RequestHandler // the SDK's transport; wants an authenticated caller
	// SDKOnly turns the direct path off (tests compare the two).
	SDKOnly bool
}

// New builds the endpoint: the tools of cfg.OpenAPI, each call run in
// process by cfg.Host.
func New(cfg Config) (*Endpoint, error) {
	e := &Endpoint{host: cfg.Host, prefix: cfg.Prefix, expiry: cfg.RequestTimeout}
	tools, err := mcpserver.New(mcpserver.Config{
		OpenAPI: cfg.OpenAPI,
		Call: func(_ context.Context, who *auth.TokenInfo, req mcpserver.Request) (mcpserver.Reply, error) {
			return e.callAPI(who, req), nil
		},
		ReadOnly: func(_ context.Context, who *auth.TokenInfo) bool {
			return who == nil || len(who.Scopes) == 0 || who.Scopes[0] != actors.LevelWrite.String()
		},
		Version: cfg.Version,
		Logger:  logger(cfg.Logger),
	})
	if err != nil {
		return nil, err
	}
	e.tools = tools
	e.sdk = sdkHandler(tools, cfg)
	return e, nil
}

// Serve answers one POST of the endpoint.
func (e *Endpoint) Serve(ctx *fasthttp.RequestCtx) {
	if err := e.checkOrigin(ctx); err != nil {
		e.host.WriteError(ctx, err)
		return
	}
	// An unknown caller learns nothing of the server beyond the 401: the
	// credential's shape is checked before anything else, and the key
	// itself before anything reaches the SDK or the API.
	if err := e.host.CheckBearer(ctx); err != nil {
		e.host.WriteError(ctx, err)
		return
	}
	if err := e.checkHead(ctx); err != nil {
		e.host.WriteError(ctx, err)
		return
	}
	if !e.SDKOnly && e.direct(ctx) {
		return
	}
	who, err := e.caller(ctx)
	if err != nil {
		e.host.WriteError(ctx, err)
		return
	}
	ctx.SetUserValue(callerKey{}, who)
	e.sdk(ctx)
}

// callerKey carries the verified caller from Serve, through the net/http
// adaptor (a RequestCtx is the context of the request it makes), to the
// SDK's bearer-token check.
type callerKey struct{}

// originRefused is why a request from a page of another origin is refused.
const originRefused = "Origin is not this server's own origin; a page of another site may not call /v1/mcp (send no Origin from an agent that is not a browser)"

// checkOrigin refuses, before anything else, a request whose Origin is not
// this server's own: MCP's Streamable HTTP transport requires it against
// DNS rebinding, where a page of another site reaches a server through a
// name it rebound to the server's address. The key would stop such a page
// anyway, but the answer must not depend on that. A request without
// Origin comes from an agent that is not a browser and is served.
func (e *Endpoint) checkOrigin(ctx *fasthttp.RequestCtx) error {
	origin := ctx.Request.Header.Peek("Origin")
	if len(origin) == 0 || e.host.OwnOrigin(ctx, origin) {
		return nil
	}
	return e.host.Forbidden(originRefused)
}

// checkHead refuses, in the API's error shape, a request the transport
// would refuse in plain text: a body that is not JSON, or a client that
// does not accept both of the transport's answer types. (Other methods
// than POST get the router's 405.)
func (e *Endpoint) checkHead(ctx *fasthttp.RequestCtx) error {
	if err := e.host.RequireJSON(ctx); err != nil {
		return err
	}
	accept := string(ctx.Request.Header.Peek(fasthttp.HeaderAccept))
	if !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		return e.host.BadRequest("Accept must list both application/json and text/event-stream (MCP Streamable HTTP)")
	}
	return nil
}

// sdkHandler is the SDK's Streamable HTTP transport for tools, behind the
// SDK's bearer-token check, which finds the caller Serve verified.
func sdkHandler(tools *mcpserver.Server, cfg Config) fasthttp.RequestHandler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools.MCP }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK's DNS-rebinding guard refuses a loopback listener a
		// foreign Host, which would refuse the usual reverse proxy on the
		// same machine. Rebinding is stopped by Serve's Origin check
		// (checkOrigin) instead, and every request must carry an API key,
		// which a page rebound to this address does not have.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        int64(cfg.MaxBodyBytes),
		Logger:                     logger(cfg.Logger),
	})
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if who, ok := ctx.Value(callerKey{}).(*auth.TokenInfo); ok {
			return who, nil
		}
		return nil, auth.ErrInvalidToken
	}, nil)(streamable)
	return fasthttpadaptor.NewFastHTTPHandler(verified)
}

// caller authenticates an MCP request with the agent's key, as /v1 does,
// and names its capability for the tool list.
func (e *Endpoint) caller(ctx *fasthttp.RequestCtx) (*auth.TokenInfo, error) {
	key, err := e.host.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return &auth.TokenInfo{
		UserID: key.ID,
		Scopes: []string{key.Capability.String()},
		// The SDK checks this against the wall clock, whatever clock
		// the server was given.
		Expiration: time.Now().Add(e.expiry),
		Extra:      map[string]any{"caller": e.callerOf(ctx)},
	}, nil
}
