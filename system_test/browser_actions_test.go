package system_test

// The page helpers of a browser tab (newBrowser in browser_test.go). Each
// runs within browserActionTimeout, fails the test when its action fails,
// and then checks the dialog guard, so that a dialog fails the step that
// opened it. The helpers that load a page (open, submit) keep a
// screenshot of it, which a failing test saves; a screenshot costs 0.1 to
// 1 s of the 2-core machine, too much to take after every click.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// within runs one step of the test on the tab's context, bounded by the
// action timeout; an error fails the test with the step's name, and so
// does a dialog the step opened.
func within[T any](b *browserTab, step string, f func(ctx context.Context) (T, error)) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserActionTimeout)
	defer cancel()
	v, err := f(ctx)
	b.checkDialogs(step)
	if err != nil {
		b.t.Fatalf("browser: %s: %v", step, err)
	}
	return v
}

// run runs one action that returns a value, as one step.
func run[T any](b *browserTab, step string, action chromedp.Action[T]) T {
	b.t.Helper()
	return within(b, step, func(ctx context.Context) (T, error) { return chromedp.Run(ctx, action) })
}

// do runs actions that return nothing, as one step.
func (b *browserTab) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	run(b, step, chromedp.Steps(actions...))
}

// open loads url, waits for the page's load event and returns the HTTP
// status of the document.
func (b *browserTab) open(url string) (status int64) {
	b.t.Helper()
	step := "open " + url
	resp := run(b, step, chromedp.NavigateResponse(url))
	b.shoot(step)
	return resp.Status
}

// waitVisible waits until an element matching the CSS selector is shown.
func (b *browserTab) waitVisible(selector string) {
	b.t.Helper()
	b.do("wait for "+selector, chromedp.WaitVisible(chromedp.CSS(selector)))
}

// click clicks the element matching the CSS selector and returns without
// waiting for a page load (use submit for a click that loads a page).
func (b *browserTab) click(selector string) {
	b.t.Helper()
	b.do("click "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// submit clicks the element matching the CSS selector (a submit button, a
// link), waits for the page it loads and returns that page's HTTP status.
func (b *browserTab) submit(selector string) (status int64) {
	b.t.Helper()
	step := "submit " + selector
	resp := within(b, step, func(ctx context.Context) (*network.Response, error) {
		return chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(selector)))
	})
	b.shoot(step)
	return resp.Status
}

// labelText is a JavaScript function that gives a label's own text: what
// it says with spaces collapsed, leaving out the options of a <select> or
// the text of a <textarea> nested in it.
const labelText = `(l => {
	const own = l.cloneNode(true);
	own.querySelectorAll("select, textarea").forEach(e => e.remove());
	return own.textContent.replace(/\s+/g, " ").trim();
})`

// labelledControl is a JavaScript expression for the form control of the
// <label> whose own text is exactly label, or null.
func labelledControl(label string) string {
	quoted, _ := json.Marshal(label)
	return fmt.Sprintf(`(() => {
	const label = [...document.querySelectorAll("label")].find(l => %s(l) === %s);
	return label ? label.control : null;
})()`, labelText, quoted)
}

// fill types value into the form control labelled label, replacing what it
// held; for a <select> it picks the option whose value is value. A control
// without a <label> cannot be filled: every control of the site has one.
func (b *browserTab) fill(label, value string) {
	b.t.Helper()
	control := labelledControl(label)
	step := fmt.Sprintf("fill %q", label)
	ctx, cancel := context.WithTimeout(b.ctx, browserActionTimeout)
	err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.JSPath(control)))
	cancel()
	if err != nil {
		labels := run(b, "list the labels", chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("label")].map(`+labelText+`)`))
		b.t.Fatalf("browser: %s: no control with that label (%v); the page's labels: %q", step, err, labels)
	}
	quoted, _ := json.Marshal(value)
	// A <select> takes the value at once; another control is emptied here
	// and typed into below, key by key, as a person would.
	picked := run(b, step, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
	const c = %s;
	if (c.tagName !== "SELECT") { c.value = ""; return "typed"; }
	c.value = %s;
	c.dispatchEvent(new Event("input", {bubbles: true}));
	c.dispatchEvent(new Event("change", {bubbles: true}));
	return c.value === %s ? "picked" : "options: " + [...c.options].map(o => o.value).join(", ");
})()`, control, quoted, quoted)))
	switch {
	case picked == "typed":
		b.do(step, chromedp.SendKeys(chromedp.JSPath(control), value))
	case picked != "picked":
		b.t.Fatalf("browser: %s: no option %q (%s)", step, value, picked)
	}
}

