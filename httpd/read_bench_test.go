package httpd

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkAgentRead is one agent read through the whole public handler
// (edge wrappers, routing, authentication, the query on a real account
// registry without raft, the JSON answer), in process: the request path's
// own cost, without loopback or a client sharing the cores. The account
// holds ten Account cards the read key sees.
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
			var ctx fasthttp.RequestCtx
			b.ReportAllocs()
			for b.Loop() {
				ctx.Init(&req, addr, nil)
				o.handler(&ctx)
				if ctx.Response.StatusCode() != fasthttp.StatusOK || len(ctx.Response.Body()) < 100 {
					b.Fatalf("%s: %d %s", path, ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
		})
	}
}
