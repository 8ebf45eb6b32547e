package edge

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// ConnsPerClientMax caps the connections one client address holds open on
// a listener at once. An agent needs one or two (one request at a time on a
// keep-alive connection is the norm), a browser six, so 64 leaves room for
// several agents behind one NAT address while one address can no longer
// hold thousands of idle connections, each with its goroutine and 16 KiB
// read buffer. An IPv6 client is counted by its /64, which one host
// usually owns whole.
const ConnsPerClientMax = 64

// refusedConnWriteTimeout bounds the write of the 429 to a connection
// over the cap.
const refusedConnWriteTimeout = time.Second

// A connection closed after a refusal may still have request bytes on
// their way in. Closing it with unread bytes makes the kernel send a
// reset, which can destroy the answer before the client reads it; so the
// close first ends the server's side of the stream and reads what still
// arrives, within these bounds (as net/http does).
const (
	lingerTimeout  = 500 * time.Millisecond
	lingerBytesMax = 256 << 10
)

// connCap counts the open connections of each client address.
type connCap struct {
	max    int
	exempt func(net.IP) bool
	mu     sync.Mutex
	open   map[netip.Addr]int
}

func newConnCap(max int, exempt func(net.IP) bool) *connCap {
	return &connCap{max: max, exempt: exempt, open: map[netip.Addr]int{}}
}

// admit counts a new connection from remote and returns the function that
// uncounts it, or false when the client already holds max connections.
func (c *connCap) admit(remote net.Addr) (release func(), admitted bool) {
	tcp, isTCP := remote.(*net.TCPAddr)
	if !isTCP || (c.exempt != nil && c.exempt(tcp.IP)) {
		return func() {}, true
	}
	client := clientKey(tcp.AddrPort().Addr())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[client] >= c.max {
		return nil, false
	}
	c.open[client]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.open[client]--; c.open[client] <= 0 {
			delete(c.open, client)
		}
	}, true
}

// edgeListener applies the connection cap and wraps each connection in
// the line-ending check.
type edgeListener struct {
	net.Listener
	conns      *connCap // nil: no cap
	writeError func(*fasthttp.RequestCtx, error)
}

func (l *edgeListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release := func() {}
		if l.conns != nil {
			var admitted bool
			if release, admitted = l.conns.admit(c.RemoteAddr()); !admitted {
				go refuseConn(c, l.writeError)
				continue
			}
		}
		ec := &edgeConn{Conn: c, release: release}
		ec.lines.begin()
		if _, isTLS := c.(*tls.Conn); isTLS {
			return &edgeTLSConn{ec}, nil
		}
		return ec, nil
	}
}

// refuseConn answers a connection over the cap with 429 RATE_LIMITED,
// written by writeError, before reading anything from it, and closes it.
// The client's other connections are untouched.
func refuseConn(c net.Conn, writeError func(*fasthttp.RequestCtx, error)) {
	defer c.Close()
	var ctx fasthttp.RequestCtx
	writeError(&ctx, &actors.Error{Code: actors.CodeRateLimited, RetryAfter: 1, Message: fmt.Sprintf(
		"too many connections from your address: at most %d at a time; reuse a keep-alive connection or close idle ones (limits: /v1/docs#limits)", ConnsPerClientMax)})
	resp := &ctx.Response
	if _, overTLS := c.(*tls.Conn); overTLS {
		// An answer over HTTPS like any other (tls.go). Trusted
		// proxies are not capped, so no other HTTPS reaches here.
		resp.Header.Set(fasthttp.HeaderStrictTransportSecurity, HSTSValue)
	}
	resp.SetConnectionClose()
	c.SetWriteDeadline(time.Now().Add(refusedConnWriteTimeout))
	w := bufio.NewWriter(c)
	if resp.Write(w) == nil && w.Flush() == nil {
		drain(c)
	}
}

// edgeConn is a served connection: it uncounts itself from the cap when
// closed and checks the line endings of each request head it reads.
// fasthttp reads and writes a connection from one goroutine; Close may
// come from another (a shutdown), hence the Once.
type edgeConn struct {
	net.Conn
	release func()
	closed  sync.Once
	lines   lineCheck
	err     error // sticky: once a head is refused, every Read fails
	linger  bool  // drain the incoming bytes before closing
	memo    any   // ConnMemo's
}

func (c *edgeConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if good, ok := c.lines.feed(p[:n]); !ok {
		// fasthttp gets the bytes before the bad line ending and then
		// the error, so it answers 400 at once instead of waiting for
		// a CRLF that never comes until the read timeout.
		c.err = errBareLineEnding
		if good == 0 {
			return 0, c.err
		}
		return good, nil
	}
	return n, err
}

func (c *edgeConn) Write(p []byte) (int, error) {
	c.lines.responseWritten(p)
	return c.Conn.Write(p)
}

func (c *edgeConn) Close() error {
	var err error
	c.closed.Do(func() {
		if c.linger {
			drain(c.Conn)
		}
		err = c.Conn.Close()
		c.release()
	})
	return err
}

// lingerOnClose asks Close to drain the connection first.
func (c *edgeConn) lingerOnClose() { c.linger = true }

// drain ends the server's side of c and reads what the client still
// sends, within the linger bounds.
func drain(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.CopyN(io.Discard, c, lingerBytesMax)
}

// CloseAfterAnswer closes a request's connection once its answer is
// written, draining what the client still sends (see lingerTimeout).
func CloseAfterAnswer(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	if c, ok := ctx.Conn().(interface{ lingerOnClose() }); ok {
		c.lingerOnClose()
	}
}

// ConnMemo is where the handlers of ctx's requests may keep a value from
// one request of its connection to the next, or nil when ctx was not read
// from a connection the edge accepted (an MCP tool call, a test's
// context). fasthttp serves a connection's requests one at a time, on one
// goroutine, and runs a request's handlers and writes its answer before it
// reads the next one; the value lives as long as the connection. So what
// is kept there must only be used on that goroutine, and since several
// clients' requests may share a connection (from a trusted proxy, or
// forwarded by another node), nothing kept of one request may be given to
// another that did not send the same thing.
func ConnMemo(ctx *fasthttp.RequestCtx) *any {
	if c, isEdge := ctx.Conn().(interface{ connMemo() *any }); isEdge {
		return c.connMemo()
	}
	return nil
}

func (c *edgeConn) connMemo() *any { return &c.memo }

// WithMemo is c as the edge's listeners accept it, with its ConnMemo (for
// benchmarks that run the handlers on a context of their own).
func WithMemo(c net.Conn) net.Conn {
	ec := &edgeConn{Conn: c, release: func() {}}
	ec.lines.begin()
	return ec
}

// longRequestLine tells fasthttp's error handler that an oversized head
// was all request line (414), not long headers (431).
func (c *edgeConn) longRequestLine() bool { return c.lines.longRequestLine() }

// edgeTLSConn keeps a TLS connection's methods visible through the
// wrapper: fasthttp tells TLS requests (ctx.IsTLS, TLSConnectionState)
// by them.
type edgeTLSConn struct{ *edgeConn }

func (c *edgeTLSConn) Handshake() error { return c.Conn.(*tls.Conn).Handshake() }
func (c *edgeTLSConn) ConnectionState() tls.ConnectionState {
	return c.Conn.(*tls.Conn).ConnectionState()
}

// errBareLineEnding is what a connection's Read returns after a request
// head with a bare LF or CR.
var errBareLineEnding = errors.New("request head has a line ending other than CRLF")
