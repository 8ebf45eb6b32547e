package httpd

import (
	"encoding/json"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// mcpPostFrom sends me as a tools/call to /v1/mcp at host, with origin as
// its Origin header (none when empty).
func (o *ownerTest) mcpPostFrom(bearer, host, origin string) (int, map[string]any) {
	o.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("http://" + host + mcpPath)
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
	req.Header.Set(fasthttp.HeaderAccept, "application/json, text/event-stream")
	req.Header.SetContentType("application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.SetBodyString(toolCall("me", `{}`))
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 40000}, nil)
	o.handler(ctx)
	var m map[string]any
	json.Unmarshal(ctx.Response.Body(), &m)
	return ctx.Response.StatusCode(), m
}

// MCP's Streamable HTTP transport requires a server to refuse an Origin it
// does not allow, against DNS rebinding: a page of another site, rebound
// to this server's address, must not reach the tools. Allowed is this
// server's own origin (the site's rule for its forms); an agent that is
// not a browser sends no Origin and is served.
func TestMCPRefusesAnOriginNotOnTheAllowList(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	key, _ := o.key("read", "reader")
	const host = "addrwatch.example:8080"
	for _, c := range []struct {
		name, bearer, origin string
		want                 int
	}{
		{"no Origin", key, "", fasthttp.StatusOK},
		{"our own origin", key, "http://" + host, fasthttp.StatusOK},
		{"another site", key, "http://evil.example", fasthttp.StatusForbidden},
		{"another site rebound to our address", key, "http://rebound.example:8080", fasthttp.StatusForbidden},
		{"another port of our host", key, "http://addrwatch.example:9090", fasthttp.StatusForbidden},
		{"our host over another scheme", key, "https://" + host, fasthttp.StatusForbidden},
		{"an opaque origin", key, "null", fasthttp.StatusForbidden},
		{"not a URL", key, "::", fasthttp.StatusForbidden},
		{"another site without a key", "", "http://evil.example", fasthttp.StatusForbidden},
	} {
		status, body := o.mcpPostFrom(c.bearer, host, c.origin)
		if status != c.want {
			t.Errorf("%s: status %d, want %d (%v)", c.name, status, c.want, body)
			continue
		}
		if c.want == fasthttp.StatusForbidden && (body["code"] != "FORBIDDEN" || body["error"] == "") {
			t.Errorf("%s: the refusal is not the API's error shape: %v", c.name, body)
		}
	}
}