// text returns the visible text of the first element matching the CSS
// selector, waiting for it to be shown.
func (b *browserTab) text(selector string) string {
	b.t.Helper()
	return run(b, "read "+selector, chromedp.Text(chromedp.CSS(selector), chromedp.NodeVisible))
}

// texts returns the visible text of every element matching the CSS
// selector (for example the cells of a table column), in document order;
// none is an empty slice.
func (b *browserTab) texts(selector string) []string {
	b.t.Helper()
	quoted, _ := json.Marshal(selector)
	return run(b, "read all "+selector, chromedp.Evaluate[[]string](
		fmt.Sprintf(`[...document.querySelectorAll(%s)].map(e => e.innerText)`, quoted)))
}

// location returns the URL of the page the tab shows.
func (b *browserTab) location() string {
	b.t.Helper()
	return run(b, "read the location", chromedp.Location())
}

// cookies returns every cookie of the tab's browser context, with the
// flags the browser stored (HTTPOnly, Secure, SameSite, Expires).
func (b *browserTab) cookies() []*network.Cookie {
	b.t.Helper()
	return within(b, "read the cookies", func(ctx context.Context) ([]*network.Cookie, error) {
		res, err := chromedp.CallBrowser(ctx, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: b.contextID})
		return res.Cookies, err
	})
}

// cookie returns the cookie named name, or nil.
func (b *browserTab) cookie(name string) *network.Cookie {
	b.t.Helper()
	for _, c := range b.cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// setCookie stores a cookie for url in the tab's browser context, as if
// that site had set it: a forged or expired session, for example.
func (b *browserTab) setCookie(url, name, value string) {
	b.t.Helper()
	within(b, "set cookie "+name, func(ctx context.Context) (cdp.Empty, error) {
		return chromedp.CallBrowser(ctx, storage.SetCookies, storage.SetCookiesParams{
			Cookies:          []*network.CookieParam{{Name: name, Value: value, URL: url}},
			BrowserContextID: b.contextID,
		})
	})
}

// download clicks the element matching the CSS selector, which must start
// a download, waits for the download to complete and returns the file name
// the server suggested (Content-Disposition) and the file's bytes.
func (b *browserTab) download(selector string) (filename string, data []byte) {
	b.t.Helper()
	step := "download by " + selector
	ctx, cancel := context.WithTimeout(b.ctx, browserActionTimeout)
	defer cancel()
	// Subscribe before the click, so that no event is missed.
	begins := chromedp.BrowserEvents(ctx, browser.DownloadWillBegin)
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	b.click(selector)

	var guid string
	for ev, err := range begins {
		if err != nil {
			b.t.Fatalf("browser: %s: no download began: %v", step, err)
		}
		// Downloads of other tabs come through the same browser events;
		// the main frame of a tab has the tab's target id.
		if string(ev.FrameID) == b.targetID {
			guid, filename = ev.GUID, ev.SuggestedFilename
			break
		}
	}
	for ev, err := range progress {
		if err != nil {
			b.t.Fatalf("browser: %s: the download of %s did not complete: %v", step, filename, err)
		}
		if ev.GUID != guid {
			continue
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			b.t.Fatalf("browser: %s: the download of %s was canceled", step, filename)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			break
		}
	}
	// With allowAndName the browser names the file by its guid.
	data, err := os.ReadFile(filepath.Join(b.downloads, guid))
	if err != nil {
		b.t.Fatalf("browser: %s: %v", step, err)
	}
	return filename, data
}

// upload sets the file input matching the CSS selector to the file at
// path, as a person choosing it in the file picker would.
func (b *browserTab) upload(selector, path string) {
	b.t.Helper()
	b.do("choose "+path+" in "+selector, chromedp.SetUploadFiles(chromedp.CSS(selector), []string{path}))
}

// screenshot saves a PNG of the whole page, for documentation (the
// README's picture of the panel), creating path's directory.
func (b *browserTab) screenshot(path string) {
	b.t.Helper()
	png := run(b, "screenshot", chromedp.FullScreenshot(100))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// hasText reports whether the page's visible text contains s.
func (b *browserTab) hasText(s string) bool {
	b.t.Helper()
	return strings.Contains(b.text("body"), s)
}
