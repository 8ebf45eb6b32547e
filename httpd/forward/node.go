package forward

import (
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

// forwardedClientKey holds the client IP the node that forwarded a
// request named, and forwardedHTTPSKey whether that node saw the client
// use HTTPS (Receive). Only a listener other nodes reach writes them;
// whether a request was forwarded is no value of its own but the listener
// it arrived on (Forwarder.Received, httpd's chains).
const (
	forwardedClientKey = "addrwatch.forwarded_client"
	forwardedHTTPSKey  = "addrwatch.forwarded_https"
)

// NamedClient is the client IP the node that forwarded the request named,
// if it was forwarded and that node named one.
func NamedClient(ctx *fasthttp.RequestCtx) (ip string, named bool) {
	ip, named = ctx.UserValue(forwardedClientKey).(string)
	return ip, named
}

// NamedScheme reports whether the node that forwarded the request saw its
// client use HTTPS (false when that node did not say: an older follower),
// and whether the request was received from a node at all (Receive).
func NamedScheme(ctx *fasthttp.RequestCtx) (https, forwarded bool) {
	https, forwarded = ctx.UserValue(forwardedHTTPSKey).(bool)
	return https, forwarded
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
	h.Del(clientIPHeader)
	h.Del(clientProtoHeader)
	h.Del(legacyForwardedHeader)
}

// Receive takes the client's IP and scheme of a request that arrived over
// a node connection from the node that sent it. Only the listeners other
// nodes reach use it: nothing a request carries can name its client or
// scheme on a listener clients reach.
func Receive(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if ip := net.ParseIP(string(ctx.Request.Header.Peek(clientIPHeader))); ip != nil {
			ctx.SetUserValue(forwardedClientKey, ip.String())
		}
		ctx.SetUserValue(forwardedHTTPSKey, string(ctx.Request.Header.Peek(clientProtoHeader)) == "https")
		dropNodeHeaders(&ctx.Request.Header)
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
