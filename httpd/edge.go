package httpd

import (
	"errors"
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
	// readBufferBytes is fasthttp's per-connection read buffer, which
	// also bounds the request line and the header section.
	readBufferBytes = 16 << 10
	readTimeout     = 30 * time.Second
	writeTimeout    = 30 * time.Second
	idleTimeout     = 2 * time.Minute
)

// HTTPServer is one listener's fasthttp server together with the edge
// rules that need the connection itself. Serve it with its own Serve,
// which wraps the listener; the embedded server's Shutdown stops it.
type HTTPServer struct {
	*fasthttp.Server
	conns *connCap // nil: no per-client connection cap
}

// Serve accepts connections on ln until the server shuts down. A TLS
// listener goes in as ln (wrapped by crypto/tls already): the line-ending
// check must see the decrypted bytes.
func (s *HTTPServer) Serve(ln net.Listener) error {
	return s.Server.Serve(&edgeListener{Listener: ln, conns: s.conns})
}

// NewHTTPServer returns the public listener's server: request bodies up
// to bodyBytesMax are read before the handler runs. Every answer to a
// request made over HTTPS, the edge's own included, carries
// Strict-Transport-Security (https.go).
func (s *Server) NewHTTPServer(name string, handler fasthttp.RequestHandler) *HTTPServer {
	out := s.newHTTPServer(name, handler, false)
	serve, refuse := out.Handler, out.ErrorHandler
	out.Handler = func(ctx *fasthttp.RequestCtx) {
		serve(ctx)
		s.strictTransport(ctx)
	}
	out.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
		refuse(ctx, err)
		s.strictTransport(ctx)
	}
	return out
}

// NewAdminHTTPServer returns the admin listener's server. Its bodies are
// streamed: the handler sees the headers first, so the operator token is
// checked before a byte of a backup upload is read, and a restore writes
// the upload to disk instead of holding it in memory (see restore.go).
func (s *Server) NewAdminHTTPServer(name string, handler fasthttp.RequestHandler) *HTTPServer {
	return s.newHTTPServer(name, handler, true)
}

func (s *Server) newHTTPServer(name string, handler fasthttp.RequestHandler, admin bool) *HTTPServer {
	bodyMax := bodyBytesMax
	if admin {
		handler = readAdminBody(handler)
		bodyMax = adminBodyBytesMax
	}
	srv := &fasthttp.Server{
		Handler:        refuseBadHeads(handler),
		HeaderReceived: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig { return headerReceived(h, admin) },
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			writeError(ctx, readError(ctx, err, bodyMax))
			closeAfterAnswer(ctx)
		},
		Logger:                newFasthttpLogger(s.log, name),
		SecureErrorLogMessage: true,
		Name:                  name,
		NoDefaultServerHeader: true,
		MaxRequestBodySize:    bodyMax,
		StreamRequestBody:     admin,
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		ReadBufferSize:        readBufferBytes,
	}
	out := &HTTPServer{Server: srv}
	if s.connsPerClient > 0 {
		out.conns = newConnCap(s.connsPerClient, s.connCapExempt)
	}
	return out
}

// refuseBadHeads answers, before any route, a request whose head the edge
// refuses (framing, version, path) and closes the connection after it.
// headerReceived has already kept such a request's body from being read.
func refuseBadHeads(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := refuseHead(&ctx.Request.Header); err != nil {
			writeError(ctx, err)
			closeAfterAnswer(ctx)
			return
		}
		if err := refusePath(ctx); err != nil {
			writeError(ctx, err)
			return
		}
		next(ctx)
	}
}

// headerReceived runs once a request's head is parsed, before its body is
// read. A refused head gets no body read at all (its length is taken as
// zero) and its connection closes; an HTTP/1.x request of a later minor
// version is served as HTTP/1.1 (RFC 9112 section 2.3).
//
// On the admin listener, which streams bodies, fasthttp still reads the
// smaller of the body limit and 8 KiB before the handler runs, and would
// wait for that much; a limit of one byte (zero means the default) leaves
// the reading to the handlers, after the token check. A restore also gets
// the long read timeout its upload may need.
func headerReceived(h *fasthttp.RequestHeader, admin bool) fasthttp.RequestConfig {
	if servedAsHTTP11(h.Protocol()) {
		h.SetProtocol("HTTP/1.1")
	}
	if refuseHead(h) != nil {
		h.SetConnectionClose()
		h.SetContentLength(0)
		return fasthttp.RequestConfig{}
	}
	if !admin {
		if isHistoryCSV(h.Method(), h.RequestURI()) {
			return fasthttp.RequestConfig{WriteTimeout: historyCSVWriteTimeout}
		}
		return fasthttp.RequestConfig{}
	}
	config := fasthttp.RequestConfig{MaxRequestBodySize: 1}
	if isRestore(h.Method(), h.RequestURI()) {
		config.ReadTimeout = restoreReadTimeout
	}
	return config
}

// readError is the answer to a request fasthttp could not read. fasthttp
// closes the connection after it.
func readError(ctx *fasthttp.RequestCtx, err error, bodyMax int) error {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, errBareLineEnding):
		return actors.Errorf(codeBadRequest, "malformed HTTP request: every line of the request head must end with CRLF")
	case errors.As(err, &small):
		if c, ok := ctx.Conn().(interface{ longRequestLine() bool }); ok && c.longRequestLine() {
			return actors.Errorf(codeURITooLong, "the request line exceeds %d bytes", readBufferBytes)
		}
		return actors.Errorf(codeHeadersTooLarge, "the request line and headers exceed %d bytes", readBufferBytes)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return actors.Errorf(actors.CodeValidation, "request body exceeds %d bytes", bodyMax)
	}
	return actors.Errorf(codeBadRequest, "malformed HTTP request")
}
