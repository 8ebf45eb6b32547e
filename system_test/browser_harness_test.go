package system_test

// Tests of the browser harness itself: that it drives a real chromium
// against a real node, and that its guards fail a test when they should.
// The pages that the guards must catch are served by an httptest server
// inside the test, because the real site must never serve such a page.

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// TestBrowserReadsTheAgentDocs opens the Agent API guide of a real node
// over loopback in chromium and reads it, with no dialog and no console
// error.
func TestBrowserReadsTheAgentDocs(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	s := startServer(t)
	if status := b.open(s.URL + "/v1/docs"); status != http.StatusOK {
		t.Fatalf("GET /v1/docs in the browser: status %d", status)
	}
	body := b.text("body")
	for _, want := range []string{"/v1/docs/sheets", "Authorization: Bearer"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page the browser shows lacks %q; it starts %q", want, body[:min(len(body), 200)])
		}
	}
	b.assertNoConsoleErrors()
}

// TestBrowserDialogGuardFailsOnAlert: a page that runs alert(1) from an
// injected image, as a hostile card name would if the site rendered it
// unescaped, fails the test at the step that loaded it, and the failing
// test's screenshots are saved.
func TestBrowserDialogGuardFailsOnAlert(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser") // as newBrowser would, but it runs under a recorder here
	}
	t.Parallel()
	// No policy: the strict one would refuse the inline handler, and this
	// test is about what happens when a hostile string gets to run.
	site := servePagesWithCSP(t, "", map[string]string{
		"/card": `<!doctype html><title>card</title><h1 id=name>Savings<img src=x onerror=alert(1)></h1>`,
	})
	os.RemoveAll(screenshotDir(t.Name()))
	run := recordFailures(t, func(tb testing.TB) {
		b := newBrowser(tb)
		b.open(site.URL + "/card")
		b.text("#name") // not reached: the open fails
	})
	if !run.failed() {
		t.Fatal("a page that ran alert(1) did not fail the test")
	}
	if msg := run.messages(); !strings.Contains(msg, `alert("1")`) || !strings.Contains(msg, "open "+site.URL+"/card") {
		t.Errorf("the failure does not name the alert and the step: %s", msg)
	}
	shots, _ := filepath.Glob(filepath.Join(screenshotDir(t.Name()), "*.png"))
	if len(shots) == 0 {
		t.Errorf("no screenshot saved in %s", screenshotDir(t.Name()))
	}
	for _, shot := range shots {
		if data, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG (%v)", shot, err)
		}
	}
	os.RemoveAll(screenshotDir(t.Name()))
}

// TestBrowserAnswersAnExpectedConfirm: a confirm() the test announces is
// answered as the test says and does not fail it; the same confirm
// unannounced does.
func TestBrowserAnswersAnExpectedConfirm(t *testing.T) {
	t.Parallel()
	site := servePages(t, map[string]string{
		"/revoke": `<!doctype html><title>revoke</title>
<button id=revoke>Revoke</button><output id=answer></output>
<script src=/revoke.js></script>`,
		"/revoke.js": `document.getElementById("revoke").addEventListener("click", () => {
	document.getElementById("answer").textContent = confirm("Revoke key ab12?") ? "revoked" : "kept";
});`,
	})
	b := newBrowser(t)
	b.open(site.URL + "/revoke")
	for _, accept := range []bool{true, false} {
		msg := b.answerDialog(page.DialogTypeConfirm, accept, func() { b.click("#revoke") })
		if msg != "Revoke key ab12?" {
			t.Errorf("the confirm's message: %q", msg)
		}
		if want := map[bool]string{true: "revoked", false: "kept"}[accept]; b.text("#answer") != want {
			t.Errorf("after answering %v: %q, want %q", accept, b.text("#answer"), want)
		}
	}
	b.assertNoConsoleErrors()

	run := recordFailures(t, func(tb testing.TB) {
		b := newBrowser(tb)
		b.open(site.URL + "/revoke")
		b.click("#revoke")
	})
	if !run.failed() || !strings.Contains(run.messages(), `confirm("Revoke key ab12?")`) {
		t.Errorf("an unannounced confirm did not fail the test: %s", run.messages())
	}
	os.RemoveAll(screenshotDir(t.Name()))
}

