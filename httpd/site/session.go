package site

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The site's session is an owner session token (the same one POST
// /owner/v1/sessions returns) kept in a cookie the page's scripts cannot
// read. Over HTTPS the cookie takes the __Host- prefix, which the browser
// accepts only with Secure, Path=/ and no Domain, so a sibling subdomain
// cannot plant or shadow it. That holds only if the server, over HTTPS,
// reads nothing else: a cookie without the prefix can be set by anyone
// who answers the browser on plain HTTP for this host, or by a sibling
// host, and would sign the owner in to the attacker's account.
const (
	sessionCookie       = "addrwatch_session"
	secureSessionCookie = "__Host-addrwatch_session"
	// signInCookie carries the sign-in form's CSRF token before there is
	// a session to derive one from (double submit).
	signInCookie       = "addrwatch_signin"
	secureSignInCookie = "__Host-addrwatch_signin"
	csrfField          = "csrf"
	// signInTokenBytes is the random bytes of a sign-in form's token.
	signInTokenBytes = 32
)

// lowerBase32 writes the site's tokens in lower-case base32, as the
// server writes its secrets.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// siteSession is a signed-in request of the site.
type siteSession struct {
	cred actors.Credential
	who  actors.Principal
	csrf string // the token every form of this session carries
	// flashKey seals and opens this session's flashes (flash.go).
	flashKey []byte
	https    bool
	// passive marks a request the page made on its own (signedInPassive):
	// its queries do not extend the session.
	passive bool
	// seen is the newest chain event this browser has seen in the
	// notification centre (centre.go), for the navigation's badge.
	seen uint64
}

// SessionToken returns the session cookie's value: over HTTPS only the
// __Host- cookie's, over plain HTTP whichever name it has.
func SessionToken(ctx *fasthttp.RequestCtx, https bool) string {
	if v := ctx.Request.Header.Cookie(secureSessionCookie); len(v) > 0 || https {
		return string(v)
	}
	return string(ctx.Request.Header.Cookie(sessionCookie))
}

// siteCredential parses the session cookie. Only a session token is
// accepted: an owner secret or an API key in the cookie is no sign-in.
func (s *Site) siteCredential(ctx *fasthttp.RequestCtx) (actors.Credential, string, bool) {
	token := SessionToken(ctx, s.edge.IsHTTPS(ctx))
	if token == "" {
		return actors.Credential{}, "", false
	}
	cred, valid := s.edge.Session(token)
	if !valid || cred.Kind != actors.CredentialSession {
		return actors.Credential{}, "", false
	}
	return cred, token, true
}

// csrfToken derives a session's form token from its secret token. It is a
// one-way function of a secret only the browser holds, so a page on
// another site cannot compute it, and every node computes the same one
// without any stored state.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("addrwatch site csrf\x00" + sessionToken))
	return lowerBase32.EncodeToString(sum[:20])
}

// tokensEqual compares two form tokens in constant time.
func tokensEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// sameOrigin reports whether a state-changing request came from one of
// our own pages: its Origin (or, when a browser sends none, its Referer)
// names the host the request was sent to, over the scheme it was sent
// with. A request with neither is refused: every browser that runs the
// site sends Origin on a form post.
func (s *Site) sameOrigin(ctx *fasthttp.RequestCtx) bool {
	from := ctx.Request.Header.Peek("Origin")
	if len(from) == 0 {
		from = ctx.Request.Header.Peek(fasthttp.HeaderReferer)
	}
	return len(from) != 0 && OurOrigin(ctx, from, s.edge.IsHTTPS(ctx))
}

// OurOrigin reports whether origin (an Origin header, or a Referer) is
// this server's own origin as the request reached it: the host it was
// sent to, over the scheme it was sent with (https says which). This is
// the one origin the site's forms and /v1/mcp allow; "null" (an opaque
// origin) is never ours.
func OurOrigin(ctx *fasthttp.RequestCtx, origin []byte, https bool) bool {
	if bytes.Equal(origin, []byte("null")) {
		return false
	}
	u, err := url.Parse(string(origin))
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return u.Scheme == scheme && u.Host == string(ctx.Host())
}

// setCookie sets one of the site's cookies; maxAge < 0 deletes it.
func setCookie(ctx *fasthttp.RequestCtx, name, value string, https bool, maxAge time.Duration) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetSecure(https)
	switch {
	case maxAge < 0:
		c.SetExpire(fasthttp.CookieExpireDelete)
		c.SetMaxAge(-1)
	case maxAge > 0:
		c.SetMaxAge(int(maxAge / time.Second))
	}
	ctx.Response.Header.SetCookie(c)
}

// cookieNames returns the session and sign-in cookie names for a request.
func cookieNames(https bool) (session, signIn string) {
	if https {
		return secureSessionCookie, secureSignInCookie
	}
	return sessionCookie, signInCookie
}

// setSessionCookie starts the site session. The cookie has no Max-Age: it
// ends with the browser, and the server ends the session itself after
// the idle time anyway.
func setSessionCookie(ctx *fasthttp.RequestCtx, token string, https bool) {
	name, _ := cookieNames(https)
	setCookie(ctx, name, token, https, 0)
}

// clearSessionCookies forgets the session under both names.
func clearSessionCookies(ctx *fasthttp.RequestCtx, https bool) {
	setCookie(ctx, secureSessionCookie, "", true, -1)
	if !https {
		setCookie(ctx, sessionCookie, "", false, -1)
	}
}

// signInToken returns the sign-in form's token, setting a new cookie when
// the browser has none.
func signInToken(ctx *fasthttp.RequestCtx, https bool) string {
	_, name := cookieNames(https)
	if v := ctx.Request.Header.Cookie(name); len(v) == lowerBase32.EncodedLen(signInTokenBytes) {
		return string(v)
	}
	random := make([]byte, signInTokenBytes)
	rand.Read(random) // crypto/rand's Read never fails: it crashes the program instead
	token := lowerBase32.EncodeToString(random)
	setCookie(ctx, name, token, https, 0)
	return token
}

// signInTokenValid checks the sign-in form's double-submitted token.
func signInTokenValid(ctx *fasthttp.RequestCtx, https bool) bool {
	_, name := cookieNames(https)
	return tokensEqual(string(ctx.PostArgs().Peek(csrfField)), string(ctx.Request.Header.Cookie(name)))
}
