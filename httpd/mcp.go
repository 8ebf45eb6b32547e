package httpd

import (
	"context"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/addrwatch/addrwatch/mcpserver/mcphttp"
)

// mcpPath serves the Agent API to agent hosts over MCP's Streamable HTTP
// transport, with the same Bearer key as /v1 (package mcphttp).
const mcpPath = agentPrefix + "/mcp"

var mcpPathBytes = []byte(mcpPath)

// registerMCP serves /v1/mcp. Each tool call is run in process by api, the
// public routes below the forwarding step and the edge limits (which Run
// checks itself, as the MCP request's client): no loopback HTTP hop, and
// the very same authentication, authorization, validation, limits and
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
	api fasthttp.RequestHandler // the public routes below forwarding and the limits
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
	// The MCP request's own check: a use of the key, not a line of its
	// activity (each tool call is counted as the request it stands for).
	r := &request{ctx: ctx, aud: audienceAgent, cred: cred}
	view, err := ask(context.Background(), h.s, r, actors.AuthQuery{}, ReadLeader)
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

// Run serves ctx, a tool call of an MCP request from clientIP: the edge
// limits, as that client's and spending what a tool call spends
// (toolCallSpending), then the routes. The chain knows it runs a tool
// call; nothing on ctx says so. Without a named client (none was known)
// the call is the client of its own connection.
func (h mcpHost) Run(ctx *fasthttp.RequestCtx, clientIP string) {
	if l := h.s.limits; l != nil {
		client := clients(h.s.trustedProxies).Key(ctx)
		if clientIP != "" {
			client = edge.KeyOf(clientIP)
		}
		if err := l.CheckAs(client, toolCallSpending(ctx)); err != nil {
			writeError(ctx, err)
			return
		}
	}
	h.api(ctx)
}
