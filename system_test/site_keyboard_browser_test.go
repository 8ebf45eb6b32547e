package system_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The owner's main flows from the keyboard alone, as key events in a real
// browser: Tab to move, typing, arrow keys in menus and radio groups,
// Enter to submit. No click, no script that sets a value: sign in, add a
// card, grant it (the arrow keys move through the levels without saving
// the first one passed), create a key, import labels (the file itself is
// chosen in the browser's own file picker, which the test stands in for),
// and the phone's menu. The pages that answer those forms (no GET route
// draws them) are checked with axe-core too.

// tabsMax bounds the Tab presses that look for one control: more than
// any page of the site has before its last control.
const tabsMax = 120

// focused describes the element that has the keyboard focus.
func (b *browserTab) focused() string {
	b.t.Helper()
	return run(b, "read the focus", chromedp.Evaluate[string](`(() => {
	const e = document.activeElement;
	return e ? e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + (e.textContent || e.value || "").trim().slice(0, 40) : "";
})()`))
}

// tabTo presses Tab until the focus is on the element matching selector.
func (b *browserTab) tabTo(selector string) {
	b.t.Helper()
	sel, _ := json.Marshal(selector)
	at := fmt.Sprintf(`document.activeElement !== null && document.activeElement.matches(%s)`, sel)
	var path []string
	for range tabsMax {
		if run(b, "is the focus on "+selector, chromedp.Evaluate[bool](at)) {
			return
		}
		b.press(kb.Tab)
		path = append(path, b.focused())
	}
	b.t.Fatalf("Tab never reached %s; the focus went through %q", selector, path)
}

// press sends keys to the element with the focus, as key events.
func (b *browserTab) press(keys string) {
	b.t.Helper()
	b.do(fmt.Sprintf("press %q", keys), chromedp.KeyEvent(keys))
}

// pressLoading sends keys that load a page (Enter on a button or a
// link), waits for it and returns its status.
func (b *browserTab) pressLoading(keys string) int64 {
	b.t.Helper()
	step := fmt.Sprintf("press %q and wait for the page", keys)
	resp := within(b, step, func(ctx context.Context) (*network.Response, error) {
		return chromedp.RunResponse(ctx, chromedp.KeyEvent(keys))
	})
	b.shoot(step)
	return resp.Status
}

func TestSiteKeyboardOnlyInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteAccount(t, s, "base", "keys.owner")
	b := newBrowser(t)

	// Sign in.
	b.open(s.URL + "/")
	b.tabTo("#login")
	b.press(o.Login)
	b.press(kb.Tab)
	b.press(o.Password)
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !b.hasText("Sign out") {
		t.Fatalf("signing in from the keyboard: %d at %s", status, b.location())
	}

	// Add a card.
	b.open(s.URL + "/portfolio")
	address := owAddress(980)
	b.tabTo("#card-address")
	b.press(address)
	b.press(kb.Tab)
	b.press("Typed, not clicked")
	b.tabTo("#add-card button[type=submit]")
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Account card added") {
		t.Fatalf("adding a card from the keyboard: %d at %s", status, b.location())
	}
	var card string
	for _, c := range owCards(t, s, o.OwnerSecret) {
		if c["address"] == address && c["name"] == "Typed, not clicked" {
			card = c["id"].(string)
		}
	}
	if card == "" {
		t.Fatalf("the card typed in is not in the Portfolio: %v", owCards(t, s, o.OwnerSecret))
	}

	// Grant it: the arrow keys pass read on the way to write, and only
	// Enter saves.
	b.open(s.URL + "/access")
	grant := "#grant-" + card
	b.tabTo(grant)
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.keyboardTestMark = true`))
	b.press(kb.ArrowDown)
	time.Sleep(300 * time.Millisecond) // room for a submit the key would wrongly start
	if b.value(grant) != "read" {
		t.Fatalf("ArrowDown on the grant menu picked %q, want read", b.value(grant))
	}
	b.press(kb.ArrowDown)
	time.Sleep(300 * time.Millisecond)
	stayed := run(b, "is the page the same", chromedp.Evaluate[bool](`window.keyboardTestMark === true`))
	if !stayed || b.value(grant) != "write" || !strings.HasPrefix(b.focused(), "select"+grant) {
		t.Fatalf("after two arrow keys: the page stayed %v, the menu reads %q, the focus is on %q", stayed, b.value(grant), b.focused())
	}
	if level := owGrantOf(t, s, o, card); level != "none" {
		t.Fatalf("the arrow keys saved the grant %q", level)
	}
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Grant saved") {
		t.Fatalf("Enter on the grant menu: %d", status)
	}
	if level := owGrantOf(t, s, o, card); level != "write" {
		t.Fatalf("Enter saved the grant %q, want write", level)
	}

	// Create a write key: the capability is a radio group, moved through
	// with an arrow key.
	b.tabTo("#key-name")
	b.press("keyboard agent")
	b.tabTo("#cap-read")
	b.press(kb.ArrowDown)
	b.tabTo(`form[action="/access/keys"] button[type=submit]`)
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.Contains(b.text("#new-key-heading"), "keyboard agent") {
		t.Fatalf("creating a key from the keyboard: %d", status)
	}
	if key := b.value("#new-key"); !strings.Contains(owMe(t, s, key)["capability"].(string), "write") {
		t.Fatalf("the key made from the keyboard: %v", owMe(t, s, key))
	}
	b.assertAxeClean("the new key page")

	// Import labels: the file is chosen in the browser's file picker (the
	// test sets it as the picker would), the rest from the keyboard.
	file := filepath.Join(t.TempDir(), "labels.jsonl")
	if err := os.WriteFile(file, []byte(`{"type":"addr","ref":"`+address+`","label":"Renamed by a wallet"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.open(s.URL + "/downloads")
	b.tabTo("#labels-file")
	b.upload("#labels-file", file)
	b.tabTo(`form[action="/downloads/labels"] button`)
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.Contains(b.text("p.lead"), "1 changed") {
		t.Fatalf("previewing the label import from the keyboard: %d, %q", status, b.text("main"))
	}
	b.assertAxeClean("the label import's preview")
	b.tabTo(`#confirm-import button[type=submit]`)
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.Contains(b.text("p.lead"), "1 changed") {
		t.Fatalf("importing labels from the keyboard: %d, %q", status, b.text("main"))
	}
	b.assertAxeClean("the label import's report")

	// The phone's menu: Tab to it, Enter opens it, Tab on to a section,
	// Enter follows it.
	b.viewport(phoneWidth, phoneHeight)
	b.open(s.URL + "/portfolio")
	if run(b, "is the menu shown", chromedp.Evaluate[bool](`document.querySelector("header.top nav").checkVisibility()`)) {
		t.Fatal("at a phone's width the menu is open before it is asked for")
	}
	b.tabTo("details.menu > summary")
	b.press(kb.Enter)
	b.tabTo(`header.top nav a[href="/history"]`)
	if status := b.pressLoading(kb.Enter); status != http.StatusOK || !strings.HasSuffix(b.location(), "/history") {
		t.Fatalf("the phone's menu from the keyboard: %d at %s", status, b.location())
	}
	b.assertNoConsoleErrors()
}

// owGrantOf is the grant on an Account card, as the owner API says.
func owGrantOf(t *testing.T, s *server, o siteOwner, card string) string {
	t.Helper()
	for _, c := range owCards(t, s, o.OwnerSecret) {
		if c["id"] == card {
			return c["grant"].(string)
		}
	}
	t.Fatalf("no card %s", card)
	return ""
}
