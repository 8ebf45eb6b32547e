package httpd

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"
)

// TestForwardedAdminRequestOverPlainNodeConnections: a request on the
// forwarded admin listener skips the admin token only when node
// connections are authenticated (the forwarding node checked it). Over
// plain ones (--insecure-cluster) any process may have sent it, so it
// needs this node's token like a request on the admin listener.
func TestForwardedAdminRequestOverPlainNodeConnections(t *testing.T) {
	t.Parallel()
	const token = "gate-admin-token"
	send := func(s *Server, bearer string) int {
		var req fasthttp.Request
		req.Header.SetMethod(fasthttp.MethodPost)
		req.SetRequestURI("/admin/v1/accounts")
		req.SetBodyString(`{"plan":"base","password":"correct horse battery"}`)
		req.Header.SetContentType("application/json")
		if bearer != "" {
			req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
		}
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, nil)
		s.ForwardedAdminHandler()(ctx)
		return ctx.Response.StatusCode()
	}
	authenticated := New(Config{Store: newMemoryStore(t), AdminToken: token, PasswordCost: bcrypt.MinCost})
	if got := send(authenticated, ""); got != fasthttp.StatusCreated {
		t.Fatalf("between authenticated nodes, a forwarded request without the token: %d, want 201", got)
	}
	plain := New(Config{Store: newMemoryStore(t), AdminToken: token, PasswordCost: bcrypt.MinCost, NodesUnauthenticated: true})
	if got := send(plain, ""); got != fasthttp.StatusUnauthorized {
		t.Fatalf("over plain node connections, a forwarded request without the token: %d, want 401", got)
	}
	if got := send(plain, "not-"+token); got != fasthttp.StatusUnauthorized {
		t.Fatalf("over plain node connections, a wrong token: %d, want 401", got)
	}
	if got := send(plain, token); got != fasthttp.StatusCreated {
		t.Fatalf("over plain node connections, the token: %d, want 201", got)
	}
}