// TestBrowserConsoleGuard: an inline event handler refused by the page's
// Content-Security-Policy (the alert(1) of a hostile string, which never
// runs) and an uncaught exception are both reported, and a clean page
// reports nothing.
func TestBrowserConsoleGuard(t *testing.T) {
	t.Parallel()
	site := servePages(t, map[string]string{
		"/clean":     `<!doctype html><title>clean</title><p id=ok>ok</p>`,
		"/inline":    `<!doctype html><title>inline</title><p id=ok>ok<img src=x onerror=alert(1)></p>`,
		"/throws":    `<!doctype html><title>throws</title><p id=ok>ok</p><script src=/throws.js></script>`,
		"/throws.js": `throw new Error("boom from throws.js");`,
	})
	b := newBrowser(t)
	b.open(site.URL + "/clean")
	if errs := b.consoleErrors(); len(errs) != 0 {
		t.Fatalf("a clean page has console errors: %q", errs)
	}
	b.open(site.URL + "/inline")
	b.open(site.URL + "/throws")
	errs := strings.Join(b.consoleErrors(), "\n")
	if !strings.Contains(errs, "Content Security Policy") {
		t.Errorf("the refused inline script is not reported: %s", errs)
	}
	if !strings.Contains(errs, "boom from throws.js") {
		t.Errorf("the uncaught exception is not reported: %s", errs)
	}

	run := recordFailures(t, func(tb testing.TB) {
		b := newBrowser(tb)
		b.open(site.URL + "/throws")
		b.assertNoConsoleErrors()
	})
	if !run.failed() || !strings.Contains(run.messages(), "boom from throws.js") {
		t.Errorf("assertNoConsoleErrors did not fail on an exception: %s", run.messages())
	}
	os.RemoveAll(screenshotDir(t.Name()))
}

// TestBrowserFormsCookiesAndDownloads drives the helpers a site test uses:
// fill labelled fields, submit, read the page and its cookies, forge a
// cookie, download a file and save a screenshot.
func TestBrowserFormsCookiesAndDownloads(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form", func(w http.ResponseWriter, r *http.Request) {
		writePage(w, strictCSP, `<!doctype html><title>form</title>
<form method=post action=/signed-in>
<label for=login>Login</label> <input id=login name=login>
<label>Capability <select name=capability><option value=read>read</option><option value=write>write</option></select></label>
<button id=go>Sign in</button></form>`)
	})
	mux.HandleFunc("POST /signed-in", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		writePage(w, strictCSP, fmt.Sprintf(`<!doctype html><title>in</title><p id=who>%s</p><p id=cap>%s</p>
<a id=csv href=/history.csv>History</a><ul><li>one</li><li>two</li></ul>`, r.FormValue("login"), r.FormValue("capability")))
	})
	mux.HandleFunc("GET /history.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="history-2026.csv"`)
		w.Write([]byte(historyCSV))
	})
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		if err != nil {
			http.Error(w, "signed out", http.StatusUnauthorized)
			return
		}
		writePage(w, strictCSP, `<!doctype html><title>who</title><p id=session>`+c.Value+`</p>`)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	b := newBrowser(t)
	b.open(site.URL + "/form")
	b.fill("Login", "ada@example.org")
	b.fill("Capability", "write")
	if status := b.submit("#go"); status != http.StatusOK {
		t.Fatalf("submit: status %d", status)
	}
	if who, capability := b.text("#who"), b.text("#cap"); who != "ada@example.org" || capability != "write" {
		t.Errorf("the form sent login %q capability %q", who, capability)
	}
	if items := b.texts("li"); strings.Join(items, ",") != "one,two" {
		t.Errorf("texts: %q", items)
	}
	c := b.cookie("session")
	if c == nil || c.Value != "s3cret" || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Secure {
		t.Errorf("the session cookie as stored: %+v", c)
	}
	name, data := b.download("#csv")
	if name != "history-2026.csv" || string(data) != historyCSV {
		t.Errorf("download: %q %q", name, data)
	}

	b.setCookie(site.URL, "session", "forged")
	b.open(site.URL + "/whoami")
	if got := b.text("#session"); got != "forged" {
		t.Errorf("the forged cookie did not reach the server: %q", got)
	}
	shot := filepath.Join(t.TempDir(), "docs", "page.png")
	b.screenshot(shot)
	if data, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("the screenshot is not a PNG: %v", err)
	}
	b.assertNoConsoleErrors()

	run := recordFailures(t, func(tb testing.TB) {
		b := newBrowser(tb)
		b.open(site.URL + "/form")
		b.fill("Capability", "admin")
	})
	if !run.failed() || !strings.Contains(run.messages(), `no option "admin"`) {
		t.Errorf("picking a missing option did not fail: %s", run.messages())
	}
	os.RemoveAll(screenshotDir(t.Name()))
}

