//go:build unix

package system_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/addrwatch/addrwatch/notify/send"
	"github.com/addrwatch/addrwatch/notify/send/smtptest"
)

// The owner's notifications on the site, in a real browser against the
// real server over loopback, on a btcd regtest chain: each kind of
// channel made through the form (a webhook's secret shown once, not
// after), a rule set (a bad amount said beside its field), a payment to
// a watched card delivered to an httptest receiver and listed in the
// delivery log, "send again" delivering it again with the same event ID,
// "send a test", the notification centre following a block without a
// reload, and each page usable at a phone's width. Hostile names (a
// script, an image with onerror, RTL text, a very long name) are text
// on every page: the dialog guard fails the test on any alert. With
// ADDRWATCH_TOUR_DIR set it saves the README's pictures of these pages.
func TestSiteNotificationsInABrowser(t *testing.T) {
	t.Parallel()
	node := regtest.Own(t) // it mines: a chain no other test sees
	rpc := node.RPC()
	cert := filepath.Join(t.TempDir(), "rpc.cert")
	if err := os.WriteFile(cert, rpc.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	mail := smtptest.New(t, false)
	s := startServer(t, "--network", "regtest", "--chain", "btcd:"+rpc.URL().String(), "--chain-cert", cert, "--chain-poll", "200ms",
		"--notify-allow-private", "--smtp-relay", mail.Addr, "--smtp-from", "addrwatch <alerts@example.com>", "--smtp-plaintext")
	hook := newReceiver(t, nil)
	ntfy := newReceiver(t, nil)

	o := siteAccount(t, s, "extended", "notify.owner")
	payee, err := node.NewKey(regtest.P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	longName := strings.Repeat("A very long card name ", 4)
	card := owString(t, owOwnerCard(t, s, o.OwnerSecret, payee.Address, siteHostileImg), "id")
	for _, name := range []string{longName, "ארנק חיסכון"} {
		other, err := node.NewKey(regtest.P2WPKH)
		if err != nil {
			t.Fatal(err)
		}
		owOwnerCard(t, s, o.OwnerSecret, other.Address, name)
	}

	b := newBrowser(t)
	siteSignIn(t, b, o, "notify.owner")
	dir := os.Getenv("ADDRWATCH_TOUR_DIR")

	// Channels, each through the form.
	b.open(s.URL + "/notifications")
	b.assertUsable("the notifications page")
	addChannel := func(kind, name, where string) int64 {
		t.Helper()
		b.click("#kind-" + kind)
		b.fill("Name", name)
		b.fill("Where: the receiver's URL (webhook), the topic's URL (ntfy) or an email address", where)
		return b.submit(`#add-channel button[type=submit]`)
	}
	if status := addChannel("webhook", siteHostileScript, hook.URL+"/hook/t0ken"); status != http.StatusOK {
		t.Fatalf("adding the webhook: %d", status)
	}
	secret := b.value("#webhook-secret")
	if !strings.HasPrefix(secret, "whsec_") || !b.hasText(siteHostileScript) {
		t.Fatalf("the webhook's secret %q; page %q", secret, b.text("main"))
	}
	b.open(s.URL + "/notifications")
	if html := run(b, "read the page", chromedp.Evaluate[string](`document.documentElement.outerHTML`)); strings.Contains(html, secret) || strings.Contains(html, "t0ken") {
		t.Fatal("the secret or the URL's token is on the page after it was shown")
	}
	if status := addChannel("ntfy", "טלפון "+siteHostileImg, ntfy.URL+"/topic"); status != http.StatusOK || !b.hasText("Channel added") {
		t.Fatalf("adding ntfy: %d %q", status, b.text("main"))
	}
	if status := addChannel("email", longName, "owner@example.com"); status != http.StatusOK {
		t.Fatalf("adding email: %d", status)
	}
	for _, name := range []string{siteHostileScript, "טלפון " + siteHostileImg, strings.TrimSpace(longName)} {
		if !strings.Contains(b.text("#channels"), name) {
			t.Errorf("the channels table lacks %q: %q", name, b.text("#channels"))
		}
	}
	if rows := b.texts("#channels tbody tr"); len(rows) != 3 {
		t.Fatalf("%d channels listed", len(rows))
	}

	// Send a test to the webhook: it arrives, signed, and the page says so.
	if status := b.submit(`#channels tbody tr:first-child form[action$="/test"] button`); status != http.StatusOK || !strings.Contains(b.text(".notice"), "Test delivered") {
		t.Fatalf("send a test: %d %q", status, b.text("main"))
	}
	atLeast := func(n int) func([]hookRequest) bool { return func(got []hookRequest) bool { return len(got) >= n } }
	if got := hook.waitRequests(t, s, "the test", 30*time.Second, atLeast(1)); signedWith(got[0], secret) != nil {
		t.Errorf("the test is not signed with the secret shown: %v", signedWith(got[0], secret))
	}

	// The default rule: a bad amount is said beside its field; then a
	// good rule.
	b.open(s.URL + "/notifications/rules/default")
	b.assertUsable("the rule page")
	b.fill("Minimum amount, in BTC", "0.123456789")
	if status := b.submit(`#rule-form button[type=submit]`); status != http.StatusUnprocessableEntity || !strings.Contains(b.text("#rule-min-error"), "at most 8 decimals") {
		t.Fatalf("a bad amount: %d", status)
	}
	b.expectConsoleError("status of 422")
	b.fill("Minimum amount, in BTC", "0.0001")
	b.fill("Deep at (blocks)", "3")
	b.click("#event-tx_dropped")
	if status := b.submit(`#rule-form button[type=submit]`); status != http.StatusOK || !b.hasText("Rule saved") {
		t.Fatalf("saving the rule: %d %q", status, b.text("main"))
	}
	def := owObject(t, do(t, "GET", s.URL+"/owner/v1/notifications/rules", o.OwnerSecret, nil).JSON(t), "default")
	if def["min_amount_sat"] != float64(10_000) || def["depth"] != float64(3) || len(def["events"].([]any)) != 5 {
		t.Errorf("the default rule %v", def)
	}
	// The card's rule page is reachable from its page.
	b.open(s.URL + "/portfolio/cards/" + card)
	if status := b.submit("#card-rule"); status != http.StatusOK || !b.hasText("the default rule") || !b.hasText(siteHostileImg) {
		t.Fatalf("the card's rule page: %d %q", status, b.text("main"))
	}

	// A payment: delivered to the webhook and to ntfy, and in the log.
	b.open(s.URL + "/centre")
	mark := func() { b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.addrwatchTestMark = true`)) }
	mark()
	txid, err := node.Pay(payee.Address, 50_000)
	if err != nil {
		t.Fatal(err)
	}
	seen := hook.waitRequests(t, s, "tx_seen", 30*time.Second, atLeast(2))[1]
	if seen.event.Type != "tx_seen" || seen.event.TxID != txid || signedWith(seen, secret) != nil {
		t.Fatalf("the webhook got %s of %s (%v)", seen.event.Type, seen.event.TxID, signedWith(seen, secret))
	}
	ntfy.waitRequests(t, s, "ntfy", 30*time.Second, atLeast(1))
	if messages := waitMessages(t, s, mail, 1); messages[0].To != "owner@example.com" {
		t.Errorf("the email went to %q", messages[0].To)
	}
	b.waitText("#live-centre", txid[:8])
	if !strings.Contains(b.text("#live-centre"), siteHostileImg) || !strings.Contains(b.text("#live-centre"), "0.00050000 BTC") {
		t.Errorf("the centre: %q", b.text("#live-centre"))
	}
	// A block: the centre follows without a reload.
	if _, err := node.Mine(1); err != nil {
		t.Fatal(err)
	}
	b.waitText("#live-centre tbody tr:first-child", "Confirmed")
	if !run(b, "check the mark", chromedp.Evaluate[bool](`window.addrwatchTestMark === true`)) {
		t.Fatal("the centre was reloaded to show the block")
	}
	hook.waitRequests(t, s, "tx_confirmed", 30*time.Second, atLeast(3))
	if dir != "" {
		b.screenshot(filepath.Join(dir, "site-notification-centre.png"))
	}

	// The delivery log, and "send again": the same event ID once more.
	b.open(s.URL + "/notifications/deliveries")
	b.assertUsable("the delivery log")
	log := b.text("#deliveries")
	hookID := owString(t, do(t, "GET", s.URL+"/owner/v1/notifications/channels", o.OwnerSecret, nil).JSON(t)["channels"].([]any)[0].(map[string]any), "id")
	for _, want := range []string{"Seen", "Confirmed", siteHostileImg, "0.00050000 BTC", "Delivered (200)", siteHostileScript} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q: %q", want, log)
		}
	}
	// The webhook's lines only: its newest is the confirmation.
	b.fill("Channel", hookID)
	b.submit(`#deliveries-filter button`)
	before := len(hook.requests())
	confirmed := hook.requests()[2]
	if status := b.submit(`#deliveries tbody tr:first-child form[action$="/redeliver"] button`); status != http.StatusOK || !b.hasText("pending again") {
		t.Fatalf("send again: %d %q", status, b.text("main"))
	}
	if again := hook.waitRequests(t, s, "send again", 30*time.Second, atLeast(before+1))[before]; confirmed.event.Type != "tx_confirmed" || again.event.ID != confirmed.event.ID || signedWith(again, secret) != nil {
		t.Errorf("sent again: %s %s, want the confirmation's %s %s again", again.event.Type, again.event.ID, confirmed.event.Type, confirmed.event.ID)
	}
	b.open(s.URL + "/notifications/deliveries")
	if dir != "" {
		b.screenshot(filepath.Join(dir, "site-deliveries.png"))
	}
	b.open(s.URL + "/notifications")
	if dir != "" {
		b.screenshot(filepath.Join(dir, "site-notifications.png"))
	}

	// The Portfolio's last activity.
	b.open(s.URL + "/portfolio")
	if row := b.text("#row-" + card); !strings.Contains(row, "Confirmed") {
		t.Errorf("the card's row: %q", row)
	}

	// A phone's width: every page fits (wide tables scroll inside their
	// own box).
	b.do("a phone's viewport", chromedp.EmulateViewport(375, 800))
	for _, path := range []string{"/notifications", "/notifications/deliveries", "/centre", "/notifications/rules/default", "/portfolio"} {
		b.open(s.URL + path)
		if over := run(b, "measure "+path, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); over > 0 {
			wide := run(b, "find the wide", chromedp.Evaluate[[]string](`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && (!e.closest(".table-scroll") || e.classList.contains("table-scroll"))).slice(0, 6).map(e => e.tagName + "." + e.className + "#" + e.id + " " + Math.round(e.getBoundingClientRect().right) + " " + getComputedStyle(e).overflowX + " " + getComputedStyle(e).display)`))
			t.Errorf("%s is %d px wider than a 375 px screen: %q", path, over, wide)
		}
	}
	// On a phone the menu is folded, so its button carries the centre's
	// count of new chain events (here the payment's two: seen and
	// confirmed, as if the centre had never been opened).
	b.setCookie(s.URL, "addrwatch_seen", o.ID+".0")
	b.open(s.URL + "/portfolio")
	if n := b.text("header.top summary .count"); !strings.HasPrefix(n, "2") || !strings.Contains(n, "new chain events") {
		t.Errorf("the folded menu's count reads %q, want the 2 new chain events", n)
	}
	b.assertNoConsoleErrors()
}

// signedWith checks a receiver's request's signature with secret.
func signedWith(r hookRequest, secret string) error {
	return send.Verify(secret, r.header.Get("Addrwatch-Signature"), r.body, time.Now(), 0)
}
