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

// forwardedKey marks a request that arrived over a node connection: its
// client was rate limited, and its admin token checked, by the node that
// forwarded it (nodes may have different admin tokens).
// forwardedClientKey holds the client IP that node named, and
// forwardedHTTPSKey whether that node saw the client use HTTPS.
const (
	forwardedKey       = "addrwatch.forwarded"
	forwardedClientKey = "addrwatch.forwarded_client"
	forwardedHTTPSKey  = "addrwatch.forwarded_https"
)

// Forwarded reports whether the request arrived over a node connection
// (Receive).
func Forwarded(ctx *fasthttp.RequestCtx) bool { return ctx.UserValue(forwardedKey) != nil }

// NamedClient is the client IP the node that forwarded the request named,
// if it was forwarded and that node named one.
func NamedClient(ctx *fasthttp.RequestCtx) (ip string, named bool) {
	ip, named = ctx.UserValue(forwardedClientKey).(string)
	return ip, named && Forwarded(ctx)
}

// NamedHTTPS reports whether the node that forwarded the request saw its
// client use HTTPS; false for a request not forwarded, or forwarded
// without that node's word (an older follower).
func NamedHTTPS(ctx *fasthttp.RequestCtx) bool {
	https, _ := ctx.UserValue(forwardedHTTPSKey).(bool)
	return https && Forwarded(ctx)
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

// Receive marks a request that arrived over a node connection as
// forwarded and takes its client's IP and scheme from the node that sent
// it. Only the listeners other nodes reach use it: nothing a request
// carries can mark it forwarded.
func Receive(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue(forwardedKey, true)
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
