package httpd

import (
	"bytes"
	"net"

	"github.com/valyala/fasthttp"
)

// clientIP names the client of a request for per-client limits. A tool
// call of an MCP request is its client's (mcp.go). For a
// request another node forwarded, it is the client that node named (its
// own clientIP); otherwise it is the socket's peer, or, when that peer is a
// trusted proxy, the right-most address of X-Forwarded-For that is not
// itself a trusted proxy (the nearest client a trusted hop vouches for).
func clientIP(ctx *fasthttp.RequestCtx, trusted []*net.IPNet) string {
	if ip, toolCall := mcpToolCall(ctx); toolCall && ip != "" {
		return ip // the MCP request's client, named when it was received
	}
	if ip, named := ctx.UserValue(forwardedClientKey).(string); named && forwarded(ctx) {
		return ip
	}
	peer := ctx.RemoteIP()
	if !isTrusted(trusted, peer) {
		return peer.String()
	}
	xff := ctx.Request.Header.Peek(fasthttp.HeaderXForwardedFor)
	hops := bytes.Split(xff, []byte(","))
	for i := len(hops) - 1; i >= 0; i-- {
		ip := net.ParseIP(string(bytes.TrimSpace(hops[i])))
		if ip == nil {
			break
		}
		if !isTrusted(trusted, ip) {
			return ip.String()
		}
	}
	return peer.String()
}

func isTrusted(trusted []*net.IPNet, ip net.IP) bool {
	for _, n := range trusted {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}
