package main

import (
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// The site worker's panel load succeeds only with a 200 that is the
// panel: a 303 to the sign-in page (the session was refused) and a 200
// with another page are errors, under their own keys.
func TestSitePanelLoadCountsOnlyThePanelAsSuccess(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in for the site: the panel for one session, the sign-in
	// form (a 200 page) for another, and for any other cookie what the
	// real site does, a 303 to sign in.
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Request.Header.Cookie(siteSessionCookie)) {
		case "awt.good":
			ctx.SetContentType("text/html; charset=utf-8")
			ctx.SetBodyString(`<h1>API access</h1><section><h2 id="keys-heading">API keys</h2></section>`)
		case "awt.signin":
			ctx.SetContentType("text/html; charset=utf-8")
			ctx.SetBodyString(`<h1>Sign in</h1><p>You are signed out. Your API keys keep working.</p>`)
		default:
			ctx.Response.Header.Set(fasthttp.HeaderLocation, "/?m=expired")
			ctx.SetStatusCode(fasthttp.StatusSeeOther)
		}
	}}
	go srv.Serve(ln)
	defer srv.Shutdown()
	target := "http://" + ln.Addr().String()
	c := newClient(1, 5*time.Second)
	for _, tc := range []struct {
		session string
		want    string
	}{
		{"awt.good", ""},
		{"awt.signin", "200 unexpected body"},
		{"awt.expired", "303"},
	} {
		w := newSiteWorker(&env{cfg: &config{targets: []string{target}}, site: []*siteAccount{{session: tc.session}}}, 0)
		req := w.next()
		var resp response
		c.do(req, &resp)
		if got := resp.failure(); got != tc.want {
			t.Errorf("session %s: failure %q, want %q (status %d)", tc.session, got, tc.want, resp.status)
		}
		if resp.ok() != (tc.want == "") {
			t.Errorf("session %s: ok() = %v", tc.session, resp.ok())
		}
		if tc.want != "" && hintFor(tc.want) == "" {
			t.Errorf("%q has no hint", tc.want)
		}
	}
}
