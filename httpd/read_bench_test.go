package httpd

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/edge"
)

// BenchmarkAgentRead is one agent read through the whole public handler
// (edge wrappers, routing, authentication, the query on a real account
// registry without raft, the JSON answer), in process: the request path's
// own cost, without loopback or a client sharing the cores. The account
// holds ten Account cards the read key sees. In keepalive, the requests
// come one after another on one connection as the edge's listener accepts
// it (with its memo, conn_memo.go), as an agent's do on a keep-alive
// connection; in nomemo, each is the first of its connection, as far as
// the handlers can tell.
func BenchmarkAgentRead(b *testing.B) {
	o := newOwnerTest(b)
	writer, _ := o.key("write", "writer")
	for i := range 10 {
		// A card an agent creates is granted write, so the read key sees it.
		if status, _, _ := o.send("192.0.2.1", "POST", "/v1/portfolio/cards", writer, map[string]any{"address": someAddress(b, i+1)}); status != fasthttp.StatusCreated {
			b.Fatalf("card %d: %d", i, status)
		}
	}
	key, _ := o.key("read", "bench")
	for _, path := range []string{"/v1/me", "/v1/portfolio/cards"} {
		b.Run(path, func(b *testing.B) {
			var req fasthttp.Request
			req.Header.SetMethod(fasthttp.MethodGet)
			req.SetRequestURI(path)
			req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+key)
			addr := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000}
			check := func(ctx *fasthttp.RequestCtx) {
				if ctx.Response.StatusCode() != fasthttp.StatusOK || len(ctx.Response.Body()) < 100 {
					b.Fatalf("%s: %d %s", path, ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
			b.Run("keepalive", func(b *testing.B) {
				var ctx fasthttp.RequestCtx
				ctx.Init2(edge.WithMemo(benchConn{remote: addr}), benchLogger{}, true)
				b.ReportAllocs()
				for b.Loop() {
					req.CopyTo(&ctx.Request)
					ctx.Response.Reset()
					o.handler(&ctx)
					check(&ctx)
				}
			})
			b.Run("nomemo", func(b *testing.B) {
				var ctx fasthttp.RequestCtx
				b.ReportAllocs()
				for b.Loop() {
					ctx.Init(&req, addr, nil)
					o.handler(&ctx)
					check(&ctx)
				}
			})
		})
	}
}

// benchConn is a connection the benchmark's requests name as theirs; it
// is never read or written.
type benchConn struct {
	net.Conn
	remote net.Addr
}

func (c benchConn) RemoteAddr() net.Addr { return c.remote }
func (c benchConn) LocalAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }

type benchLogger struct{}

func (benchLogger) Printf(string, ...any) {}
