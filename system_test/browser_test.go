package system_test

// The browser harness: the site's end-to-end tests drive a real headless
// Chromium (Debian's chromium package) through chromedp. One browser process
// serves the whole package run, because a chromium start costs about two
// seconds of a 2-core machine; each test gets a tab in a browser context of
// its own (its own cookies, storage and downloads), torn down when the test
// ends. The page helpers are in browser_actions_test.go.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const (
	// chromiumEnv names a Chrome or Chromium binary to use instead of the
	// chromium (or chromium-browser) found on PATH.
	chromiumEnv = "ADDRWATCH_CHROMIUM"
	// screenshotsEnv names the directory that failing browser tests save
	// their screenshots under (one subdirectory per test).
	screenshotsEnv = "ADDRWATCH_SCREENSHOTS"

	// browserStartTimeout bounds the start of the shared chromium process
	// and the opening of a test's tab. A start takes about 2 s on the
	// 2-core machine; the bound leaves room for a suite that runs server
	// processes and the race detector beside it.
	browserStartTimeout = 60 * time.Second
	// browserActionTimeout bounds every single browser action (a
	// navigation, a wait for a selector, a click, a download).
	browserActionTimeout = 20 * time.Second
	// browserViewport is the size of every tab, so that screenshots have
	// the same shape on every machine.
	browserViewportWidth, browserViewportHeight = 1280, 900
)

// sharedBrowser is the one chromium process of a package run. It starts
// with the first browser test and stops in TestMain (stopSharedBrowser).
var sharedBrowser struct {
	mu      sync.Mutex
	ctx     context.Context // chromedp's context of the browser; nil until started
	cancel  context.CancelFunc
	err     error       // why the start failed; later tests report it again
	output  *syncBuffer // chromium's stdout and stderr, for a failure message
	started time.Duration
}

// browserTab is one test's tab. Its methods fail the test (t.Fatalf) when
// an action fails or times out, so a test reads as a list of steps.
type browserTab struct {
	t         testing.TB
	ctx       context.Context // the tab's chromedp context
	contextID cdp.BrowserContextID
	targetID  string
	downloads string // where this tab's downloads land

	mu       sync.Mutex
	dialogs  []string                 // unexpected dialogs; those from index reported on are news
	expected *dialogExpectation       // the dialog the test said comes next
	console  []string                 // console errors, exceptions and CSP violations
	marks    map[string]chan struct{} // console barriers (flushConsole)
	steps    []pageShot               // a screenshot of each page state, saved on failure
	reported int                      // dialogs already reported by a check
}

// pageShot is a screenshot taken after a step, kept in memory until the
// test ends and written only if it failed.
type pageShot struct {
	step string
	png  []byte
}

// newBrowser gives the test a fresh tab in the shared headless chromium,
// with the dialog and console guards on. The tab, its cookies and its
// downloads go away when the test ends; if the test failed, the
// screenshots of every page it visited are saved first (screenshotDir).
//
// Without chromium the test fails, saying how to install it: the browser
// tests never skip silently. Under -short they skip, like the other tests
// that start processes.
func newBrowser(t testing.TB) *browserTab {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	root := startSharedBrowser(t)

	// The tab's own browser context isolates its cookies from the tabs of
	// tests that run in parallel.
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	b := &browserTab{t: t, ctx: ctx, marks: map[string]chan struct{}{}}
	t.Cleanup(func() {
		// Cancel closes the tab and disposes of its browser context.
		cancel()
		if b.downloads != "" {
			os.RemoveAll(b.downloads)
		}
	})
	// The first Run creates the tab and binds it to ctx, so it must run on
	// ctx itself and not on a context with a deadline; within the bound.
	if err := withinTimeout(browserStartTimeout, cancel, func() error { return chromedp.Do(ctx) }); err != nil {
		t.Fatalf("open a browser tab: %v\nchromium's last output:\n%s", err, lastLines(sharedBrowser.output.String(), 20))
	}
	c := chromedp.FromContext(ctx)
	b.contextID, b.targetID = c.BrowserContextID, string(c.Target.TargetID)

	go b.guardDialogs(chromedp.Events(ctx, page.JavascriptDialogOpening))
	go b.collectConsole(chromedp.Console(ctx))
	b.do("set the viewport", chromedp.EmulateViewport(browserViewportWidth, browserViewportHeight))
	b.allowDownloads()

	// Registered last, so it runs first: the tab is still open.
	t.Cleanup(b.finish)
	return b
}

// startSharedBrowser starts the package's chromium on the first call and
// returns its context; a start that failed fails every later caller too.
func startSharedBrowser(t testing.TB) context.Context {
	t.Helper()
	sharedBrowser.mu.Lock()
	defer sharedBrowser.mu.Unlock()
	if sharedBrowser.ctx != nil {
		return sharedBrowser.ctx
	}
	if sharedBrowser.err != nil {
		t.Fatal(sharedBrowser.err)
	}
	path, err := findChromium()
	if err != nil {
		sharedBrowser.err = err
		t.Fatal(err)
	}
	output := &syncBuffer{}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.CombinedOutput(output),
		// --headless=new is Chrome's one headless mode today; say so
		// rather than rely on the default of a given version.
		chromedp.Flag("headless", "new"),
		chromedp.Flag("disable-gpu", true),
		// /dev/shm is 64 MB in a default container; chromium crashes
		// when it fills, so it keeps shared memory in /tmp instead.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.WindowSize(browserViewportWidth, browserViewportHeight),
		// No user-data-dir flag: chromedp then makes a fresh temporary
		// one and removes it when the browser stops.
	}
	// The sandbox needs user namespaces that root in a container lacks;
	// as any other user it stays on.
	opts = append(opts, chromedp.Flag("no-sandbox", os.Geteuid() == 0))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], opts...)...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	cancel := func() { cancelBrowser(); cancelAlloc() }

	begin := time.Now()
	if err := withinTimeout(browserStartTimeout, cancel, func() error { return chromedp.Do(ctx) }); err != nil {
		cancel()
		sharedBrowser.err = fmt.Errorf("start %s: %v\n%s", path, err, lastLines(output.String(), 20))
		t.Fatal(sharedBrowser.err)
	}
	sharedBrowser.ctx, sharedBrowser.cancel, sharedBrowser.output = ctx, cancel, output
	sharedBrowser.started = time.Since(begin)
	t.Logf("started %s in %v (shared by the package's browser tests)", path, sharedBrowser.started.Round(time.Millisecond))
	return ctx
}

