package system_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// activityLine is a line of the activity table: the key, the words, the
// request and its outcome, and the count.
type activityLine struct {
	key, words, op, outcome string
	count                   int
}

// activityLines reads the activity table's lines, names without their
// isolates.
func (b *browserTab) activityLines() []activityLine {
	b.t.Helper()
	raw := run(b, "read the activity lines", chromedp.Evaluate[[][]string](`[...document.querySelectorAll("#activity tbody tr")].map(r => [
	r.cells[1].textContent.trim(), r.querySelector(".words").textContent, r.querySelector(".request .mono").textContent,
	r.querySelector(".request").textContent.split(" · ").slice(1).join(" · ").trim(), r.cells[3].textContent.trim()])`))
	var out []activityLine
	for _, r := range raw {
		n, _ := strconv.Atoi(r[4])
		out = append(out, activityLine{key: r[0], words: plainText(r[1]), op: r[2], outcome: r[3], count: n})
	}
	return out
}

// Agent activity in a real browser: a key's reads, its change and its
// refusal are listed on the account's page and on the key's own page
// (reached from the API access panel), newest first, each in the owner's
// words with the request under them, the key's hostile name and the
// cards' hostile names as text, and the filter narrows them to one card
// or to the changes; an ID that is no key of the account is called
// unknown, a revoked key revoked.
func TestSiteActivityInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "activity.owner")
	e := spEnv{s: s, acct: o.account}
	e.grantCard(t, o.cards[0], "write")
	b := newBrowser(t)
	siteSignIn(t, b, o, "activity.owner")
	key, keyID := siteCreateKey(t, b, o, siteHostileImg, "write")

	for range 2 {
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, nil), http.StatusOK, "")
	}
	r := do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, nil)
	version := r.JSON(t)["card"].(map[string]any)["version"]
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, map[string]any{"expected_version": version, "note": "by the agent"}), http.StatusOK, "")
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, map[string]any{"expected_version": version, "note": "again"}), http.StatusConflict, "STALE_VERSION")
	expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[1], key, nil), http.StatusNotFound, "NOT_FOUND")

	// The lines are recorded about a second after the requests; requests
	// of one window with the same outcome share a line, so the counts are
	// summed (a window may end between the reads).
	counts := func() map[string]int {
		out := map[string]int{}
		for _, l := range b.activityLines() {
			out[l.op+" "+l.outcome] += l.count
		}
		return out
	}
	total := func(m map[string]int) (n int) {
		for _, c := range m {
			n += c
		}
		return n
	}
	b.open(s.URL + "/access")
	b.submit(`a[href="/activity?key=` + keyID + `"]`)
	for start := time.Now(); total(counts()) < 6 && time.Since(start) < 15*time.Second; {
		time.Sleep(300 * time.Millisecond)
		b.open(s.URL + "/activity?key=" + keyID)
	}
	b.assertUsable("the key's activity")
	if h := b.text("h1"); h != "Activity of "+siteHostileImg {
		t.Fatalf("the heading reads %q", h)
	}
	want := map[string]int{
		"GET /v1/portfolio/cards/{card_id} 200 OK":              1 + 2,
		"PATCH /v1/portfolio/cards/{card_id} 200 OK":            1,
		"PATCH /v1/portfolio/cards/{card_id} 409 STALE_VERSION": 1,
		"unknown resources 404 NOT_FOUND":                       1,
	}
	if got := counts(); !maps.Equal(got, want) {
		t.Fatalf("the key's lines count %v, want %v", got, want)
	}
	lines := b.activityLines()
	if lines[0].op != "unknown resources" || lines[0].outcome != "404 NOT_FOUND" || lines[len(lines)-1].outcome != "200 OK" {
		t.Fatalf("not newest first: %+v", lines)
	}
	// In the owner's words, the card's hostile name as text.
	card := "Account card “" + siteHostileScript + "”"
	words := map[string]bool{}
	for _, l := range lines {
		if l.key != siteHostileImg {
			t.Fatalf("a line's key reads %q", l.key)
		}
		words[l.words] = true
	}
	for _, want := range []string{"read " + card, "changed " + card, "was refused: change " + card + " (409 STALE_VERSION)",
		"asked for cards, Spaces or notes that do not exist (404 NOT_FOUND)"} {
		if !words[want] {
			t.Fatalf("no line %q in %v", want, words)
		}
	}
	// Narrowed to the first card: its reads and writes, not the miss,
	// which is counted with the window's other unknown resources.
	b.fill("Card, Space or transaction ID", o.cards[0])
	b.submit(`#activity-filter button[type=submit]`)
	if lines := b.activityLines(); len(lines) < 3 || slices.ContainsFunc(lines, func(l activityLine) bool { return l.outcome == "404 NOT_FOUND" }) {
		t.Fatalf("filtered by card: %+v", lines)
	}
	// Changes only: the change stays, the reads and refusals go, and the
	// card's filter with them.
	b.click("#activity-changes")
	b.submit(`#activity-filter button[type=submit]`)
	if lines := b.activityLines(); len(lines) != 1 || lines[0].words != "changed "+card || lines[0].outcome != "200 OK" ||
		!strings.Contains(b.location(), "changes=1") || !strings.Contains(b.location(), "resource="+o.cards[0]) {
		t.Fatalf("changes only: %+v at %s", lines, b.location())
	}
	b.assertCleanAtBothWidths("the changes only")

	// In a Space: the key adds a card and renames it (to a hostile name),
	// and a read key's change of it is refused; each is said with the
	// card's name now and the Space's.
	owner := e.owner()
	space := spID(owner.list(t).spaces[0])
	e.grant(t, space, "write")
	added := e.agent(key).addCard(t, space, map[string]any{"address": owAddress(990), "name": "Alice"})
	expect(t, e.agent(key).do(t, "PATCH", "/bookmark-spaces/"+space+"/cards/"+spID(added), map[string]any{"expected_version": added["version"], "name": siteHostileNote}), http.StatusOK, "")
	_, reader := owKey(t, s, o.OwnerSecret, "read", "reader")
	expect(t, e.agent(reader).do(t, "PATCH", "/bookmark-spaces/"+space+"/cards/"+spID(added), map[string]any{"expected_version": "x", "name": "y"}), http.StatusForbidden, "FORBIDDEN")
	bookmark := "card “" + siteHostileNote + "” in Space “Bitcoin”"
	inSpace := []string{siteHostileImg + " added a card to Space “Bitcoin”", siteHostileImg + " changed " + bookmark, "reader was refused: change " + bookmark + " (403 FORBIDDEN)"}
	has := func() map[string]bool {
		out := map[string]bool{}
		for _, l := range b.activityLines() {
			out[l.key+" "+l.words] = true
		}
		return out
	}
	for start := time.Now(); time.Since(start) < 15*time.Second; time.Sleep(300 * time.Millisecond) {
		b.open(s.URL + "/activity")
		if got := has(); got[inSpace[0]] && got[inSpace[1]] && got[inSpace[2]] {
			break
		}
	}
	if got := has(); !got[inSpace[0]] || !got[inSpace[1]] || !got[inSpace[2]] {
		t.Fatalf("the Space's lines: want %q in %v", inSpace, got)
	}
	b.assertCleanAtBothWidths("the activity in a Space")

	// An ID that is no key of the account is unknown, not revoked, and a
	// hostile one is shown as text.
	if status := b.open(s.URL + "/activity?key=" + url.QueryEscape(siteHostileImg)); status != http.StatusNotFound {
		t.Fatalf("an unknown key's page: status %d", status)
	}
	b.expectConsoleError("status of 404")
	if h := b.text("h1"); h != "Unknown key "+siteHostileImg || b.hasText("(revoked)") {
		t.Fatalf("an unknown key's page reads %q", b.text("body"))
	}
	// A revoked key's page still says revoked, over its kept lines.
	expect(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+keyID, o.OwnerSecret, nil), http.StatusNoContent, "")
	b.open(s.URL + "/activity?key=" + keyID)
	if h := b.text("h1"); h != "Activity of key "+keyID+" (revoked)" || len(b.activityLines()) == 0 {
		t.Fatalf("a revoked key's page reads %q", h)
	}
	b.assertNoConsoleErrors()
}
