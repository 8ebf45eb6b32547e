package edge

import (
	"bytes"
	"net"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// Clients names the client of a request: the address a follower names
// when it forwards the request, and that the per-client limits count by
// (Key). A request another node forwarded names its client itself: the
// node connection's listener made the client's IP its remote address
// (package forward's Receive), and Forwarded says it did.
type Clients struct {
	// Trusted are the proxies whose X-Forwarded-For names the client and
	// whose X-Forwarded-Proto says whether the client used HTTPS.
	Trusted []*net.IPNet
	// Forwarded, when set, reports whether the request arrived over a
	// node connection and, if so, whether the node that forwarded it saw
	// its client use HTTPS.
	Forwarded func(ctx *fasthttp.RequestCtx) (https, forwarded bool)
}

// IP is the client of ctx: a forwarded request's remote address (the
// client the forwarding node named, whose proxies that node has already
// looked behind); otherwise the socket's peer, or, when that peer is a
// trusted proxy, the right-most address of X-Forwarded-For that is not
// itself a trusted proxy (the nearest client a trusted hop vouches for).
func (c Clients) IP(ctx *fasthttp.RequestCtx) string {
	peer := ctx.RemoteIP()
	if c.forwarded(ctx) || !c.IsTrusted(peer) {
		return peer.String()
	}
	xff := ctx.Request.Header.Peek(fasthttp.HeaderXForwardedFor)
	hops := bytes.Split(xff, []byte(","))
	for i := len(hops) - 1; i >= 0; i-- {
		ip := net.ParseIP(string(bytes.TrimSpace(hops[i])))
		if ip == nil {
			break
		}
		if !c.IsTrusted(ip) {
			return ip.String()
		}
	}
	return peer.String()
}

// forwarded reports whether ctx arrived over a node connection.
func (c Clients) forwarded(ctx *fasthttp.RequestCtx) bool {
	if c.Forwarded == nil {
		return false
	}
	_, forwarded := c.Forwarded(ctx)
	return forwarded
}

// IsTrusted reports whether ip is one of the trusted proxies.
func (c Clients) IsTrusted(ip net.IP) bool {
	for _, n := range c.Trusted {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Key is what every per-client limit counts ctx's client by: the edge's
// buckets, the owner credential ledgers and the connection cap (which has
// only the socket's address, so it calls clientKey itself). An IPv6 host
// usually holds a whole /64 and can send from any address in it, so
// counting it per address would give it 2^64 budgets.
func (c Clients) Key(ctx *fasthttp.RequestCtx) string {
	return KeyOf(c.IP(ctx))
}

// KeyOf is the key a client whose IP is ip is counted by (Clients.Key).
func KeyOf(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip // not an address (IP always gives one); count it as it is
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
