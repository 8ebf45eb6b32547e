package httpd

import (
	"context"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/addrwatch/addrwatch/mcpserver/mcphttp"
)

// mcpPath serves the Agent API to agent hosts over MCP's Streamable HTTP
// transport, with the same Bearer key as /v1 (package mcphttp).
const mcpPath = agentPrefix + "/mcp"

var mcpPathBytes = []byte(mcpPath)

// mcpToolCallKey marks a request a tool call made, for the edge limits.
type mcpToolCallKey struct{}

// registerMCP serves /v1/mcp. Each tool call is run in process by api, the
// public routes below the forwarding step: no loopback HTTP hop, and the
// very same authentication, authorization, validation, limits and
// activity count as the REST request it stands for.
func (s *Server) registerMCP(r routeAdder, api fasthttp.RequestHandler) {
	endpoint, err := mcphttp.New(mcphttp.Config{
		OpenAPI:        agentOpenAPI,
		Prefix:         agentPrefix,
		Version:        "v1",
		Host:           mcpHost{s: s, api: api},
		MaxBodyBytes:   bodyBytesMax,
		RequestTimeout: requestTimeout,
		Logger:         s.log,
	})
	if err != nil {
		// The embedded document and the tool table are checked together
		// by mcpserver's tests; a mismatch is a build defect.
		panic(err)
	}
	s.mcp = endpoint
	r.POST(mcpPath, endpoint.Serve)
}

// mcpHost is this server as the MCP endpoint's host.
type mcpHost struct {
	s   *Server
	api fasthttp.RequestHandler // the public routes below forwarding
}

func (h mcpHost) CheckBearer(ctx *fasthttp.RequestCtx) error {
	_, err := h.s.credential(ctx, audienceAgent)
	return err
}

func (h mcpHost) Authenticate(ctx *fasthttp.RequestCtx) (mcphttp.Key, error) {
	cred, err := h.s.credential(ctx, audienceAgent)
	if err != nil {
		return mcphttp.Key{}, err
	}
	view, err := ask(context.Background(), h.s.store, cred, actors.AuthQuery{}, ReadLeader)
	if err != nil {
		return mcphttp.Key{}, specError(err)
	}
	return mcphttp.Key{ID: cred.AccountID + "." + cred.ID, Capability: view.Capability}, nil
}

func (h mcpHost) OwnOrigin(ctx *fasthttp.RequestCtx, origin []byte) bool {
	return site.OurOrigin(ctx, origin, h.s.requestIsHTTPS(ctx))
}

func (h mcpHost) ClientIP(ctx *fasthttp.RequestCtx) string {
	return clientIP(ctx, h.s.trustedProxies)
}

func (mcpHost) RequireJSON(ctx *fasthttp.RequestCtx) error { return requireJSONContentType(ctx) }

func (mcpHost) BadRequest(message string) error { return actors.Errorf(codeBadRequest, "%s", message) }

func (mcpHost) Forbidden(message string) error {
	return actors.Errorf(actors.CodeForbidden, "%s", message)
}

func (mcpHost) WriteError(ctx *fasthttp.RequestCtx, err error) { writeError(ctx, err) }

// Run marks ctx as a tool call of clientIP's, which the edge limits and
// clientIP read, and serves it.
func (h mcpHost) Run(ctx *fasthttp.RequestCtx, clientIP string) {
	ctx.SetUserValue(mcpToolCallKey{}, clientIP)
	h.api(ctx)
}

// mcpToolCall reports whether a request is one a tool call made, and for
// which client.
func mcpToolCall(ctx *fasthttp.RequestCtx) (string, bool) {
	ip, ok := ctx.UserValue(mcpToolCallKey{}).(string)
	return ip, ok
}
