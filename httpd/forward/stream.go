package forward

import (
	"errors"
	"io"
	"net"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// Streamed forwarding: a follower relays a History CSV download
// (Config.Streamed) as the leader writes it, rather than reading it whole
// first as it does other answers. An extended account's full history is
// never held on the follower, and the download may take as long as the
// leader may take to write it (Config.StreamTimeout), not forwardTimeout.
//
// Each download has a node connection of its own, closed when the file
// has gone out: a download is rare and long, and its own connection is
// what tells a file the leader finished from one cut short (relayedBody).

// streamPrefetchMax is the largest answer of known length read whole
// before it is relayed: fasthttp streams only a body longer than
// MaxResponseBodySize, or one without a length, as the leader's downloads
// are. It covers the leader's JSON errors.
const streamPrefetchMax = 64 << 10

// errCutShort ends a relayed file whose node connection closed before the
// leader had finished it.
var errCutShort = errors.New("the leader's answer was cut short")

// forwardStream passes a download to the leader over a new node connection
// and sets its answer's status and headers on ctx, and its body as a
// stream the server writes to the client as it arrives, once this
// node's handler has returned. An error means nothing was set.
func (f *Forwarder) forwardStream(ctx *fasthttp.RequestCtx, target forwardTarget, req *fasthttp.Request) error {
	var conn *watchedConn
	// A streaming client's read deadline is set once, before the answer's
	// head, and holds until its body is read.
	client := f.newClient(target, f.cfg.StreamTimeout, func(c net.Conn) net.Conn {
		conn = &watchedConn{Conn: c}
		return conn
	})
	client.StreamResponseBody = true
	client.MaxResponseBodySize = streamPrefetchMax
	resp := fasthttp.AcquireResponse()
	if err := client.DoTimeout(req, resp, f.cfg.StreamTimeout); err != nil {
		fasthttp.ReleaseResponse(resp)
		client.CloseIdleConnections()
		return err
	}
	resp.Header.CopyTo(&ctx.Response.Header)
	if resp.BodyStream() == nil { // an answer that has no body, such as a 304
		fasthttp.ReleaseResponse(resp)
		client.CloseIdleConnections()
		return nil
	}
	ctx.Response.SetBodyStream(&relayedBody{resp: resp, conn: conn, client: client}, resp.Header.ContentLength())
	return nil
}

// watchedConn is a node connection that remembers that reading from it
// failed, the leader's closing of it included.
type watchedConn struct {
	net.Conn
	failed atomic.Bool
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.failed.Store(true)
	}
	return n, err
}

// relayedBody is the body of the leader's answer as the server writes it
// to the client. fasthttp ends a chunked body at io.EOF where the
// connection closes between two chunks, as if the leader had sent the
// last chunk; such a file would look complete to the client. Its own
// connection having closed tells it apart: the server then breaks off the
// client's answer too, as the leader's was.
type relayedBody struct {
	resp   *fasthttp.Response
	conn   *watchedConn
	client *fasthttp.HostClient
}

func (b *relayedBody) Read(p []byte) (int, error) {
	n, err := b.resp.BodyStream().Read(p)
	if err == io.EOF && b.conn.failed.Load() {
		err = errCutShort
	}
	return n, err
}

// Close runs once the server has written the body, or failed to: the
// download's node connection is closed either way.
func (b *relayedBody) Close() error {
	fasthttp.ReleaseResponse(b.resp)
	b.client.CloseIdleConnections()
	return nil
}
