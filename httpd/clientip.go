package httpd

import (
	"bytes"
	"net"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/forward"
)

// clientIP names the client of a request: the address a follower names
// when it forwards the request, and that the per-client limits count by
// (clientKeyOf). A tool call of an MCP request is its client's (mcp.go).
// For a request another node forwarded, it is the client that node named (its
// own clientIP); otherwise it is the socket's peer, or, when that peer is a
// trusted proxy, the right-most address of X-Forwarded-For that is not
// itself a trusted proxy (the nearest client a trusted hop vouches for).
func clientIP(ctx *fasthttp.RequestCtx, trusted []*net.IPNet) string {
	if ip, toolCall := mcpToolCall(ctx); toolCall && ip != "" {
		return ip // the MCP request's client, named when it was received
	}
	if ip, named := forward.NamedClient(ctx); named {
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

// clientKeyOf is what every per-client limit counts ctx's client by: the
// edge's buckets, the owner credential ledgers and the connection cap
// (which has only the socket's address, so it calls clientKey itself).
// An IPv6 host usually holds a whole /64 and can send from any address in
// it, so counting it per address would give it 2^64 budgets.
func clientKeyOf(ctx *fasthttp.RequestCtx, trusted []*net.IPNet) string {
	ip := clientIP(ctx, trusted)
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip // not an address (clientIP always gives one); count it as it is
	}
	return clientKey(a).String()
}

// clientKey is the address a client is counted by: IPv4 as is (an
// IPv4-mapped IPv6 address is its IPv4 address), IPv6 by its /64.
func clientKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is4() {
		return a
	}
	p, _ := a.Prefix(64)
	return p.Addr()
}
