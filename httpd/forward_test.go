package httpd

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/forward"
)

// leaderCluster is a follower's view of a cluster whose leader listens for
// node connections on addr (and refuses framed ones, as one too old to
// know them does; httpd/forward tests them).
type leaderCluster struct{ addr string }

func (c leaderCluster) Serving() bool          { return false }
func (c leaderCluster) Leading() bool          { return false }
func (c leaderCluster) Leader() (string, bool) { return c.addr, true }
func (c leaderCluster) DialNode(addr string, stream forward.NodeStream, timeout time.Duration) (net.Conn, error) {
	if stream == forward.StreamFrames {
		return nil, errors.New("not accepted: EOF")
	}
	return net.DialTimeout("tcp", addr, timeout)
}

// followerOf is the forwarder a Server trusting trusted builds for c.
func followerOf(c forward.Cluster, trusted []*net.IPNet) *forward.Forwarder {
	return (&Server{}).newForwarder(Config{Cluster: c, TrustedProxies: trusted})
}

// serveLoopback serves h on a loopback port until the test ends.
func serveLoopback(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

// The headers only a node connection may carry (httpd/forward).
const (
	clientIPHeader        = "X-Addrwatch-Client-IP"
	clientProtoHeader     = "X-Addrwatch-Client-Proto"
	legacyForwardedHeader = "X-Addrwatch-Forwarded"
)

// seenBy answers what the handler believes about the request: its client
// IP, whether it was forwarded, and any node header left in it.
func seenBy(ctx *fasthttp.RequestCtx) {
	ctx.WriteString(strings.Join([]string{clientIP(ctx, nil), boolWord(received(ctx)),
		string(ctx.Request.Header.Peek(clientIPHeader)), string(ctx.Request.Header.Peek(legacyForwardedHeader))}, "|"))
}

// received reports whether the request came through forward.Receive.
func received(ctx *fasthttp.RequestCtx) bool {
	_, forwarded := forward.Scheme(ctx)
	return forwarded
}

func boolWord(b bool) string {
	if b {
		return "forwarded"
	}
	return "direct"
}

func get(t *testing.T, addr string, headers ...string) string {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + "/v1/me")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	return string(resp.Body())
}

// TestForwardedRequestNamesItsClient: a follower behind a trusted proxy
// forwards a request; the leader's node listener sees the client the
// follower's edge saw, not the follower, and not what the client claimed.
// On a listener clients reach, the node headers mean nothing.
func TestForwardedRequestNamesItsClient(t *testing.T) {
	t.Parallel()
	leader := serveLoopback(t, forward.Receive(seenBy))
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	f := followerOf(leaderCluster{addr: leader}, []*net.IPNet{loopback})
	follower := serveLoopback(t, forward.IgnoreNodeHeaders(f.Handler(false, func([]byte) bool { return false }, seenBy)))

	got := get(t, follower, "X-Forwarded-For", "198.51.100.7", clientIPHeader, "192.0.2.66", legacyForwardedHeader, "anything")
	if want := "198.51.100.7|forwarded||"; got != want {
		t.Errorf("the leader saw %q through the follower, want %q", got, want)
	}
	public := serveLoopback(t, forward.IgnoreNodeHeaders(seenBy))
	got = get(t, public, clientIPHeader, "192.0.2.66", legacyForwardedHeader, "anything")
	if want := "127.0.0.1|direct||"; got != want {
		t.Errorf("a client's own node headers: the handler saw %q, want %q", got, want)
	}
}
