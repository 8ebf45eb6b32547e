package httpd

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// Every 401, on the agent and the owner API, names the Bearer scheme in
// WWW-Authenticate (RFC 6750); other errors do not carry it.
func TestUnauthorizedNamesTheBearerScheme(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	send := func(path, bearer string) *fasthttp.RequestCtx {
		var req fasthttp.Request
		req.SetRequestURI(path)
		if bearer != "" {
			req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
		}
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.3"), Port: 1}, nil)
		o.handler(ctx)
		return ctx
	}
	for _, tc := range []struct{ path, bearer string }{
		{"/v1/me", ""},
		{"/v1/me", "awk.nope.nope.nope"},
		{"/owner/v1/keys", ""},
		{"/owner/v1/keys", o.account.OwnerSecret + "x"},
	} {
		ctx := send(tc.path, tc.bearer)
		if ctx.Response.StatusCode() != fasthttp.StatusUnauthorized || string(ctx.Response.Header.Peek(fasthttp.HeaderWWWAuthenticate)) != `Bearer realm="addrwatch"` {
			t.Errorf("%s with %q: %d, WWW-Authenticate %q", tc.path, tc.bearer, ctx.Response.StatusCode(), ctx.Response.Header.Peek(fasthttp.HeaderWWWAuthenticate))
		}
	}
	if ctx := send("/owner/v1/portfolio/cards/nope", o.account.OwnerSecret); ctx.Response.StatusCode() != fasthttp.StatusNotFound || len(ctx.Response.Header.Peek(fasthttp.HeaderWWWAuthenticate)) != 0 {
		t.Errorf("a 404 carries WWW-Authenticate %q", ctx.Response.Header.Peek(fasthttp.HeaderWWWAuthenticate))
	}
}
