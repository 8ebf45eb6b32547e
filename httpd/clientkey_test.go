package httpd

import (
	"fmt"
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/edge"
)

// Finding (issue 28, item 4): 60 requests from 60 addresses of one /64
// were never limited. They come here through a trusted proxy's
// X-Forwarded-For, as they would behind a load balancer.
func TestEdgeLimitsCountAnIPv6ClientByItsSlash64(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	c := newClock()
	e := newEdgeLimits([]*net.IPNet{proxies}, c.now)
	from := func(path, client string) *fasthttp.RequestCtx {
		ctx := limitedReq(path, "10.1.2.3", "")
		ctx.Request.Header.Set("X-Forwarded-For", client)
		return ctx
	}
	passed := 0
	for i := range 60 {
		if e.Check(from("/v1/me", fmt.Sprintf("2001:db8:1:2::%x", i+1))) == nil {
			passed++
		}
	}
	if passed != edge.RegularRate.Burst {
		t.Fatalf("60 addresses of one /64: %d passed, want the one client's burst of %d", passed, edge.RegularRate.Burst)
	}
	// The Sheet budget is per client too.
	for i := range edge.SheetIPRate.Burst {
		mustPass(t, e, from("/v1/bookmark-spaces/abc/sheet", fmt.Sprintf("2001:db8:1:2:%x::1", i+1)))
	}
	mustRefuse(t, e, from("/v1/bookmark-spaces/abc/sheet", "2001:db8:1:2:abcd::1"), 3)
	// Another /64 is another client.
	mustPass(t, e, from("/v1/me", "2001:db8:1:3::1"))
	// An IPv4 client's mapped form spends its IPv4 bucket.
	for range edge.RegularRate.Burst {
		mustPass(t, e, from("/v1/me", "192.0.2.44"))
	}
	mustRefuse(t, e, from("/v1/me", "::ffff:192.0.2.44"), 2)
}

// Finding (issue 28, item 4): the sign-in back-off was per address, so a
// client guessing from one /64 changed address at each attempt and was
// never held back. Each guess names another (unknown) login, so only the
// client's ledger can hold it back; wrong owner secrets from across the
// /64 trip the bearer ledger the same way.
func TestOwnerBackOffCountsAnIPv6ClientByItsSlash64(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	signIn := func(ip string, n int) (int, int) {
		status, retry, _ := o.send(ip, "POST", "/owner/v1/sessions", "", map[string]string{"login": fmt.Sprintf("nobody%d", n), "password": "wrong password"})
		return status, retry
	}
	for i := range edge.ClientBackoff.Free + 1 {
		status, retry := signIn(fmt.Sprintf("2001:db8:5:6::%x", i+1), i)
		o.expect(fmt.Sprintf("wrong password %d", i+1), status, retry, fasthttp.StatusUnauthorized, 0)
	}
	status, retry := signIn("2001:db8:5:6:ffff::1", 100)
	o.expect("another address of the /64", status, retry, fasthttp.StatusTooManyRequests, 1)
	status, retry = signIn("2001:db8:5:7::1", 101)
	o.expect("another /64", status, retry, fasthttp.StatusUnauthorized, 0)

	guess := "aws." + o.account.AccountID + ".guessedsecret"
	for i := range edge.ClientBackoff.Free + 1 {
		status, retry, _ := o.send(fmt.Sprintf("2001:db8:8:9::%x", i+1), "GET", "/owner/v1/keys", guess, nil)
		o.expect(fmt.Sprintf("guess %d", i+1), status, retry, fasthttp.StatusUnauthorized, 0)
	}
	status, retry, _ = o.send("2001:db8:8:9:ffff::1", "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
	o.expect("the right secret from another address of the /64", status, retry, fasthttp.StatusTooManyRequests, 1)
	status, retry, _ = o.send("2001:db8:8:a::1", "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
	o.expect("the right secret from another /64", status, retry, fasthttp.StatusOK, 0)
}
