package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/site"
)

// Every page of the owner's site at a phone's width and a desktop's, in
// a real browser against the tour account (hostile names included):
// axe-core (pinned in testdata/axe-core, installed by make test-tools,
// injected from that file, never fetched) finds no violation, and the
// page does not scroll sideways, at 360 px either. The pages are the site's own GET routes
// (sitePages, checked against the router by TestSitePagesAreAllChecked),
// so a new page cannot be left out silently; and the pages of the states
// the tour account is not in (a new account, every limit reached), as
// other accounts (stateAccountsOn).

const (
	// phoneWidth and phoneHeight are a phone's viewport (an iPhone 12
	// to 15's CSS pixels); desktopWidth and desktopHeight a laptop's.
	phoneWidth, phoneHeight     = 390, 844
	desktopWidth, desktopHeight = 1280, 800
	// narrowWidth and narrowHeight are the narrowest phone the site is
	// made for (a Galaxy S's CSS pixels).
	narrowWidth, narrowHeight = 360, 740
)

// sitePage is one page the axe test opens: the route it is drawn by, its
// address for the tour account, whether it is seen signed out, and the
// status it answers with.
type sitePage struct {
	route     string
	url       func(a tourAccount) string
	signedOut bool
	status    int
	ready     func(b *browserTab) // waits for what the page draws with script
	state     string              // the state of another account's page (stateAccountsOn), for the table
}

// sitePages are the site's pages, one or more per GET route of the site.
var sitePages = []sitePage{
	{route: "/", url: fixed("/"), signedOut: true},
	{route: "(unknown path)", url: fixed("/no-such-page"), signedOut: true, status: http.StatusNotFound},
	{route: "(unknown path)", url: fixed("/portfolio/no/such/page"), status: http.StatusNotFound},
	{route: "(a form's address visited)", url: fixed("/sign-out"), signedOut: true, status: http.StatusMethodNotAllowed},
	{route: "(a form's address visited)", url: fixed("/access/keys"), status: http.StatusMethodNotAllowed},
	{route: "/portfolio", url: fixed("/portfolio")},
	{route: "/portfolio/cards/{card_id}", url: func(a tourAccount) string { return "/portfolio/cards/" + a.cards[3] }},
	{route: "/portfolio/cards/{card_id}/delete", url: func(a tourAccount) string { return "/portfolio/cards/" + a.cards[3] + "/delete" }},
	{route: "/spaces", url: fixed("/spaces")},
	{route: "/spaces/{space_id}", url: func(a tourAccount) string { return "/spaces/" + a.watchList }},
	{route: "/spaces/{space_id}/delete", url: func(a tourAccount) string { return "/spaces/" + a.watchList + "/delete" }},
	{route: "/spaces/{space_id}/sheet", url: func(a tourAccount) string { return "/spaces/" + a.ledger + "/sheet" }, ready: func(b *browserTab) {
		run(b, "wait for the Sheet", chromedp.Poll[bool](`performance.getEntriesByName("sheet-ready").length > 0`))
	}},
	{route: "/history", url: fixed("/history")},
	{route: "/history/cards/{card_id}", url: func(a tourAccount) string { return "/history/cards/" + a.cards[1] }},
	// History searched and filtered, past its end, and with values it
	// cannot search for (400, said on the page); the tour account links
	// to an explorer (set in TestSiteAxeInABrowser), so the links are in.
	{route: "/history", url: fixed("/history?q=a&direction=received&sort=amount-desc&offset=25")},
	{route: "/history", url: fixed("/history?from=2026-01-01&to=2026-12-31&sort=date-asc")},
	{route: "/history", url: fixed("/history?offset=100000")},
	{route: "/history", url: fixed("/history?from=2026-13-01&direction=up"), status: http.StatusBadRequest},
	{route: "/history/cards/{card_id}", url: func(a tourAccount) string { return "/history/cards/" + a.cards[1] + "?direction=sent&sort=amount-asc" }},
	{route: "/access", url: fixed("/access")},
	{route: "/access/keys/{key_id}/revoke", url: func(a tourAccount) string { return "/access/keys/" + a.readerID + "/revoke" }},
	{route: "/activity", url: fixed("/activity")},
	{route: "/activity", url: fixed("/activity?changes=1")},
	{route: "/centre", url: fixed("/centre")},
	{route: "/notifications", url: fixed("/notifications")},
	{route: "/notifications/deliveries", url: fixed("/notifications/deliveries")},
	{route: "/notifications/channels/{channel_id}/delete", url: func(a tourAccount) string { return "/notifications/channels/" + a.channel + "/delete" }},
	{route: "/notifications/rules/default", url: fixed("/notifications/rules/default")},
	{route: "/notifications/rules/cards/{card_id}", url: func(a tourAccount) string { return "/notifications/rules/cards/" + a.cards[1] }},
	{route: "/notifications/rules/spaces/{space_id}", url: func(a tourAccount) string { return "/notifications/rules/spaces/" + a.watchList }},
	{route: "/settings", url: fixed("/settings")},
	{route: "/settings/delete", url: fixed("/settings/delete")},
	{route: "/downloads", url: fixed("/downloads")},
	// The result pages of forms (post/redirect/get), opened again: each
	// says what it showed once is gone.
	{route: "/access/keys/created", url: fixed("/access/keys/created")},
	{route: "/settings/secret", url: fixed("/settings/secret")},
	{route: "/notifications/secret", url: fixed("/notifications/secret")},
	{route: "/notifications/tested", url: fixed("/notifications/tested")},
	{route: "/downloads/labels/report", url: fixed("/downloads/labels/report")},
}

