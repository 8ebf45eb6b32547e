package httpd

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/forward"
)

// answersScheme is a handler that answers what requestIsHTTPS says.
func answersScheme(s *Server) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		scheme := "http"
		if clients(s.trustedProxies).IsHTTPS(ctx) {
			scheme = "https"
		}
		ctx.WriteString(scheme)
		if s.requestIsHTTPS(ctx) != (scheme == "https") {
			ctx.WriteString(" (requestIsHTTPS disagrees)")
		}
	}
}

func loopbackNet(t *testing.T) []*net.IPNet {
	t.Helper()
	_, loopback, err := net.ParseCIDR("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	return []*net.IPNet{loopback}
}

// TestRequestIsHTTPSBehindProxies: plain HTTP is not HTTPS; a trusted
// proxy's X-Forwarded-Proto is believed (its own value, the last one,
// case-insensitively); an untrusted peer's is ignored.
func TestRequestIsHTTPSBehindProxies(t *testing.T) {
	t.Parallel()
	trusting := &Server{trustedProxies: loopbackNet(t)}
	behindProxy := serveLoopback(t, forward.IgnoreNodeHeaders(answersScheme(trusting)))
	direct := serveLoopback(t, forward.IgnoreNodeHeaders(answersScheme(&Server{})))
	cases := []struct {
		name    string
		addr    string
		headers []string
		want    string
	}{
		{"plain, no header", direct, nil, "http"},
		{"untrusted peer says https", direct, []string{"X-Forwarded-Proto", "https"}, "http"},
		{"untrusted peer forges the node header", direct, []string{clientProtoHeader, "https"}, "http"},
		{"trusted proxy, no header", behindProxy, nil, "http"},
		{"trusted proxy says https", behindProxy, []string{"X-Forwarded-Proto", "HTTPS"}, "https"},
		{"trusted proxy says http", behindProxy, []string{"X-Forwarded-Proto", "http"}, "http"},
		{"trusted proxy appended https", behindProxy, []string{"X-Forwarded-Proto", "http, https"}, "https"},
		{"trusted proxy appended http", behindProxy, []string{"X-Forwarded-Proto", "https, http"}, "http"},
		{"client's node header behind a trusted proxy", behindProxy, []string{clientProtoHeader, "https"}, "http"},
	}
	for _, c := range cases {
		if got := get(t, c.addr, c.headers...); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// serveTLS serves handler through s's public listener edge on a TLS
// listener, as addrwatchd does with --tls-cert, and returns its base URL
// and a client that trusts it and does not follow redirects.
func serveTLS(t *testing.T, s *Server, handler fasthttp.RequestHandler) (string, *http.Client) {
	t.Helper()
	// httptest's server carries a ready self-signed certificate for
	// 127.0.0.1; only its TLS configuration is used.
	donor := httptest.NewUnstartedServer(nil)
	donor.StartTLS()
	serverTLS, client := donor.TLS.Clone(), donor.Client()
	donor.Close()
	serverTLS.NextProtos = nil

	srv := s.NewHTTPServer("test", handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(tls.NewListener(ln, serverTLS))
	t.Cleanup(func() { srv.Shutdown() })
	client.Timeout = 5 * time.Second
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return "https://" + ln.Addr().String(), client
}

// TestRequestIsHTTPSOverTLS serves the handler through the edge on a TLS
// listener, as addrwatchd does with --tls-cert: the edge's connection
// wrapper keeps the TLS visible, and a client's X-Forwarded-Proto cannot
// turn it off.
func TestRequestIsHTTPSOverTLS(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	base, client := serveTLS(t, s, forward.IgnoreNodeHeaders(answersScheme(s)))
	req, err := http.NewRequest("GET", base+"/v1/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-Proto", "http")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "https" {
		t.Fatalf("over TLS the handler saw %q, want https", body)
	}
}

// TestForwardedRequestKeepsItsScheme: a follower forwards a request that
// reached it over HTTPS (here, through a trusted proxy) or over HTTP; the
// leader's node listener sees what the follower saw, whatever the client
// claimed in the node header.
func TestForwardedRequestKeepsItsScheme(t *testing.T) {
	t.Parallel()
	leaderServer := &Server{} // trusts no proxy: only the follower's word counts
	leader := serveLoopback(t, forward.Receive(answersScheme(leaderServer)))
	f := followerOf(leaderCluster{addr: leader}, loopbackNet(t))
	follower := serveLoopback(t, forward.IgnoreNodeHeaders(f.Handler(false, func([]byte) bool { return false }, answersScheme(leaderServer))))

	if got := get(t, follower, "X-Forwarded-Proto", "https"); got != "https" {
		t.Errorf("HTTPS at the follower: the leader saw %q, want https", got)
	}
	if got := get(t, follower, clientProtoHeader, "https"); got != "http" {
		t.Errorf("HTTP at the follower with a forged node header: the leader saw %q, want http", got)
	}
	// A forwarded request without the header (an older follower) is not
	// taken for HTTPS, even if the node connection itself is TLS.
	forward.Receive(func(ctx *fasthttp.RequestCtx) {
		if leaderServer.requestIsHTTPS(ctx) {
			t.Error("a forwarded request without the follower's word counted as HTTPS")
		}
	})(&fasthttp.RequestCtx{})
}
