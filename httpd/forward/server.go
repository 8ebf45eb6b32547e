package forward

import (
	"bufio"
	"net"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// FramedServer is the leader's end of framed forwarding: it serves the
// public requests that followers send over framed node connections.
type FramedServer struct {
	cfg FramedConfig
	// answerMax is the largest answer sent as is: frameBytesMax, lower in
	// tests.
	answerMax int

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// FramedConfig wires a FramedServer.
type FramedConfig struct {
	// Handler serves each request, as the node's forwarded public
	// listener does (Receive).
	Handler fasthttp.RequestHandler
	Logger  fasthttp.Logger
	// BodyMax bounds a request's body, as on the edge's listeners.
	BodyMax int
	// ReadError is the answer to a request fasthttp could not read from
	// its frame, as the edge answers one it cannot read.
	ReadError func(ctx *fasthttp.RequestCtx, err error) error
	// WriteError writes err as the answer, in the spec's {code, error}.
	WriteError func(ctx *fasthttp.RequestCtx, err error)
}

// NewFramedServer returns the server of framed forwarded requests.
func NewFramedServer(cfg FramedConfig) *FramedServer {
	return &FramedServer{cfg: cfg, answerMax: frameBytesMax, conns: map[net.Conn]struct{}{}}
}

// Serve serves the framed connections ln accepts until ln is closed.
func (fs *FramedServer) Serve(ln net.Listener) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		if !fs.track(conn) {
			conn.Close()
			return net.ErrClosed
		}
		go fs.serveConn(conn)
	}
}

// Close closes every framed connection; requests being served finish, but
// their answers are not sent.
func (fs *FramedServer) Close() {
	fs.mu.Lock()
	fs.closed = true
	fs.mu.Unlock()
	fs.closeConns()
}

// closeConns closes the framed connections open now.
func (fs *FramedServer) closeConns() {
	fs.mu.Lock()
	conns := make([]net.Conn, 0, len(fs.conns))
	for c := range fs.conns {
		conns = append(conns, c)
	}
	fs.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (fs *FramedServer) track(c net.Conn) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return false
	}
	fs.conns[c] = struct{}{}
	return true
}

func (fs *FramedServer) untrack(c net.Conn) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.conns, c)
}

// serveConn reads requests from conn and has workers serve them, at most
// framesInFlightMax at once; answers go out in the order they are ready.
// A worker stays for the next request rather than exiting: a goroutine
// per request would grow a new stack through the handlers every time.
func (fs *FramedServer) serveConn(conn net.Conn) {
	defer fs.untrack(conn)
	defer conn.Close()
	w := newFrameWriter(conn, func(error) { conn.Close() })
	defer w.close()
	work := make(chan frame)
	defer close(work)
	workers := 0
	br := bufio.NewReaderSize(conn, frameWriteBuffer)
	for {
		f, err := readFrame(br)
		if err != nil {
			return
		}
		select {
		case work <- f:
			continue
		default:
		}
		if workers < framesInFlightMax {
			workers++
			go fs.work(conn, w, work)
		}
		work <- f
	}
}

// work serves the requests of one framed connection until it closes.
func (fs *FramedServer) work(conn net.Conn, w *frameWriter, work <-chan frame) {
	for f := range work {
		answer, err := fs.serve(conn, f.data)
		if err != nil {
			fs.cfg.Logger.Printf("framed request %d: %v", f.id, err)
			w.close()
			continue
		}
		w.send(frame{id: f.id, data: answer})
	}
}

// ctxPool holds the RequestCtxs framed requests are served with: one
// with its request and answer buffers already grown is much cheaper than a
// new one per request.
var ctxPool = sync.Pool{New: func() any { return new(fasthttp.RequestCtx) }}

// serve runs one framed request through the handler and returns the
// answer as a frame's data.
func (fs *FramedServer) serve(conn net.Conn, data []byte) ([]byte, error) {
	ctx := ctxPool.Get().(*fasthttp.RequestCtx)
	defer func() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.ResetUserValues()
		ctxPool.Put(ctx)
	}()
	ctx.Init2(conn, fs.cfg.Logger, false)
	if err := parseFrame(data, func(br *bufio.Reader) error { return readFramedRequest(&ctx.Request, br, fs.cfg.BodyMax) }); err != nil {
		fs.cfg.WriteError(ctx, fs.cfg.ReadError(ctx, err))
	} else {
		fs.cfg.Handler(ctx)
	}
	ctx.Response.SkipBody = ctx.Request.Header.IsHead()
	answer, err := encodeFrame(ctx.Response.Write)
	if err == nil && len(answer) > fs.answerMax {
		// The follower would refuse the frame and drop the connection,
		// failing every other request on it too.
		ctx.Response.Reset()
		fs.cfg.WriteError(ctx, actors.Errorf(actors.CodeHTTPError, "the answer is too large to pass on from the leader; send the request to the leader"))
		answer, err = encodeFrame(ctx.Response.Write)
	}
	return answer, err
}

// readFramedRequest reads a request from a frame, body included. fasthttp
// leaves the body of a request that says Expect: 100-continue for the
// caller to read once it has agreed to; the follower already has, with its
// client, and the body is in the frame (a follower of an older version
// keeps the header).
func readFramedRequest(req *fasthttp.Request, br *bufio.Reader, bodyMax int) error {
	if err := req.ReadLimitBody(br, bodyMax); err != nil {
		return err
	}
	if req.MayContinue() {
		return req.ContinueReadBody(br, bodyMax)
	}
	return nil
}