// siteNonPages are the site's GET routes that answer no page: files,
// the live view's polls and the Sheet's data.
var siteNonPages = []string{
	"/downloads/labels.jsonl", "/downloads/history.csv", "/downloads/history/cards/{card_id}/transactions.csv",
	"/spaces/{space_id}/sheet.json", "/live", site.FaviconPath,
}

func fixed(path string) func(tourAccount) string { return func(tourAccount) string { return path } }

// routeRecorder is a site.Router that notes the GET routes.
type routeRecorder struct{ gets []string }

func (r *routeRecorder) GET(path string, _ fasthttp.RequestHandler) { r.gets = append(r.gets, path) }
func (r *routeRecorder) POST(string, fasthttp.RequestHandler)       {}

// TestSitePagesAreAllChecked: every GET route the site registers is a
// page of sitePages or a file of siteNonPages, and every entry there is
// still a route, so the axe test covers each page the site has.
func TestSitePagesAreAllChecked(t *testing.T) {
	rec := &routeRecorder{}
	site.New(site.Config{}).Register(rec)
	known := slices.Clone(siteNonPages)
	for _, p := range sitePages {
		known = append(known, p.route)
	}
	for _, route := range rec.gets {
		if strings.HasPrefix(route, site.AssetsPrefix) {
			continue
		}
		if !slices.Contains(known, route) {
			t.Errorf("the site serves GET %s, which the axe test does not open: add it to sitePages (or, if it is no page, to siteNonPages)", route)
		}
	}
	for _, route := range known {
		if !strings.HasPrefix(route, "(") && !slices.Contains(rec.gets, route) {
			t.Errorf("sitePages or siteNonPages lists %s, which the site no longer serves", route)
		}
	}
}

// axeScript is axe-core's script, read once from its npm install.
var axeScript = sync.OnceValues(func() (string, error) {
	data, err := os.ReadFile(filepath.Join("testdata", "axe-core", "node_modules", "axe-core", "axe.min.js"))
	return string(data), err
})

// axeViolation is one rule axe-core found broken on a page, with the
// first of the elements that break it.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Nodes  int    `json:"nodes"`
	First  string `json:"first"`
}

// axe runs axe-core on the page the tab shows (its default rules: WCAG 2.x
// A and AA and the best practices) and returns the violations.
func (b *browserTab) axe() []axeViolation {
	b.t.Helper()
	script, err := axeScript()
	if err != nil {
		b.t.Fatalf("axe-core is not installed (make test-tools installs it with npm ci in system_test/testdata/axe-core): %v", err)
	}
	// Evaluated through DevTools, the script is not subject to the
	// page's Content-Security-Policy, and the page's own scripts are not
	// changed. Injected once a page (void: a second call on the same
	// page must not return the axe object, which is too deep to send).
	b.do("inject axe-core", chromedp.Evaluate[chromedp.Void](`void (window.axe || (() => {`+script+"\n})())"))
	raw := run(b, "run axe-core", chromedp.Evaluate[string](`axe.run(document).then(r => JSON.stringify(r.violations.map(v => ({
	id: v.id, impact: v.impact || "", nodes: v.nodes.length,
	first: v.nodes[0].target.join(" ") + ": " + (v.nodes[0].failureSummary || "").replace(/\s+/g, " ").slice(0, 300)
}))))`, chromedp.EvalAwaitPromise))
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		b.t.Fatalf("axe-core's answer: %v: %s", err, raw)
	}
	return vs
}

