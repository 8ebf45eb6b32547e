package system_test

// The guards of a browser tab: a JavaScript dialog the test did not ask for
// fails it (so a hostile string that runs alert(1) cannot pass unseen), and
// console errors, uncaught exceptions and Content-Security-Policy violations
// are collected for assertNoConsoleErrors.

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// dialogExpectation is a dialog a test announced with answerDialog.
type dialogExpectation struct {
	kind    page.DialogType
	accept  bool
	message chan string // gets the dialog's message once it is answered
}

// guardDialogs answers every dialog of the tab: the one the test expects
// as the test said, any other by dismissing it and recording it, so that
// the next step (or the end of the test) fails. A dialog left open would
// block the page, and with it the step that caused it.
func (b *browserTab) guardDialogs(dialogs iter.Seq2[page.EventJavascriptDialogOpening, error]) {
	for ev, err := range dialogs {
		if err != nil {
			return // the tab is closed
		}
		b.mu.Lock()
		expected := b.expected
		accept := false
		if expected != nil && expected.kind == ev.Type {
			b.expected, accept = nil, expected.accept
		} else {
			expected = nil
			b.dialogs = append(b.dialogs, fmt.Sprintf("%s(%q) on %s", ev.Type, ev.Message, ev.URL))
		}
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(b.ctx, browserActionTimeout)
		_, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
		cancel()
		if err != nil {
			b.mu.Lock()
			b.dialogs = append(b.dialogs, fmt.Sprintf("a %s dialog that could not be closed: %v", ev.Type, err))
			b.mu.Unlock()
		}
		if expected != nil {
			expected.message <- ev.Message
		}
	}
}

// answerDialog runs trigger, which must open one dialog of the given kind
// (page.DialogTypeConfirm for a confirm()), answers it with accept, and
// returns the dialog's message. No dialog within the action timeout fails
// the test, as does a dialog of another kind.
func (b *browserTab) answerDialog(kind page.DialogType, accept bool, trigger func()) (message string) {
	b.t.Helper()
	expected := &dialogExpectation{kind: kind, accept: accept, message: make(chan string, 1)}
	b.mu.Lock()
	b.expected = expected
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if b.expected == expected {
			b.expected = nil
		}
		b.mu.Unlock()
	}()
	trigger()
	select {
	case message = <-expected.message:
	case <-time.After(browserActionTimeout):
		b.t.Fatalf("no %s dialog came within %v", kind, browserActionTimeout)
	}
	b.checkDialogs("answering a " + string(kind))
	return message
}

// checkDialogs fails the test at once if a dialog it did not expect opened
// since the last check; step says where the test was.
func (b *browserTab) checkDialogs(step string) {
	b.t.Helper()
	if unexpected := b.newDialogs(); unexpected != "" {
		b.t.Fatalf("unexpected JavaScript dialog by %s: %s", step, unexpected)
	}
}

// newDialogs returns the unexpected dialogs no check has reported yet.
func (b *browserTab) newDialogs() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	fresh := b.dialogs[b.reported:]
	b.reported = len(b.dialogs)
	return strings.Join(fresh, "; ")
}

// collectConsole keeps the console errors of the tab: console.error
// calls, uncaught exceptions and rejections, and the browser's own error
// entries, among them CSP violations ("Refused to execute inline
// script...") and failed loads. It also releases flushConsole's barriers.
func (b *browserTab) collectConsole(messages iter.Seq2[chromedp.ConsoleMessage, error]) {
	for m, err := range messages {
		if err != nil {
			return // the tab is closed
		}
		b.mu.Lock()
		if mark, ok := b.marks[m.Text]; ok && m.Type == chromedp.ConsoleDebug {
			delete(b.marks, m.Text)
			close(mark)
		} else if (m.Type == chromedp.ConsoleError || m.IsException() || m.Type == "assert") && !isFaviconMiss(m) {
			where := m.URL
			if m.Source != "" {
				where = m.Source + " " + where
			}
			b.console = append(b.console, fmt.Sprintf("%s: %s (%s)", m.Type, m.Text, strings.TrimSpace(where)))
		}
		b.mu.Unlock()
	}
}

// isFaviconMiss reports whether m is the failure of the browser's own
// request for /favicon.ico, which it makes for any page (a Markdown or
// JSON document too) unless the page names an icon: no page caused it.
func isFaviconMiss(m chromedp.ConsoleMessage) bool {
	u, err := url.Parse(m.URL)
	return m.Source == "network" && err == nil && u.Path == "/favicon.ico"
}

var consoleMarks atomic.Int64

// flushConsole waits until the console messages the page wrote so far have
// reached collectConsole: it writes a marker with console.debug and waits
// for it to come back through the same stream.
func (b *browserTab) flushConsole() {
	b.t.Helper()
	text := fmt.Sprintf("addrwatch-test-console-mark-%d", consoleMarks.Add(1))
	mark := make(chan struct{})
	b.mu.Lock()
	b.marks[text] = mark
	b.mu.Unlock()
	b.do("mark the console", chromedp.Evaluate[chromedp.Void](fmt.Sprintf("console.debug(%q)", text)))
	select {
	case <-mark:
	case <-time.After(browserActionTimeout):
		b.t.Fatalf("the console marker did not come back within %v", browserActionTimeout)
	}
}

// consoleErrors returns the console errors, exceptions and CSP violations
// the tab has seen so far.
func (b *browserTab) consoleErrors() []string {
	b.t.Helper()
	b.flushConsole()
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// assertNoConsoleErrors fails the test if the page logged an error, threw
// an uncaught exception or broke its Content-Security-Policy.
func (b *browserTab) assertNoConsoleErrors() {
	b.t.Helper()
	if errs := b.consoleErrors(); len(errs) > 0 {
		b.t.Errorf("the browser console has %d errors:\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
}

// expectConsoleError takes back one console error that contains want, as
// a step meant to cause it (a page answered 409 on purpose is a failed
// load to the browser); it fails the test when there is none.
func (b *browserTab) expectConsoleError(want string) {
	b.t.Helper()
	b.flushConsole()
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.console, func(e string) bool { return strings.Contains(e, want) })
	if i < 0 {
		b.t.Fatalf("the console has no error with %q: %q", want, b.console)
	}
	b.console = slices.Delete(b.console, i, i+1)
}

// forgiveConsoleError takes back one console error that contains want if
// there is one: for a step that may or may not cause it.
func (b *browserTab) forgiveConsoleError(want string) {
	b.t.Helper()
	b.flushConsole()
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.IndexFunc(b.console, func(e string) bool { return strings.Contains(e, want) }); i >= 0 {
		b.console = slices.Delete(b.console, i, i+1)
	}
}
