package httpd

import (
	"bufio"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/edge"
)

// The site's session cookie names (site/session.go): plain, and the
// __Host- one that alone counts over HTTPS.
const (
	sessionCookie       = "addrwatch_session"
	secureSessionCookie = "__Host-addrwatch_session"
)

// sessionOf signs o's owner in through the owner API and returns the
// session token.
func sessionOf(o *ownerTest) string {
	o.t.Helper()
	status, _, body := o.send("198.51.100.2", "POST", "/owner/v1/sessions", "", map[string]string{"account_id": o.account.AccountID, "password": o.password})
	token, _ := body["session"].(string)
	if status != http.StatusCreated || token == "" {
		o.t.Fatalf("sign-in: %d %v", status, body)
	}
	return token
}

// servePlain serves srv on a plain HTTP listener and returns its base
// URL.
func servePlain(t *testing.T, srv *edge.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

// askTLS opens a connection to base, kept open to the end of the test,
// sends raw on it and returns the answer.
func askTLS(t *testing.T, base string, client *http.Client, raw string) *http.Response {
	t.Helper()
	c, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), client.Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// panel asks for the API access panel with one cookie and returns the
// answer's status and Strict-Transport-Security.
func panel(t *testing.T, client *http.Client, base, cookie, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/access", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: cookie, Value: token})
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Strict-Transport-Security")
}

// Finding (issue 28, item 5): over HTTPS the server also read the plain
// addrwatch_session cookie, which anyone who can answer the browser on
// plain HTTP (or a sibling host) can set, so they could plant their own
// session and have the owner work in their account. Over HTTPS only the
// __Host- cookie, which a browser takes only from this secure origin,
// signs in; over plain HTTP nothing changes. Every HTTPS answer tells the
// browser to come back over HTTPS only; no plain one does.
func TestOverHTTPSOnlyTheHostCookieSignsInAndHSTSIsSent(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	token := sessionOf(o)
	base, client := serveTLS(t, o.server, o.server.PublicHandler())

	if status, hsts := panel(t, client, base, sessionCookie, token); status != http.StatusSeeOther || hsts != edge.HSTSValue {
		t.Errorf("over HTTPS with the plain cookie: %d, HSTS %q; want 303 to the sign-in page, HSTS %q", status, hsts, edge.HSTSValue)
	}
	if status, hsts := panel(t, client, base, secureSessionCookie, token); status != http.StatusOK || hsts != edge.HSTSValue {
		t.Errorf("over HTTPS with the __Host- cookie: %d, HSTS %q; want 200, HSTS %q", status, hsts, edge.HSTSValue)
	}
	// An answer of the edge itself, before any route, says it too.
	resp, err := client.Get(base + "//v1/me")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hsts := resp.Header.Get("Strict-Transport-Security"); resp.StatusCode != http.StatusNotFound || hsts != edge.HSTSValue {
		t.Errorf("the edge's 404 over HTTPS: %d, HSTS %q", resp.StatusCode, hsts)
	}
	// So does one to a request fasthttp could not read (a bare LF).
	resp = askTLS(t, base, client, "GET /v1/me HTTP/1.1\nHost: x\n\n")
	if hsts := resp.Header.Get("Strict-Transport-Security"); resp.StatusCode != http.StatusBadRequest || hsts != edge.HSTSValue {
		t.Errorf("the edge's 400 to an unreadable request over HTTPS: %d, HSTS %q", resp.StatusCode, hsts)
	}

	plain := servePlain(t, o.server.NewHTTPServer("test", o.server.PublicHandler()))
	plainClient := &http.Client{Timeout: client.Timeout, CheckRedirect: client.CheckRedirect}
	if status, hsts := panel(t, plainClient, plain, sessionCookie, token); status != http.StatusOK || hsts != "" {
		t.Errorf("over plain HTTP with the plain cookie: %d, HSTS %q; want 200 and no HSTS", status, hsts)
	}
}

// The connection cap's 429, written before any request is read, is an
// answer over HTTPS too.
func TestConnCapRefusalOverHTTPSCarriesHSTS(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), connsPerClient: 1}
	base, client := serveTLS(t, s, func(ctx *fasthttp.RequestCtx) {})
	for _, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		if resp := askTLS(t, base, client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != want || resp.Header.Get("Strict-Transport-Security") != edge.HSTSValue {
			t.Fatalf("a connection: %d, HSTS %q; want %d with HSTS", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"), want)
		}
	}
}

// Over HTTPS a flash (site/flash.go) is a __Host- cookie, Secure, so no
// sibling host can plant one that hides the real one, and the page it
// redirects to shows it.
func TestOverHTTPSAFlashIsAHostCookie(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	token := sessionOf(o)
	base, client := serveTLS(t, o.server, o.server.PublicHandler())
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	send := func(method, path string, form url.Values, cookies ...*http.Cookie) (*http.Response, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
		}
		req.AddCookie(&http.Cookie{Name: secureSessionCookie, Value: token})
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		return resp, string(page)
	}
	_, page := send("GET", "/access", nil)
	csrf := csrfInput.FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no form token: %.300s", page)
	}
	resp, _ := send("POST", "/access/keys", url.Values{"csrf": {csrf[1]}, "capability": {"read"}})
	var flash *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-addrwatch_flash" {
			flash = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || flash == nil || !flash.Secure || !flash.HttpOnly || flash.Path != "/" || flash.SameSite != http.SameSiteStrictMode {
		t.Fatalf("create a key over HTTPS: %d, flash cookie %v", resp.StatusCode, flash)
	}
	if _, shown := send("GET", resp.Header.Get("Location"), nil, flash); !strings.Contains(shown, `id="new-key" value="awk.`) {
		t.Fatalf("the key page over HTTPS: %.600s", shown)
	}
}