// assertAxeClean fails the test on each axe-core violation of the page
// the tab shows: for the pages that answer a form (a new key, an import's
// report), which no GET route draws.
func (b *browserTab) assertAxeClean(page string) {
	b.t.Helper()
	for _, v := range b.axe() {
		b.t.Errorf("%s: axe-core: %s (%s) on %d elements; the first: %s", page, v.ID, v.Impact, v.Nodes, v.First)
	}
}

// viewport sets the tab's viewport (a desktop's: no mobile emulation, so
// a page wider than the screen shows as wider rather than zoomed out).
func (b *browserTab) viewport(width, height int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("set the viewport to %dx%d", width, height), chromedp.EmulateViewport(width, height))
}

// overflow is how many CSS pixels the page is wider than the window (0
// when it does not scroll sideways), and the widest element that sticks
// out, to say what to fix.
func (b *browserTab) overflow() (int, string) {
	b.t.Helper()
	v := run(b, "measure the page's width", chromedp.Evaluate[[]any](`(() => {
	const over = document.documentElement.scrollWidth - window.innerWidth;
	if (over <= 0) return [0, ""];
	let worst = null, right = 0;
	for (const el of document.body.querySelectorAll("*")) {
		const r = el.getBoundingClientRect();
		if (r.right > right && r.width > 0 && !el.closest(".table-scroll, .sheet-grid, pre")) { right = r.right; worst = el; }
	}
	return [over, worst ? worst.outerHTML.slice(0, 160) + " (right edge " + Math.round(right) + ")" : ""];
})()`))
	return int(v[0].(float64)), v[1].(string)
}

