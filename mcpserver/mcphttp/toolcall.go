package mcphttp

import (
	"bytes"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/mcpserver"
)

// caller is who an MCP request came from, as the edge verified it: the
// key, and the client the per-client limits count the key's tool calls
// against.
type caller struct {
	bearer   string // the whole Authorization header
	remote   net.Addr
	clientIP string
	host     []byte
}

// callerOf is what a tool call of ctx's request needs to be the API
// request it stands for.
func (e *Endpoint) callerOf(ctx *fasthttp.RequestCtx) caller {
	return caller{
		bearer:   string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)),
		remote:   ctx.RemoteAddr(),
		clientIP: e.host.ClientIP(ctx),
		host:     bytes.Clone(ctx.Host()),
	}
}

// callAPI runs one tool call's request through the host in process and
// returns its answer.
func (e *Endpoint) callAPI(who *auth.TokenInfo, r mcpserver.Request) mcpserver.Reply {
	var c caller
	if who != nil {
		c, _ = who.Extra["caller"].(caller)
	}
	remote := c.remote
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
	uri := e.prefix + r.Path
	if len(r.Query) > 0 {
		uri += "?" + r.Query.Encode()
	}
	req.SetRequestURI(uri)
	req.Header.SetHostBytes(c.host)
	if c.bearer != "" {
		req.Header.Set(fasthttp.HeaderAuthorization, c.bearer)
	}
	if r.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	}
	if r.Body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(r.Body)
	}
	ctx.Init2(&toolCallConn{remote: remote}, fasthttpDiscard{}, true)
	e.host.Run(ctx, c.clientIP)
	return mcpserver.Reply{
		Status:     ctx.Response.StatusCode(),
		Body:       bytes.Clone(ctx.Response.Body()),
		RetryAfter: string(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter)),
	}
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