// historyCSV is a download with what a CSV must keep byte for byte: CRLF
// line ends, UTF-8 and a quoted field with a comma and quotes.
const historyCSV = "date,txid,note\r\n2026-01-02,ab,\"caf\u00e9, \"\"quoted\"\"\"\r\n"

// servePages serves each path's body, HTML or (for .js) JavaScript, with
// a strict Content-Security-Policy, as the site does.
func servePages(t *testing.T, pages map[string]string) *httptest.Server {
	return servePagesWithCSP(t, strictCSP, pages)
}

// servePagesWithCSP is servePages with another policy; "" sends none.
func servePagesWithCSP(t *testing.T, csp string, pages map[string]string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript")
			w.Write([]byte(body))
			return
		}
		writePage(w, csp, body)
	}))
	t.Cleanup(site.Close)
	return site
}

// strictCSP allows scripts from the page's origin only (no inline script,
// no inline event handler), as the site's policy does.
const strictCSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"

// writePage writes an HTML page with the Content-Security-Policy csp (none
// if it is "") and an empty icon, so that the browser asks for no
// /favicon.ico.
func writePage(w http.ResponseWriter, csp, body string) {
	if csp != "" {
		w.Header().Set("Content-Security-Policy", csp)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(strings.Replace(body, "<title>", `<link rel=icon href="data:,"><title>`, 1)))
}

// failureRecorder is a testing.TB that records a test's failures instead
// of failing the real test, so that a test can check that the browser
// harness fails a test when it must. Fatal ends the recorded body's
// goroutine, as it ends a test's.
type failureRecorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

// recordFailures runs body with a failureRecorder, then its cleanups, last
// registered first, and returns the recorder.
func recordFailures(t *testing.T, body func(tb testing.TB)) *failureRecorder {
	r := &failureRecorder{TB: t}
	onGoroutine(func() { body(r) })
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		onGoroutine(r.cleanups[i])
	}
	return r
}

// onGoroutine runs f on a goroutine of its own and waits for it, so that a
// Fatal inside f ends only f.
func onGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func (r *failureRecorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, msg)
	r.TB.Logf("recorded failure (expected by this test): %s", msg)
}

func (r *failureRecorder) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}

func (r *failureRecorder) messages() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.failures, "\n")
}

func (r *failureRecorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *failureRecorder) Failed() bool                      { return r.failed() }
func (r *failureRecorder) Fail()                             { r.record("Fail") }
func (r *failureRecorder) Error(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *failureRecorder) Errorf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *failureRecorder) FailNow()                          { r.Fail(); runtime.Goexit() }
func (r *failureRecorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *failureRecorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *failureRecorder) Skip(args ...any)                 { r.Fatal(append([]any{"skipped: "}, args...)...) }
func (r *failureRecorder) Skipf(format string, args ...any) { r.Fatalf("skipped: "+format, args...) }
func (r *failureRecorder) SkipNow()                         { r.Fatal("skipped") }