// stopSharedBrowser stops the package's chromium, if a test started it,
// and removes its profile directory. TestMain calls it after the tests.
func stopSharedBrowser() {
	sharedBrowser.mu.Lock()
	defer sharedBrowser.mu.Unlock()
	if sharedBrowser.cancel != nil {
		sharedBrowser.cancel()
		sharedBrowser.ctx, sharedBrowser.cancel = nil, nil
	}
}

// findChromium returns the browser to run: $ADDRWATCH_CHROMIUM, or else
// chromium or chromium-browser on PATH.
func findChromium() (string, error) {
	if path := os.Getenv(chromiumEnv); path != "" {
		if _, err := exec.LookPath(path); err != nil {
			return "", fmt.Errorf("%s=%s is not an executable browser: %v", chromiumEnv, path, err)
		}
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errors.New("the browser tests need Chromium and there is no chromium on PATH: " +
		"run `apt-get install chromium` (.ci/run does), or set " + chromiumEnv + " to a Chrome or Chromium binary")
}

// withinTimeout runs start, which must run on a context without a deadline
// (chromedp binds a browser's or a tab's life to the context of its first
// Run), and gives up after d, calling cancel to end what start began.
func withinTimeout(d time.Duration, cancel func(), start func() error) error {
	done := make(chan error, 1)
	go func() { done <- start() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		cancel()
		<-done
		return fmt.Errorf("no answer within %v", d)
	}
}

// allowDownloads sends the tab's downloads to a directory of its own,
// with download events on (download reads them).
func (b *browserTab) allowDownloads() {
	b.t.Helper()
	dir, err := os.MkdirTemp("", "addrwatch-downloads-")
	if err != nil {
		b.t.Fatal(err)
	}
	b.downloads = dir
	within(b, "allow downloads", func(ctx context.Context) (cdp.Empty, error) {
		return chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior:         browser.SetDownloadBehaviorBehaviorAllowAndName,
			BrowserContextID: b.contextID,
			DownloadPath:     dir,
			EventsEnabled:    new(true),
		})
	})
}

// finish runs when the test ends, with the tab still open: it reports the
// dialogs no step reported yet and, when the test failed, saves the
// screenshots and logs the console errors.
func (b *browserTab) finish() {
	if unexpected := b.newDialogs(); unexpected != "" {
		b.t.Errorf("unexpected JavaScript dialog by the end of the test: %s", unexpected)
	}
	if !b.t.Failed() {
		return
	}
	b.saveScreenshots()
	b.mu.Lock()
	errs := append([]string(nil), b.console...)
	b.mu.Unlock()
	if len(errs) > 0 {
		b.t.Logf("browser console errors:\n  %s", strings.Join(errs, "\n  "))
	}
}

// screenshotDir is where a failing test's screenshots go: a directory that
// outlives the test, named after it, under $ADDRWATCH_SCREENSHOTS or the
// system's temporary directory.
func screenshotDir(testName string) string {
	base := os.Getenv(screenshotsEnv)
	if base == "" {
		base = filepath.Join(os.TempDir(), "addrwatch-screenshots")
	}
	return filepath.Join(base, fileSafe(testName))
}

// saveScreenshots writes the screenshot of each page state the test went
// through, and one of the page as it is now, and logs where they are.
func (b *browserTab) saveScreenshots() {
	dir := screenshotDir(b.t.Name())
	// A directory left by an earlier run would mix old pages in.
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("cannot save screenshots: %v", err)
		return
	}
	b.mu.Lock()
	steps := append([]pageShot(nil), b.steps...)
	b.mu.Unlock()
	for i, s := range steps {
		name := fmt.Sprintf("%02d-%s.png", i+1, fileSafe(s.step))
		if err := os.WriteFile(filepath.Join(dir, name), s.png, 0o644); err != nil {
			b.t.Logf("cannot save a screenshot: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(b.ctx, browserActionTimeout)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		b.t.Logf("no screenshot of the final page: %v", err)
	} else if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-final.png", len(steps)+1)), png, 0o644); err != nil {
		b.t.Logf("cannot save a screenshot: %v", err)
	}
	b.t.Logf("screenshots of the pages this test visited: %s", dir)
}

// shoot keeps a full-page screenshot of the page a step loaded, for
// saveScreenshots. A failed capture is not the test's
// failure, so it is only logged.
func (b *browserTab) shoot(step string) {
	ctx, cancel := context.WithTimeout(b.ctx, browserActionTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("no screenshot after %s: %v", step, err)
		return
	}
	b.mu.Lock()
	b.steps = append(b.steps, pageShot{step: step, png: png})
	b.mu.Unlock()
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileSafe turns a test or step name into a file name.
func fileSafe(name string) string {
	name = strings.Trim(unsafeFileChars.ReplaceAllString(name, "-"), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	return name
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
