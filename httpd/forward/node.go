package forward

import (
	"bytes"
	"net"

	"github.com/valyala/fasthttp"
)

// Headers only a node connection may carry. clientIPHeader names the
// client of a forwarded request, as the follower's edge saw it, so that the
// leader's per-client limits see that client rather than the follower;
// clientProtoHeader says whether that client used HTTPS.
// legacyForwardedHeader once carried a secret that made a request count as
// forwarded; it means nothing now. A client's own copies are dropped.
const (
	clientIPHeader        = "X-Addrwatch-Client-IP"
	clientProtoHeader     = "X-Addrwatch-Client-Proto"
	legacyForwardedHeader = "X-Addrwatch-Forwarded"
)

// Scheme reports whether the request arrived from another node
// (Receive) and, if so, whether the client that node served used HTTPS
// (false when that node did not say: an older follower). It reads the
// scheme header Receive leaves on every request it takes, which a listener
// clients reach drops (IgnoreNodeHeaders): no client can claim it.
func Scheme(ctx *fasthttp.RequestCtx) (https, forwarded bool) {
	proto := ctx.Request.Header.Peek(clientProtoHeader)
	return string(proto) == "https", len(proto) != 0
}

// IgnoreNodeHeaders drops, on a listener clients reach, the headers that
// only mean something on a node connection.
func IgnoreNodeHeaders(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		dropNodeHeaders(&ctx.Request.Header)
		next(ctx)
	}
}

func dropNodeHeaders(h *fasthttp.RequestHeader) {
	if !hasNodeHeader(h) {
		return // the usual request: one look at its names, no Del's scans
	}
	h.Del(clientIPHeader)
	h.Del(clientProtoHeader)
	h.Del(legacyForwardedHeader)
}

// nodeHeaderPrefix begins the name of every node header, in any case.
var nodeHeaderPrefix = []byte("X-Addrwatch-")

// hasNodeHeader reports whether h may hold a node header: whether a line
// of the head as it was received begins with nodeHeaderPrefix, in any
// case. A head not read from the wire (nothing received) may hold one.
func hasNodeHeader(h *fasthttp.RequestHeader) bool {
	raw := h.RawHeaders()
	if len(raw) == 0 {
		return true
	}
	for {
		if len(raw) >= len(nodeHeaderPrefix) && bytes.EqualFold(raw[:len(nodeHeaderPrefix)], nodeHeaderPrefix) {
			return true
		}
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			return false
		}
		raw = raw[i+1:]
	}
}

// Receive makes a request that arrived over a node connection the
// request of the client the sending node served: its remote address
// becomes the client's IP that node named (the node's own when it named
// none), and its scheme header says, always, whether that client used
// HTTPS (Scheme). Only the listeners other nodes reach use it: nothing a
// request carries can name its client or scheme on a listener clients
// reach. What Receive learns is the request's own, not a value kept
// beside it: every layer after it that asks the request its client IP
// (ctx.RemoteIP) gets the client.
func Receive(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if ip := net.ParseIP(string(ctx.Request.Header.Peek(clientIPHeader))); ip != nil {
			ctx.SetRemoteAddr(&net.TCPAddr{IP: ip})
			// A keep-alive connection's requests share ctx: the client
			// is this request's, not the next one's (which may name none),
			// nor the connection's error log's.
			defer ctx.SetRemoteAddr(nil)
		}
		https := string(ctx.Request.Header.Peek(clientProtoHeader)) == "https"
		dropNodeHeaders(&ctx.Request.Header)
		ctx.Request.Header.Set(clientProtoHeader, clientProto(https))
		next(ctx)
	}
}

// clientProto is the scheme a follower names in clientProtoHeader.
func clientProto(https bool) string {
	if https {
		return "https"
	}
	return "http"
}
