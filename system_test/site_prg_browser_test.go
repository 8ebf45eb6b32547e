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

	"github.com/chromedp/chromedp"
)

// Issue 33, items 3 and 4: a reload or Back on a result page repeats no
// action (post/redirect/get), a secret is shown once and only once, and
// importing the account's own BIP-329 export changes nothing, byte for
// byte, with bookmark cards back in their Spaces.

// reload reloads the tab's page and returns when it has loaded.
func (b *browserTab) reload() {
	b.t.Helper()
	b.do("reload", chromedp.Reload())
	b.shoot("reload")
}

// goHistory goes back (-1) or forward (1) in the tab's history, as the
// browser's buttons do, waits until the page at path is shown and returns
// its text. (A page the browser restores from its back/forward cache fires
// no load event, so this waits for the location instead.)
func (b *browserTab) goHistory(delta int, path string) (text string) {
	b.t.Helper()
	step := fmt.Sprintf("history.go(%d) to %s", delta, path)
	run(b, step, chromedp.Evaluate[bool](fmt.Sprintf("history.go(%d), true", delta)))
	text = b.evaluateSettled(step, fmt.Sprintf("location.pathname === %q && document.readyState === \"complete\" ? document.body.innerText : null", path))
	b.shoot(step)
	return text
}

// evaluateSettled evaluates expression until it gives a string: the page
// being left may take its execution context with it mid-question, and
// chromedp's view of the DOM does not follow a page restored from the
// back/forward cache, so this asks the page itself.
func (b *browserTab) evaluateSettled(step, expression string) string {
	b.t.Helper()
	return within(b, step, func(ctx context.Context) (string, error) {
		for {
			if text, err := chromedp.Run(ctx, chromedp.Evaluate[*string](expression)); err == nil && text != nil {
				return *text, nil
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// owCount is how many items the owner API lists at path under field.
func owCount(t *testing.T, s *server, secret, path, field string) int {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1"+path, secret, nil)
	expect(t, r, http.StatusOK, "")
	return len(r.JSON(t)[field].([]any))
}

func TestSiteReloadsRepeatNothingInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--chain-poll", "10m")
	o := siteSetUp(t, s, "reload@example.org")
	b := newBrowser(t)
	siteSignIn(t, b, o, "reload@example.org")
	keys := func() int { return owCount(t, s, o.OwnerSecret, "/keys", "keys") }

	// A new key: shown once; a reload and Back then forward create none
	// and show it no more.
	key, _ := siteCreateKey(t, b, o, siteHostileScript, "read")
	if b.cookie("addrwatch_flash") != nil {
		t.Fatal("the flash cookie outlived the page that showed it")
	}
	b.reload()
	if b.hasText(key) || !strings.Contains(b.text("main"), "This key was shown once and cannot be shown again") {
		t.Fatalf("the key page reloaded: %q", b.text("main"))
	}
	back := b.goHistory(-1, "/access")
	forward := b.goHistory(1, "/access/keys/created")
	if strings.Contains(back+forward, key) || keys() != 1 {
		t.Fatalf("Back and forward again: %d keys; the pages:\n%s\n---\n%s", keys(), back, forward)
	}
	b.open(s.URL + "/access") // a fresh page, for chromedp's view of the DOM

	// The owner secret: rotated once, shown once; the reload rotates
	// nothing (the secret shown still works).
	b.open(s.URL + "/settings")
	b.typeInto(`form[action="/settings/owner-secret"] input[name=current_password]`, o.Password)
	if status := b.submit(`form[action="/settings/owner-secret"] button`); status != http.StatusOK || !strings.HasSuffix(b.location(), "/settings/secret") {
		t.Fatalf("rotate: %d at %s", status, b.location())
	}
	secret := b.value("#owner-secret")
	b.reload()
	if b.hasText(secret) || !strings.Contains(b.text("main"), "was shown once and cannot be shown again") {
		t.Fatalf("the secret page reloaded: %q", b.text("main"))
	}
	if r := do(t, "GET", s.URL+"/owner/v1/keys", secret, nil); r.Status != http.StatusOK {
		t.Fatalf("the shown owner secret stopped working after the reload: %d", r.Status)
	}
	o.OwnerSecret = secret
	if n := keys(); n != 0 {
		t.Fatalf("%d keys after a rotation", n)
	}

	// The BIP-329 round trip in the browser: export, preview the import
	// of the export (it changes nothing, so nothing is offered), export
	// again: the same bytes.
	b.open(s.URL + "/downloads")
	_, first := b.download(`a[href="/downloads/labels.jsonl"]`)
	path := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	b.upload("#labels-file", path)
	if status := b.submit(`form[action="/downloads/labels"] button`); status != http.StatusOK || !b.hasText("Importing this file changes nothing") {
		t.Fatalf("previewing the export: %d %q", status, b.text("main"))
	}
	b.open(s.URL + "/downloads")
	_, again := b.download(`a[href="/downloads/labels.jsonl"]`)
	if string(again) != string(first) {
		t.Fatalf("export, preview, export:\n%s\n%s", first, again)
	}

	// An import that changes something: the report is a GET; its reload
	// imports nothing and says so.
	file := `{"type":"addr","ref":"` + owAddress(960) + `","label":"from a wallet"}` + "\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	b.open(s.URL + "/downloads")
	b.upload("#labels-file", path)
	b.submit(`form[action="/downloads/labels"] button`)
	if status := b.submit(`#confirm-import button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text("p.lead"), "1 imported") {
		t.Fatalf("the import: %d %q", status, b.text("main"))
	}
	cards := owCount(t, s, o.OwnerSecret, "/portfolio/cards", "cards")
	b.reload()
	if !b.hasText("Nothing was imported again") || owCount(t, s, o.OwnerSecret, "/portfolio/cards", "cards") != cards {
		t.Fatalf("the report reloaded: %q", b.text("main"))
	}
	b.assertNoConsoleErrors()
}

// The full account's BIP-329 round trip over real HTTP: Account cards,
// two Bitcoin Spaces and an altcoin Space of bookmark cards, notes and
// hostile names. Export, import, export: the same bytes; the import
// reports every line unchanged and adds no raft log entry.
func TestLabelRoundTripOfAFullAccountOverHTTP(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--chain-poll", "10m") // no chain-follower entries between the reads of applied_index
	a := s.createAccount(t, "extended")
	owner := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		r := do(t, method, s.URL+"/owner/v1"+path, a.OwnerSecret, body)
		expect(t, r, want, "")
		if len(r.Body) == 0 {
			return nil
		}
		return r.JSON(t)
	}
	first := owOwnerCard(t, s, a.OwnerSecret, owAddress(970), `"},{"type":"addr","ref":"x`)
	owOwnerCard(t, s, a.OwnerSecret, owAddress(971), "")
	owOwnerCard(t, s, a.OwnerSecret, owAddress(972), siteHostileScript)
	space := func(name, typ string) string {
		rev := owner("GET", "/bookmark-spaces", nil, http.StatusOK)["bookmark_revision"]
		return owner("POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": rev, "name": name, "type": typ}, http.StatusCreated)["space"].(map[string]any)["id"].(string)
	}
	friends, watched, alts := space(siteHostileImg, "bitcoin"), space("Watched", "bitcoin"), space("Alts", "altcoin")
	bookmark := func(space string, card map[string]any) {
		t.Helper()
		card["expected_space_version"] = owner("GET", "/bookmark-spaces/"+space+"/cards", nil, http.StatusOK)["space"].(map[string]any)["version"]
		owner("POST", "/bookmark-spaces/"+space+"/cards", card, http.StatusCreated)
	}
	bookmark(friends, map[string]any{"address": owAddress(973), "name": siteHostileNote})
	bookmark(friends, map[string]any{"address": owAddress(970), "name": "also an Account card"})
	bookmark(watched, map[string]any{"address": owAddress(973), "name": "in two Spaces"})
	bookmark(watched, map[string]any{"address": owAddress(974), "name": `Bob "the builder" \ ☃ 🦊`})
	bookmark(alts, map[string]any{"address": "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA", "coin_id": "litecoin", "name": "ltc"})
	txs := owner("GET", "/history/cards/"+first["id"].(string)+"/transactions?limit=2", nil, http.StatusOK)["transactions"].([]any)
	if len(txs) == 0 {
		t.Fatal("the simulated chain gave the card no transactions")
	}
	for i, tx := range txs {
		owner("PUT", "/history/notes/"+tx.(map[string]any)["txid"].(string), map[string]any{"note": []string{siteHostileNote, `rent "}{`}[i]}, http.StatusOK)
	}

	export := func() []byte {
		t.Helper()
		r := do(t, "GET", s.URL+"/owner/v1/labels.jsonl", a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		return r.Body
	}
	before := export()
	lines := strings.Count(string(before), "\n")
	if lines != 4+len(txs) || !strings.Contains(string(before), `"addrwatch_space":"`+friends+`"`) || !strings.Contains(string(before), `"addrwatch_space":"`+watched+`"`) {
		t.Fatalf("the export:\n%s", before)
	}
	applied := owNumber(t, owClusterStatus(t, s), "applied_index")
	for _, query := range []string{"?dry_run=true", ""} {
		r := do(t, "POST", s.URL+"/owner/v1/labels.jsonl"+query, a.OwnerSecret, string(before))
		expect(t, r, http.StatusOK, "")
		var report struct{ Records, Unchanged int }
		if err := json.Unmarshal(r.Body, &report); err != nil || report.Records != lines || report.Unchanged != lines {
			t.Fatalf("importing the export%s: %s", query, r.Body)
		}
	}
	if added := owNumber(t, owClusterStatus(t, s), "applied_index") - applied; added != 0 {
		t.Fatalf("importing the export added %d log entries", added)
	}
	if after := export(); string(after) != string(before) {
		t.Fatalf("export, import, export: not the same bytes:\n%s\n%s", before, after)
	}
	t.Logf("round trip of %d lines: the same %d bytes, every line unchanged, no log entry", lines, len(before))
}
