package edge

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// One host usually owns a whole IPv6 /64 and can send from any address
// in it, so every per-client limit counts an IPv6 client by its /64, as
// the connection cap does. IPv4 stays per address, and an IPv4-mapped
// IPv6 address is its IPv4 address.
func TestClientKeyIsTheAddressOrTheSlash64(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.7":              "198.51.100.7",
		"::ffff:198.51.100.7":       "198.51.100.7",
		"2001:db8:1:2::1":           "2001:db8:1:2::",
		"2001:db8:1:2:ffff:ee:dd:1": "2001:db8:1:2::",
		"2001:db8:1:3::1":           "2001:db8:1:3::",
		"::1":                       "::",
	} {
		ctx := requestFrom("/v1/me", in, "")
		if got := (Clients{}).Key(ctx); got != want {
			t.Errorf("client %s is counted as %q, want %q", in, got, want)
		}
	}
}

func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	e := Clients{Trusted: []*net.IPNet{proxies}}
	ctx := requestFrom("/v1/me", "10.1.2.3", "")
	ctx.Request.Header.Set("X-Forwarded-For", "198.51.100.7, 10.1.9.9")
	if ip := e.Key(ctx); ip != "198.51.100.7" {
		t.Fatalf("behind a trusted proxy the client is %s, want 198.51.100.7", ip)
	}
	ctx = requestFrom("/v1/me", "203.0.113.1", "")
	ctx.Request.Header.Set("X-Forwarded-For", "198.51.100.7")
	if ip := e.Key(ctx); ip != "203.0.113.1" {
		t.Fatalf("an untrusted peer chose its own IP: %s", ip)
	}
	ctx = requestFrom("/v1/me", "10.1.2.3", "")
	ctx.Request.Header.Set("X-Forwarded-For", "not-an-ip")
	if ip := e.Key(ctx); ip != "10.1.2.3" {
		t.Fatalf("a garbage X-Forwarded-For gave %s", ip)
	}
}

// A request another node forwarded names its client as its remote
// address; that node already looked behind its own proxies, so the
// client it named is the client even when it is one of our trusted
// proxies (a proxy's own request), and an X-Forwarded-For the request
// still carries is not read a second time.
func TestAForwardedRequestsClientIsTheOneItsNodeNamed(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	forwarded := func(*fasthttp.RequestCtx) (https, forwarded bool) { return true, true }
	e := Clients{Trusted: []*net.IPNet{proxies}, Forwarded: forwarded}
	ctx := requestFrom("/v1/me", "10.1.2.3", "")
	ctx.Request.Header.Set("X-Forwarded-For", "198.51.100.7")
	if ip := e.IP(ctx); ip != "10.1.2.3" {
		t.Errorf("a forwarded request named 10.1.2.3, the edge counted %s", ip)
	}
	if !e.IsHTTPS(ctx) {
		t.Error("the forwarding node saw HTTPS, the edge did not")
	}
}
