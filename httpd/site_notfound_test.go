package httpd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// browserAccept is the Accept header Chromium sends for a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

// An unknown path a browser asks for as a page answers the site's HTML
// 404 page, with its frame and a way on; the APIs' unknown paths, an
// unknown asset, and any unknown path asked for by a client that does not
// ask for HTML keep the JSON error shape.
func TestSiteUnknownPathIsAnHTMLPage(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.accept = browserAccept
	page := func(path, link string) {
		t.Helper()
		a := htmlPage(t, c, path, fasthttp.StatusNotFound, "<title>Page not found · addrwatch</title>", "<h1>Page not found</h1>", `href="`+link+`"`, `rel="icon"`)
		if csp := string(a.header.Peek("Content-Security-Policy")); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
	}
	page("/nope", "/")
	page("/portfolio/cards/x/y/z", "/")
	c.mustSignIn()
	page("/nope", "/portfolio")
	// A trailing slash still redirects to the known path.
	if a := c.do("GET", "/portfolio/", nil); a.status != fasthttp.StatusTemporaryRedirect || a.location != "/portfolio" {
		t.Errorf("GET /portfolio/: %d to %q", a.status, a.location)
	}

	for _, path := range []string{"/v1/nope", "/v1", "/V1/me", "/owner/v1/nope", "/owner", "/assets/nope.css"} {
		a := c.do("GET", path, nil)
		if a.status != fasthttp.StatusNotFound || !strings.Contains(a.body, `"code":"NOT_FOUND"`) {
			t.Errorf("GET %s with a browser's Accept: %d %.200s, want the JSON 404", path, a.status, a.body)
		}
	}
	c.accept = ""
	for _, path := range []string{"/nope", "/v1/nope"} {
		a := c.do("GET", path, nil)
		if a.status != fasthttp.StatusNotFound || !strings.Contains(a.body, `"code":"NOT_FOUND"`) {
			t.Errorf("GET %s without Accept: %d %.200s, want the JSON 404", path, a.status, a.body)
		}
	}
}

// A site path that only takes a form's submission, visited by a browser
// (a bookmarked /sign-out, a reload of a form's address), answers an HTML
// 405 in the site's frame with the Allow header; an API client keeps the
// JSON error shape, and the APIs' paths keep it whoever asks.
func TestSiteWrongMethodIsAnHTMLPage(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.accept = browserAccept
	page := func(path, link string) {
		t.Helper()
		a := htmlPage(t, c, path, fasthttp.StatusMethodNotAllowed, "<title>Nothing to show here · addrwatch</title>", "has no page to show", `href="`+link+`"`)
		if allow := string(a.header.Peek(fasthttp.HeaderAllow)); !strings.Contains(allow, "POST") {
			t.Errorf("GET %s: Allow %q", path, allow)
		}
	}
	page("/sign-out", "/")
	c.mustSignIn()
	page("/sign-out", "/portfolio")
	page("/access/keys", "/portfolio")

	if a := c.do("DELETE", "/v1/me", nil); a.status != fasthttp.StatusMethodNotAllowed || !strings.Contains(a.body, `"code":"METHOD_NOT_ALLOWED"`) {
		t.Errorf("DELETE /v1/me with a browser's Accept: %d %.200s, want the JSON 405", a.status, a.body)
	}
	c.accept = ""
	if a := c.do("GET", "/sign-out", nil); a.status != fasthttp.StatusMethodNotAllowed || !strings.Contains(a.body, `"code":"METHOD_NOT_ALLOWED"`) {
		t.Errorf("GET /sign-out without Accept: %d %.200s, want the JSON 405", a.status, a.body)
	}
}

// htmlPage gets path and checks it answers status with an HTML page in
// the site's frame holding each of wants.
func htmlPage(t *testing.T, c *siteClient, path string, status int, wants ...string) siteAnswer {
	t.Helper()
	a := c.do("GET", path, nil)
	if ct := string(a.header.ContentType()); a.status != status || !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("GET %s: %d %s, want an HTML %d: %.200s", path, a.status, ct, status, a.body)
	}
	for _, want := range append([]string{"<main", "<header"}, wants...) {
		if !strings.Contains(a.body, want) {
			t.Errorf("GET %s: the page lacks %q", path, want)
		}
	}
	return a
}

// The site's icon is served at /favicon.ico (where a browser looks when a
// page names none) and as the SVG the pages name.
func TestSiteServesItsIcon(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	for path, want := range map[string]string{"/favicon.ico": "image/x-icon", "/assets/favicon.ico": "image/x-icon", "/assets/favicon.svg": "image/svg+xml"} {
		a := c.do("GET", path, nil)
		if a.status != fasthttp.StatusOK || string(a.header.ContentType()) != want || len(a.body) == 0 {
			t.Errorf("GET %s: %d %s, %d bytes", path, a.status, a.header.ContentType(), len(a.body))
		}
	}
	if ico := c.do("GET", "/favicon.ico", nil).body; !bytes.HasPrefix([]byte(ico), []byte{0, 0, 1, 0}) {
		t.Errorf("/favicon.ico is not an ICO: % x", ico[:min(len(ico), 8)])
	}
}