// TestSiteAxeInABrowser opens every page of sitePages at a phone's and a
// desktop's width and fails on any axe-core violation, any sideways
// scroll of the page, and any console error; then at 360 px, for
// sideways scroll and console errors. It logs the table of
// pages × widths for the closing note.
func TestSiteAxeInABrowser(t *testing.T) {
	t.Parallel()
	if _, err := axeScript(); err != nil {
		t.Fatalf("axe-core is not installed (make test-tools installs it with npm ci in system_test/testdata/axe-core): %v", err)
	}
	s := startServer(t, "--notify-allow-private")
	states := stateAccountsOn(t, s)
	a := tourAccountOn(t, s)
	expect(t, do(t, "PUT", s.URL+"/owner/v1/explorer", a.OwnerSecret, map[string]any{"explorer": "mempool.space"}), http.StatusOK, "")
	begin := time.Now()

	// nameOf is a page's line in the table; order lists the lines as
	// the widths' walks meet them.
	nameOf := func(p sitePage) string {
		name := p.url(a)
		if p.signedOut {
			name += " (signed out)"
		}
		if p.state != "" {
			name += " (" + p.state + ")"
		}
		return name
	}
	var order []string
	walk := func(visit func(p sitePage)) {
		for _, p := range sitePages {
			if p.signedOut {
				visit(p)
			}
		}
		for _, p := range sitePages {
			if !p.signedOut {
				visit(p)
			}
		}
		for _, st := range states {
			for _, p := range st.pages {
				p.state = st.label
				visit(p)
			}
		}
	}
	walk(func(p sitePage) { order = append(order, nameOf(p)) })

	type cell struct{ violations, overflow string }
	var mu sync.Mutex
	table := map[string]map[int64]cell{}
	check := func(t *testing.T, b *browserTab, p sitePage, width int64, withAxe bool) {
		t.Helper()
		path := p.url(a)
		want := p.status
		if want == 0 {
			want = http.StatusOK
		}
		if status := b.open(s.URL + path); int(status) != want {
			t.Errorf("%s at %d px: status %d, want %d", path, width, status, want)
		} else if want >= http.StatusBadRequest {
			b.expectConsoleError(path) // the browser logs the 400, 404 or 405 of the page itself
		}
		if p.ready != nil {
			p.ready(b)
		}
		var c cell
		var vs []axeViolation
		if withAxe {
			vs = b.axe()
		}
		for _, v := range vs {
			t.Errorf("%s at %d px: axe-core: %s (%s) on %d elements; the first: %s", path, width, v.ID, v.Impact, v.Nodes, v.First)
			c.violations += v.ID + " "
		}
		if over, worst := b.overflow(); over > 0 {
			t.Errorf("%s at %d px: the page is %d px wider than the window; the widest element: %s", path, width, over, worst)
			c.overflow = fmt.Sprintf("+%d px", over)
		}
		b.assertNoConsoleErrors()
		mu.Lock()
		if table[nameOf(p)] == nil {
			table[nameOf(p)] = map[int64]cell{}
		}
		table[nameOf(p)][width] = c
		mu.Unlock()
	}
	// axe at a phone's and a desktop's width; the narrowest phone the
	// site is made for (360 px) is checked for sideways scroll only. The
	// widths are walked one after the other, each in tabs of its own: as
	// parallel subtests they would wait for a free slot behind every
	// other test of the package (go test starts them only when this
	// function returns), and this test would end last.
	t.Run("widths", func(t *testing.T) {
		for _, size := range []struct {
			width, height int64
			axe           bool
		}{{phoneWidth, phoneHeight, true}, {desktopWidth, desktopHeight, true}, {narrowWidth, narrowHeight, false}} {
			t.Run(fmt.Sprintf("%dx%d", size.width, size.height), func(t *testing.T) {
				// A tab of its own: it starts signed out.
				b := newBrowser(t)
				b.viewport(size.width, size.height)
				signedIn := false
				var stateTab *browserTab
				var stateOf string
				walk(func(p sitePage) {
					switch {
					case p.state != "":
						// The states the tour account is not in, each in a
						// tab signed in as its own account.
						if p.state != stateOf {
							stateOf = p.state
							for _, st := range states {
								if st.label == p.state {
									stateTab = newBrowser(t)
									stateTab.viewport(size.width, size.height)
									siteSignIn(t, stateTab, st.owner, st.login)
								}
							}
						}
						check(t, stateTab, p, size.width, size.axe)
					case !p.signedOut && !signedIn:
						siteSignIn(t, b, a.siteOwner, tourLogin)
						signedIn = true
						fallthrough
					default:
						check(t, b, p, size.width, size.axe)
					}
				})
			})
		}
	})

	var out strings.Builder
	fmt.Fprintf(&out, "axe-core violations and sideways scroll, %d pages in %v:\n", len(order), time.Since(begin).Round(time.Second))
	fmt.Fprintf(&out, "  %-58s | %-24s | %-24s | %s\n", "page", "390x844", "1280x800", "360x740 (scroll only)")
	for _, name := range order {
		say := func(c cell) string {
			if c.violations == "" && c.overflow == "" {
				return "0 violations, no scroll"
			}
			return strings.TrimSpace(c.violations + " " + c.overflow)
		}
		narrow := "no scroll"
		if o := table[name][narrowWidth].overflow; o != "" {
			narrow = o
		}
		fmt.Fprintf(&out, "  %-58s | %-24s | %-24s | %s\n", name, say(table[name][phoneWidth]), say(table[name][desktopWidth]), narrow)
	}
	t.Log(out.String())
}

// TestBrowserAxeFindsViolations: the injected axe-core does report what
// it must (an image without a text alternative, pale grey text on white, a
// page too wide for the window), so the axe test's zero means something.
func TestBrowserAxeFindsViolations(t *testing.T) {
	t.Parallel()
	// No policy: the strict one would refuse the inline styles.
	pages := servePagesWithCSP(t, "", map[string]string{
		"/bad": `<!doctype html><html lang=en><title>bad</title><main><h1>Bad</h1><img src=/x.png>
<p style="color:#ccc;background:#fff">pale grey on white</p><div style="width:900px">wide</div></main>`,
		"/x.png": "",
	})
	b := newBrowser(t)
	b.viewport(phoneWidth, phoneHeight)
	b.open(pages.URL + "/bad")
	var ids []string
	for _, v := range b.axe() {
		ids = append(ids, v.ID)
	}
	for _, want := range []string{"image-alt", "color-contrast"} {
		if !slices.Contains(ids, want) {
			t.Errorf("axe-core did not report %s: %q", want, ids)
		}
	}
	if over, worst := b.overflow(); over < 900-phoneWidth || !strings.Contains(worst, "900px") {
		t.Errorf("the page overflows by %d px (%s), want at least %d px, by the wide div", over, worst, 900-phoneWidth)
	}
}
