package forward

import (
	"encoding/json"
	"errors"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// leaderCluster is a follower's view of a cluster whose leader listens for
// node connections on addr, and for framed ones on frames (none when
// empty: such a leader refuses them, as one too old to know them does).
type leaderCluster struct{ addr, frames string }

func (c leaderCluster) Serving() bool          { return false }
func (c leaderCluster) Leading() bool          { return false }
func (c leaderCluster) Leader() (string, bool) { return c.addr, true }
func (c leaderCluster) DialNode(addr string, stream NodeStream, timeout time.Duration) (net.Conn, error) {
	if stream == StreamFrames {
		if c.frames == "" {
			return nil, errors.New("not accepted: EOF")
		}
		addr = c.frames
	}
	return net.DialTimeout("tcp", addr, timeout)
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

// The edge's parts a forwarder and a framed server are given, as stand-ins
// for httpd's (whose own tests forward with the real ones).

// clientIP names the client as the edge does: a forwarded request's
// remote address (the client its node named), else, from a trusted
// (loopback) peer, X-Forwarded-For's last hop, else the peer.
func clientIP(ctx *fasthttp.RequestCtx, trustLoopback bool) string {
	if _, forwarded := Scheme(ctx); forwarded {
		return ctx.RemoteIP().String()
	}
	hops := strings.Split(string(ctx.Request.Header.Peek(fasthttp.HeaderXForwardedFor)), ",")
	if ip := net.ParseIP(strings.TrimSpace(hops[len(hops)-1])); ip != nil && trustLoopback && ctx.RemoteIP().IsLoopback() {
		return ip.String()
	}
	return ctx.RemoteIP().String()
}

// isDownload stands in for httpd's isHistoryCSV: a GET of a .csv.
func isDownload(method, requestURI []byte) bool {
	path, _, _ := strings.Cut(string(requestURI), "?")
	return string(method) == fasthttp.MethodGet && strings.HasSuffix(path, ".csv")
}

// writeError writes err, an *actors.Error, as the spec's {code, error}:
// HTTP_ERROR is a 503, anything else here a 400.
func writeError(ctx *fasthttp.RequestCtx, err error) {
	e, _ := errors.AsType[*actors.Error](err)
	status := fasthttp.StatusBadRequest
	if e.Code == actors.CodeHTTPError {
		status = fasthttp.StatusServiceUnavailable
	}
	body, _ := json.Marshal(e)
	ctx.Response.Header.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
}

// readError is the answer to a frame fasthttp could not read.
func readError(_ *fasthttp.RequestCtx, err error) error {
	return actors.Errorf(actors.CodeValidation, "malformed HTTP request: %v", err)
}

// newFollower is a follower's forwarder to the leaders of c, which trusts
// a loopback peer's X-Forwarded-For; timeout, when set, replaces
// forwardTimeout.
func newFollower(c Cluster, timeout time.Duration) *Forwarder {
	f := New(Config{Cluster: c,
		ClientIP:      func(ctx *fasthttp.RequestCtx) string { return clientIP(ctx, true) },
		ClientHTTPS:   func(*fasthttp.RequestCtx) bool { return false },
		Streamed:      isDownload,
		StreamTimeout: 10 * time.Minute,
		WriteError:    writeError})
	f.timeout = timeout
	return f
}

// newTestFramedServer is the leader's framed server of h.
func newTestFramedServer(h fasthttp.RequestHandler) *FramedServer {
	return NewFramedServer(FramedConfig{Handler: h, Logger: log.Default(), BodyMax: 8 << 20, ReadError: readError, WriteError: writeError})
}

// seenBy answers what the handler believes about the request: its client
// IP, whether it was forwarded, and any node header left in it.
func seenBy(ctx *fasthttp.RequestCtx) {
	ctx.WriteString(strings.Join([]string{clientIP(ctx, false), boolWord(received(ctx)),
		string(ctx.Request.Header.Peek(clientIPHeader)), string(ctx.Request.Header.Peek(legacyForwardedHeader))}, "|"))
}

// received reports whether the request came through Receive.
func received(ctx *fasthttp.RequestCtx) bool {
	_, forwarded := Scheme(ctx)
	return forwarded
}

func boolWord(b bool) string {
	if b {
		return "forwarded"
	}
	return "direct"
}
