package system_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The owner's site in a real headless Chromium against the real server:
// the whole journey of an owner (sign in, keys, grants, plan, secret,
// downloads, sign out), hostile strings that must stay text, and forged
// requests that must reach nothing.

// Hostile strings the site must render as text. With a strict CSP an
// injected handler would not run but would log a CSP violation, so the
// tests check the console as well as for dialogs.
const (
	siteHostileScript = `<script>alert(1)</script>`
	siteHostileImg    = `"><img src=x onerror=alert(1)>`
	siteHostileNote   = `<img src=x onerror=alert(2)>`
)

// siteOwner is an account with a login, two Account cards with hostile
// names and a hostile note on a transaction of the first card.
type siteOwner struct {
	account
	Login   string
	cards   []string // card ids
	noteTx  string
	siteURL string
}

func siteSetUp(t *testing.T, s *server, login string) siteOwner {
	t.Helper()
	o := siteAccount(t, s, "base", login)
	var r response
	for i, name := range []string{siteHostileScript, siteHostileImg} {
		card := owOwnerCard(t, s, o.OwnerSecret, owAddress(900+i), name)
		o.cards = append(o.cards, owString(t, card, "id"))
	}
	r = do(t, "GET", s.URL+"/owner/v1/history/cards/"+o.cards[0]+"/transactions?limit=1", o.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	txs := r.JSON(t)["transactions"].([]any)
	if len(txs) == 0 {
		t.Fatalf("the simulated chain gave the card no transactions: %s", r.Body)
	}
	o.noteTx = txs[0].(map[string]any)["txid"].(string)
	r = do(t, "PUT", s.URL+"/owner/v1/history/notes/"+o.noteTx, o.OwnerSecret, map[string]any{"note": siteHostileNote})
	expect(t, r, http.StatusOK, "")
	return o
}

// siteSignIn signs in through the sign-in form and lands on the panel.
func siteSignIn(t *testing.T, b *browserTab, o siteOwner, login string) {
	t.Helper()
	if status := b.open(o.siteURL + "/"); status != http.StatusOK {
		t.Fatalf("sign-in page: %d", status)
	}
	b.assertUsable("the sign-in page")
	b.fill("Login", login)
	b.fill("Password", o.Password)
	if status := b.submit(`form[action="/sign-in"] button`); status != http.StatusOK || !strings.HasSuffix(b.location(), "/portfolio") {
		t.Fatalf("sign-in landed on %s with %d", b.location(), status)
	}
}

// siteAccount creates an account of plan with login and a password, to
// sign in to the site with.
func siteAccount(t *testing.T, s *server, plan, login string) siteOwner {
	t.Helper()
	password := "correct horse battery"
	r := do(t, "POST", s.AdminURL+"/admin/v1/accounts", s.AdminToken, map[string]any{"plan": plan, "password": password, "login": login})
	expect(t, r, http.StatusCreated, "")
	m := r.JSON(t)
	return siteOwner{account: account{ID: m["account_id"].(string), OwnerSecret: m["owner_secret"].(string), Password: password}, Login: login, siteURL: s.URL}
}

// value returns the value of the form control matching selector.
func (b *browserTab) value(selector string) string {
	b.t.Helper()
	return run(b, "value of "+selector, chromedp.Value(chromedp.CSS(selector)))
}

// typeInto types into the control matching selector (for forms whose
// labels repeat on one page, such as the password fields of settings).
func (b *browserTab) typeInto(selector, text string) {
	b.t.Helper()
	b.do("type into "+selector, chromedp.SendKeys(chromedp.CSS(selector), text))
}

// pick chooses value in the <select> matching selector as a person would,
// which fires its change event, and waits for the page that loads.
func (b *browserTab) pick(selector, value string) int64 {
	b.t.Helper()
	sel, _ := json.Marshal(selector)
	v, _ := json.Marshal(value)
	js := fmt.Sprintf(`(() => { const s = document.querySelector(%s); s.value = %s; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, sel, v)
	step := "pick " + value + " in " + selector
	resp := within(b, step, func(ctx context.Context) (*network.Response, error) {
		return chromedp.RunResponse(ctx, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](js)(ctx, target)
			return err
		}))
	})
	b.shoot(step)
	return resp.Status
}

// assertUsable checks the page can be used without a mouse or eyes: every
// visible form control has a label, every button and link says what it
// does, and each can take the keyboard focus.
func (b *browserTab) assertUsable(page string) {
	b.t.Helper()
	problems := run(b, "check the controls of "+page, chromedp.Evaluate[[]string](`(() => {
	const out = [];
	for (const c of document.querySelectorAll("input, select, textarea")) {
		if (c.type === "hidden") continue;
		if (!c.labels || c.labels.length === 0 || !c.labels[0].textContent.trim()) out.push("unlabelled " + c.outerHTML.slice(0, 80));
		if (c.tabIndex < 0) out.push("not focusable " + c.outerHTML.slice(0, 80));
	}
	for (const c of document.querySelectorAll("button, a")) {
		if (c.hidden) continue;
		if (!c.textContent.trim()) out.push("no text " + c.outerHTML.slice(0, 80));
		if (c.tabIndex < 0) out.push("not focusable " + c.outerHTML.slice(0, 80));
	}
	return out;
})()`))
	if len(problems) > 0 {
		b.t.Errorf("%s: %q", page, problems)
	}
}

var siteKeyPattern = regexp.MustCompile(`awk\.[a-z0-9]+\.[a-z0-9]+\.[a-z0-9]+`)

// siteCreateKey creates a key in the panel and returns the key and its id,
// read off the page that shows it once.
func siteCreateKey(t *testing.T, b *browserTab, o siteOwner, name, capability string) (key, keyID string) {
	t.Helper()
	b.open(o.siteURL + "/access")
	b.fill("Name", name)
	b.click("#cap-" + capability)
	if status := b.submit(`form[action="/access/keys"] button`); status != http.StatusOK || !strings.HasSuffix(b.location(), "/access/keys/created") {
		t.Fatalf("create key: %d at %s", status, b.location())
	}
	b.assertUsable("the new key page")
	key = b.value("#new-key")
	curl := b.text("#try-curl")
	if !siteKeyPattern.MatchString(key) || !strings.Contains(curl, "Bearer "+key) || !strings.Contains(curl, o.siteURL+"/v1/me") {
		t.Fatalf("the key page shows key %q and curl %q", key, curl)
	}
	if got := b.text("#new-key-heading"); !strings.Contains(got, name) {
		t.Fatalf("the key page heading %q does not show the name %q as text", got, name)
	}
	return key, strings.Split(key, ".")[2]
}

// siteCSVRows parses a downloaded CSV and checks it equals the owner API's.
func siteCSVRows(t *testing.T, s *server, o siteOwner, what string, data []byte, ownerPath string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatalf("%s: not CSV: %v", what, err)
	}
	r := do(t, "GET", s.URL+"/owner/v1"+ownerPath, o.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if string(r.Body) != string(data) {
		t.Fatalf("%s: the site's file differs from the owner API's:\n%.500s\n---\n%.500s", what, data, r.Body)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: %d rows", what, len(rows))
	}
	return rows
}

// siteImportLabels imports a BIP-329 file on the Downloads page and
// checks the report and the export.
func siteImportLabels(t *testing.T, b *browserTab, s *server, o siteOwner) {
	t.Helper()
	file := strings.Join([]string{
		`{"type":"addr","ref":"` + owAddress(901) + `","label":"Renamed by a wallet"}`,
		`{"type":"addr","ref":"` + owAddress(950) + `","label":` + jsonString(siteHostileImg) + `}`,
		`{"type":"tx","ref":"` + o.noteTx + `","label":"Paid rent"}`,
		`{"type":"pubkey","ref":"` + siteHostileScript + `","label":"x"}`,
		`{not json`,
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "wallet-labels.jsonl")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	b.open(s.URL + "/downloads")
	b.upload("#labels-file", path)
	if status := b.submit(`form[action="/downloads/labels"] button`); status != http.StatusOK {
		t.Fatalf("the label import's preview answered %d", status)
	}
	b.assertUsable("the label import preview")
	if lead := b.text("p.lead"); !strings.Contains(lead, "5 lines read. If you import this file: 1 new, 2 changed, 0 unchanged, 2 not imported") {
		t.Fatalf("the preview says %q", lead)
	}
	cells := b.texts("#label-preview td")
	for _, want := range []string{owAddress(950), "imported", "changed", siteHostileScript, "addrwatch keeps addr and tx labels only", "not valid JSON"} {
		if !slices.ContainsFunc(cells, func(c string) bool { return strings.Contains(c, want) }) {
			t.Fatalf("the preview lacks %q: %q", want, cells)
		}
	}
	if r := do(t, "GET", s.URL+"/owner/v1/labels.jsonl", o.OwnerSecret, nil); strings.Contains(string(r.Body), "Renamed by a wallet") {
		t.Fatalf("the preview saved labels: %s", r.Body)
	}
	if status := b.submit(`#confirm-import button[type=submit]`); status != http.StatusOK || !strings.HasSuffix(b.location(), "/downloads/labels/report") {
		t.Fatalf("confirming the import: %d at %s", status, b.location())
	}
	b.assertUsable("the label import report")
	if lead := b.text("p.lead"); !strings.Contains(lead, "1 imported, 2 changed, 0 unchanged, 0 not imported") {
		t.Fatalf("the report says %q", lead)
	}
	b.open(s.URL + "/downloads")
	name, data := b.download(`a[href="/downloads/labels.jsonl"]`)
	if name != "addrwatch-labels.jsonl" {
		t.Fatalf("label file name %q", name)
	}
	r := do(t, "GET", s.URL+"/owner/v1/labels.jsonl", o.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if string(data) != string(r.Body) {
		t.Fatalf("the site's label file differs from the owner API's:\n%s\n%s", data, r.Body)
	}
	for _, want := range []string{`"label":"Renamed by a wallet"`, `"label":"Paid rent"`, owAddress(950)} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("the exported labels lack %s:\n%s", want, data)
		}
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// siteNoteRow finds the row of txid and returns its note cell.
func siteNoteRow(t *testing.T, what string, rows [][]string, txid string) string {
	t.Helper()
	txCol, noteCol := slices.Index(rows[0], "txid"), slices.Index(rows[0], "note")
	for _, row := range rows[1:] {
		if row[txCol] == txid {
			return row[noteCol]
		}
	}
	t.Fatalf("%s: no row for %s", what, txid)
	return ""
}

func TestSiteOwnerJourneyInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "Owner@Example.org")
	b := newBrowser(t)

	// Sign in with the login in another case.
	siteSignIn(t, b, o, "owner@example.org")
	c := b.cookie("addrwatch_session")
	if c == nil || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/" || c.Secure {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", c)
	}
	// Hostile card names are shown as text in the grants table.
	b.open(s.URL + "/access")
	if names := b.texts("td.text strong"); !slices.Contains(names, siteHostileScript) || !slices.Contains(names, siteHostileImg) {
		t.Fatalf("the grants table shows names %q", names)
	}

	// A read key and a write key, each used with the Agent API.
	readKey, _ := siteCreateKey(t, b, o, siteHostileImg, "read")
	writeKey, writeID := siteCreateKey(t, b, o, siteHostileScript, "write")
	if me := owMe(t, s, readKey); me["capability"] != "read" || me["account_id"] != o.ID {
		t.Fatalf("read key /v1/me %v", me)
	}
	if me := owMe(t, s, writeKey); me["capability"] != "write" {
		t.Fatalf("write key /v1/me %v", me)
	}
	b.open(s.URL + "/access")
	if names := b.texts("tbody td.text"); !slices.Contains(names, siteHostileImg) || !slices.Contains(names, siteHostileScript) {
		t.Fatalf("the key list shows %q", names)
	}
	if b.hasText("awk.") {
		t.Fatalf("the key list shows a full key")
	}

	// Grant read on the first card: the agent sees it on its next request,
	// with the effective access the panel promised.
	agentCards := func(key string) map[string]string {
		r := do(t, "GET", s.URL+"/v1/portfolio/cards", key, nil)
		expect(t, r, http.StatusOK, "")
		seen := map[string]string{}
		for _, c := range r.JSON(t)["cards"].([]any) {
			seen[c.(map[string]any)["id"].(string)] = c.(map[string]any)["effective_access"].(string)
		}
		return seen
	}
	b.assertUsable("the API access panel")
	if seen := agentCards(readKey); len(seen) != 0 {
		t.Fatalf("before any grant the read key sees %v", seen)
	}
	if status := b.pick("#grant-"+o.cards[0], "write"); status != http.StatusOK || !strings.Contains(b.text("p.notice"), "Grant saved") {
		t.Fatalf("grant: %d", status)
	}
	if seen := agentCards(readKey); seen[o.cards[0]] != "read" || len(seen) != 1 {
		t.Fatalf("after a write grant the read key sees %v", seen)
	}
	if seen := agentCards(writeKey); seen[o.cards[0]] != "write" {
		t.Fatalf("after a write grant the write key sees %v", seen)
	}
	row := fmt.Sprintf(`form[action="/access/grants/cards/%s"]`, o.cards[0])
	if got := b.texts(`tr:has(` + row + `) td .badge`); len(got) != 2 || got[0] != "read" || got[1] != "write" {
		t.Fatalf("the panel promises %q for a write grant", got)
	}
	b.pick("#grant-"+o.cards[0], "none")
	if seen := agentCards(readKey); len(seen) != 0 {
		t.Fatalf("after revoking the grant the read key sees %v", seen)
	}

	// Revoke the write key, after the confirmation page.
	b.open(s.URL + "/access")
	if status := b.submit(`a[href="/access/keys/` + writeID + `/revoke"]`); status != http.StatusOK || !b.hasText("Revoke") {
		t.Fatalf("the revoke confirmation: %d", status)
	}
	b.assertUsable("the revoke confirmation")
	b.submit(`form[action="/access/keys/` + writeID + `/revoke"] button`)
	if !strings.Contains(b.text("p.notice"), "Key revoked") {
		t.Fatalf("no notice after revoking")
	}
	expect(t, do(t, "GET", s.URL+"/v1/me", writeKey, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	owMe(t, s, readKey)

	// Change the plan.
	b.open(s.URL + "/settings")
	b.assertUsable("the settings")
	// The settings say where transactions come from: the simulated chain.
	if got := b.text("#chain-source"); !strings.Contains(got, "simulated chain") {
		t.Errorf("the settings name the chain source as %q", got)
	}
	b.click("#plan-extended")
	b.submit(`form[action="/settings/plan"] button`)
	if me := owMe(t, s, readKey); me["plan"] != "extended" {
		t.Fatalf("after the plan change /v1/me says %v", me["plan"])
	}

	// Download both CSVs: the owner API's files, notes included.
	b.open(s.URL + "/downloads")
	b.assertUsable("the downloads")
	if got := b.texts("tbody td.text"); !slices.Contains(got, siteHostileScript) {
		t.Fatalf("the downloads page shows %q", got)
	}
	name, data := b.download(`a[href="/downloads/history.csv"]`)
	if !strings.HasPrefix(name, "addrwatch-") || !strings.HasSuffix(name, ".csv") {
		t.Fatalf("combined file name %q", name)
	}
	rows := siteCSVRows(t, s, o, "combined", data, "/history.csv")
	if note := siteNoteRow(t, "combined", rows, o.noteTx); note != siteHostileNote {
		t.Fatalf("combined note %q", note)
	}
	_, data = b.download(`a[href="/downloads/history/cards/` + o.cards[0] + `/transactions.csv"]`)
	rows = siteCSVRows(t, s, o, "card", data, "/history/cards/"+o.cards[0]+"/transactions.csv")
	if note := siteNoteRow(t, "card", rows, o.noteTx); note != siteHostileNote {
		t.Fatalf("card note %q", note)
	}

	// Wallet labels: import a wallet's file through the form, read the
	// report (hostile strings from the file stay text), and export the
	// labels, which are the owner API's file.
	siteImportLabels(t, b, s, o)

	// Rotate the owner secret: every key stops working; the new secret is
	// shown once and works.
	b.open(s.URL + "/settings")
	b.typeInto("#secret-password", o.Password)
	b.submit(`form[action="/settings/owner-secret"] button`)
	secret := b.value("#owner-secret")
	if !strings.HasPrefix(secret, "aws."+o.ID+".") {
		t.Fatalf("the new owner secret shown is %q", secret)
	}
	expect(t, do(t, "GET", s.URL+"/v1/me", readKey, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", o.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", secret, nil), http.StatusOK, "")

	// No hostile string ran, and nothing broke the CSP.
	b.assertNoConsoleErrors()

	// Sign out: back on the sign-in page, and the session reaches nothing.
	b.open(s.URL + "/access")
	b.submit(`form[action="/sign-out"] button`)
	if !strings.Contains(b.text("p.notice"), "signed out") || b.cookie("addrwatch_session") != nil {
		t.Fatalf("after sign-out: %s, cookie %+v", b.location(), b.cookie("addrwatch_session"))
	}
	b.setCookie(s.URL, "addrwatch_session", c.Value)
	b.open(s.URL + "/access")
	if !strings.HasSuffix(b.location(), "/?m=expired") {
		t.Fatalf("the ended session still opens %s", b.location())
	}
}

// A form on another site that posts to ours is refused with 403 and
// changes nothing; a guessed session cookie reaches nothing.
func TestSiteRefusesForgedRequestsInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "victim")
	b := newBrowser(t)
	siteSignIn(t, b, o, "victim")
	b.open(s.URL + "/access")
	token := b.value(`form[action="/access/keys"] input[name="csrf"]`)

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>prize</title>
<form method="post" action="%s/access/keys"><input type="hidden" name="csrf" value="%s">
<input type="hidden" name="name" value="planted"><input type="hidden" name="capability" value="write">
<button id="claim">Claim your prize</button></form>`, s.URL, token)
	}))
	t.Cleanup(evil.Close)
	b.open(evil.URL)
	if status := b.submit("#claim"); status != http.StatusForbidden {
		t.Fatalf("a cross-site form post (even with a stolen token) answered %d", status)
	}
	if ids := owKeyIDs(t, s, o.OwnerSecret); len(ids) != 0 {
		t.Fatalf("the cross-site post created keys %v", ids)
	}

	// A guessed session cookie, in a fresh browser context.
	g := newBrowser(t)
	g.setCookie(s.URL, "addrwatch_session", "awt."+o.ID+".aaaaaaaaaaaaaaaa."+strings.Repeat("b", 52))
	g.open(s.URL + "/access")
	if !strings.HasSuffix(g.location(), "/?m=expired") || !g.hasText("Sign in") {
		t.Fatalf("a guessed session opened %s", g.location())
	}
	g.open(s.URL + "/settings")
	if !strings.HasSuffix(g.location(), "/?m=expired") {
		t.Fatalf("a guessed session opened %s", g.location())
	}
}

// On a cluster the site works through a follower like any other request:
// the follower forwards the pages and forms to the leader, and the session
// and the form token are the same on every node.
func TestSiteThroughAFollowerInABrowser(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	o := siteSetUp(t, leader, "follower-owner")
	o.siteURL = followers[0].URL
	b := newBrowser(t)
	siteSignIn(t, b, o, "follower-owner")
	key, _ := siteCreateKey(t, b, o, "via a follower", "write")
	owMe(t, followers[1], key)
	b.open(o.siteURL + "/access")
	b.pick("#grant-"+o.cards[1], "read")
	r := do(t, "GET", leader.URL+"/v1/portfolio/cards/"+o.cards[1], key, nil)
	expect(t, r, http.StatusOK, "")
	// A History CSV downloaded through the follower is the leader's file.
	b.open(o.siteURL + "/downloads")
	_, data := b.download(`a[href="/downloads/history.csv"]`)
	rows := siteCSVRows(t, leader, o, "combined through a follower", data, "/history.csv")
	if note := siteNoteRow(t, "combined through a follower", rows, o.noteTx); note != siteHostileNote {
		t.Fatalf("note through a follower %q", note)
	}
	// The session signed in on one follower is good on the other.
	b.setCookie(followers[1].URL, "addrwatch_session", b.cookie("addrwatch_session").Value)
	b.open(followers[1].URL + "/settings")
	if !strings.HasSuffix(b.location(), "/settings") || !b.hasText("follower-owner") {
		t.Fatalf("the other follower answered %s", b.location())
	}
	b.assertNoConsoleErrors()
}
