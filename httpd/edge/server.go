package edge

import (
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The edge is everything a request meets before a route: the connection
// cap, the line-ending check, the framing and version rules, the path
// guard and the body limits. Its answers have the error shape, and a
// request whose framing is in doubt closes its connection, so nothing it
// sent can be read as a second request.
const (
	// ReadBufferBytes is fasthttp's per-connection read buffer, which
	// also bounds the request line and the header section.
	ReadBufferBytes = 16 << 10
	readTimeout     = 30 * time.Second
	writeTimeout    = 30 * time.Second
	idleTimeout     = 2 * time.Minute
)

// Edge is what every listener of a node shares: where fasthttp's own log
// goes, how an error becomes an answer, and how a request's client is
// named.
type Edge struct {
	// Log receives fasthttp's log lines, redacted (log.go); nil means
	// slog's default logger.
	Log *slog.Logger
	// WriteError writes an error as the spec's {code, error} answer with
	// its status. The edge mints its own codes (CodeBadRequest and the
	// others) and leaves the status of each to this writer.
	WriteError func(ctx *fasthttp.RequestCtx, err error)
	// Clients names the client of a request and tells its scheme; its
	// trusted proxies are not capped.
	Clients Clients
}

// Listener is one listener's edge rules.
type Listener struct {
	// Name is the server's name, in the log and in fasthttp's errors.
	Name string
	// BodyBytesMax bounds a request body.
	BodyBytesMax int
	// StreamBodies hands each body to the handler as a stream, unread,
	// so a handler can check a request's credentials before it reads a
	// byte of a large upload (the admin listener).
	StreamBodies bool
	// ConnsPerClient caps the connections one client address holds open
	// at once (conn.go); 0 means no cap.
	ConnsPerClient int
	// HSTS adds Strict-Transport-Security to every answer to a request
	// made over HTTPS, the edge's own included (tls.go).
	HSTS bool
	// Request, when set, gives a request the settings its route needs,
	// from its head, before its body is read: a longer timeout for a
	// long download or upload. A refused head does not get here.
	Request func(h *fasthttp.RequestHeader) fasthttp.RequestConfig
}

// Server is one listener's fasthttp server together with the edge rules
// that need the connection itself. Serve it with its own Serve, which
// wraps the listener; the embedded server's Shutdown stops it.
type Server struct {
	*fasthttp.Server
	conns      *connCap // nil: no per-client connection cap
	writeError func(ctx *fasthttp.RequestCtx, err error)
}

// Serve accepts connections on ln until the server shuts down. A TLS
// listener goes in as ln (wrapped by crypto/tls already): the line-ending
// check must see the decrypted bytes.
func (s *Server) Serve(ln net.Listener) error {
	return s.Server.Serve(&edgeListener{Listener: ln, conns: s.conns, writeError: s.writeError})
}

// Uncap lifts the per-client connection cap, for a listener whose clients
// are other nodes.
func (s *Server) Uncap() { s.conns = nil }

// NewServer returns the server of listener l, serving handler behind the
// edge's rules: a request's body up to l.BodyBytesMax is read (unless l
// streams bodies) before handler runs.
func (e *Edge) NewServer(l Listener, handler fasthttp.RequestHandler) *Server {
	srv := &fasthttp.Server{
		Handler:        e.RefuseBadHeads(handler),
		HeaderReceived: l.HeaderReceived,
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			e.WriteError(ctx, ReadError(ctx, err, l.BodyBytesMax))
			CloseAfterAnswer(ctx)
		},
		Logger:                NewLogger(e.Log, l.Name),
		SecureErrorLogMessage: true,
		Name:                  l.Name,
		NoDefaultServerHeader: true,
		MaxRequestBodySize:    l.BodyBytesMax,
		StreamRequestBody:     l.StreamBodies,
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		ReadBufferSize:        ReadBufferBytes,
	}
	if l.HSTS {
		serve, refuse := srv.Handler, srv.ErrorHandler
		srv.Handler = func(ctx *fasthttp.RequestCtx) {
			serve(ctx)
			e.Clients.strictTransport(ctx)
		}
		srv.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
			refuse(ctx, err)
			e.Clients.strictTransport(ctx)
		}
	}
	out := &Server{Server: srv, writeError: e.WriteError}
	if l.ConnsPerClient > 0 {
		out.conns = newConnCap(l.ConnsPerClient, e.Clients.IsTrusted)
	}
	return out
}

// RefuseBadHeads answers, before any route, a request whose head the edge
// refuses (framing, version, path) and closes the connection after it.
// HeaderReceived has already kept such a request's body from being read.
func (e *Edge) RefuseBadHeads(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := refuseHead(&ctx.Request.Header); err != nil {
			e.WriteError(ctx, err)
			CloseAfterAnswer(ctx)
			return
		}
		if err := refusePath(ctx); err != nil {
			e.WriteError(ctx, err)
			return
		}
		next(ctx)
	}
}

// HeaderReceived is fasthttp's HeaderReceived of the listener: it runs
// once a request's head is parsed, before its body is read. A refused
// head gets no body read at all (its length is taken as zero) and its
// connection closes; an HTTP/1.x request of a later minor version is
// served as HTTP/1.1 (RFC 9112 section 2.3).
//
// When the listener streams bodies, fasthttp still reads the smaller of
// the body limit and 8 KiB before the handler runs, and would wait for
// that much; a limit of one byte (zero means the default) leaves the
// reading to the handlers.
func (l Listener) HeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if servedAsHTTP11(h.Protocol()) {
		h.SetProtocol("HTTP/1.1")
	}
	if refuseHead(h) != nil {
		h.SetConnectionClose()
		h.SetContentLength(0)
		return fasthttp.RequestConfig{}
	}
	var config fasthttp.RequestConfig
	if l.Request != nil {
		config = l.Request(h)
	}
	if l.StreamBodies {
		config.MaxRequestBodySize = 1
	}
	return config
}

// ReadError is the answer to a request fasthttp could not read, whose
// body was allowed bodyMax bytes. fasthttp closes the connection after
// it.
func ReadError(ctx *fasthttp.RequestCtx, err error, bodyMax int) error {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, errBareLineEnding):
		return actors.Errorf(CodeBadRequest, "malformed HTTP request: every line of the request head must end with CRLF")
	case errors.As(err, &small):
		if c, ok := ctx.Conn().(interface{ longRequestLine() bool }); ok && c.longRequestLine() {
			return actors.Errorf(CodeURITooLong, "the request line exceeds %d bytes", ReadBufferBytes)
		}
		return actors.Errorf(CodeHeadersTooLarge, "the request line and headers exceed %d bytes", ReadBufferBytes)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return actors.Errorf(actors.CodeValidation, "request body exceeds %d bytes", bodyMax)
	}
	return actors.Errorf(CodeBadRequest, "malformed HTTP request")
}
