package httpd

import (
	"fmt"
	"html"
	"maps"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// key creates an API key through the owner API and returns it and its ID.
func (o *ownerTest) key(capability, name string) (key, id string) {
	o.t.Helper()
	m := o.ownerJSON("POST", "/owner/v1/keys", map[string]string{"capability": capability, "name": name}, fasthttp.StatusCreated)
	return m["key"].(string), m["key_id"].(string)
}

// withoutIsolates is activity words without the isolates around names
// (U+2068 … U+2069).
func withoutIsolates(words string) string {
	return strings.NewReplacer("\u2068", "", "\u2069", "").Replace(words)
}

// activityRows are the activity table's rows: the key, the words, the
// request, the outcome and the count.
var activityRows = regexp.MustCompile(`(?s)<tr class="(?:refused|change|read)">\s*<td data-label="When">[^<]*</td>\s*<td class="text" data-label="Key">([^<]*)</td>\s*<td class="text"><span class="words">([^<]*)</span><br><small class="hint request"><span class="mono">([^<]*)</span> · ([^<]*)</small></td>\s*<td class="amount" data-label="Count">(\d+)</td>`)

func TestSiteActivityShowsWhatEachKeyDid(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	_, _, created := o.send("192.0.2.1", "POST", "/owner/v1/portfolio/cards", o.account.OwnerSecret, map[string]any{"address": csvAddrA, "name": "Cold"})
	card := created["card"].(map[string]any)["id"].(string)
	o.ownerJSON("PUT", "/owner/v1/grants/portfolio/"+card, map[string]string{"level": "write"}, 200)
	reader, readerID := o.key("read", "<b>reader</b>")
	writer, _ := o.key("write", "writer")

	for range 3 {
		o.send("192.0.2.7", "GET", "/v1/portfolio/cards/"+card, reader, nil)
	}
	o.send("192.0.2.7", "PATCH", "/v1/portfolio/cards/"+card, reader, map[string]any{"expected_version": "x", "name": "n"})
	o.send("192.0.2.7", "GET", "/v1/portfolio/cards/nosuchcard", writer, nil)
	// A made-up secret for the reader's key ID is not the reader.
	forged := reader[:len(reader)-4] + "zzzz"
	if status, _, _ := o.send("192.0.2.7", "GET", "/v1/me", forged, nil); status != fasthttp.StatusUnauthorized {
		t.Fatalf("a forged key: %d", status)
	}
	o.server.activity.Wait()

	page := c.do("GET", "/activity", nil)
	// A flush window may end between the reads: lines of the same
	// request and outcome are summed.
	rows := activityRows.FindAllStringSubmatch(page.body, -1)
	got := map[string]int{}
	for _, r := range rows {
		n, _ := strconv.Atoi(r[5])
		got[r[1]+" | "+withoutIsolates(r[2])+" | "+r[3]+" | "+r[4]] += n
	}
	want := map[string]int{
		"&lt;b&gt;reader&lt;/b&gt; | read Account card “Cold” | GET /v1/portfolio/cards/{card_id} | 200 OK":                                         3,
		"&lt;b&gt;reader&lt;/b&gt; | was refused: change Account card “Cold” (403 FORBIDDEN) | PATCH /v1/portfolio/cards/{card_id} | 403 FORBIDDEN": 1,
		"writer | asked for cards, Spaces or notes that do not exist (404 NOT_FOUND) | unknown resources | 404 NOT_FOUND":                           1,
	}
	if page.status != 200 || !maps.Equal(got, want) {
		t.Fatalf("activity: %d, lines %v: %.4000s", page.status, got, page.body)
	}
	if strings.Contains(page.body, "/v1/me") {
		t.Fatal("the forged request was recorded")
	}

	// One key's page, reached from the panel.
	if panel := c.do("GET", "/access", nil); !strings.Contains(panel.body, `href="/activity?key=`+readerID+`"`) {
		t.Fatalf("the panel has no activity link for the key")
	}
	page = c.do("GET", "/activity?key="+readerID, nil)
	if rows := activityRows.FindAllStringSubmatch(page.body, -1); len(rows) < 2 || strings.Contains(page.body, ">writer<") || !strings.Contains(page.body, "<h1>Activity of &lt;b&gt;reader&lt;/b&gt;</h1>") {
		t.Fatalf("the reader's page: %d rows %.2000s", len(rows), page.body)
	}
	// By resource, and a time range that holds nothing.
	if byCard := c.do("GET", "/activity?resource="+card, nil).body; len(activityRows.FindAllStringSubmatch(byCard, -1)) < 2 || strings.Contains(byCard, "nosuchcard") {
		t.Fatalf("by card: %.2000s", byCard)
	}
	if page = c.do("GET", "/activity?until=2000-01-01T00:00", nil); !strings.Contains(page.body, "No agent requests match this filter") {
		t.Fatalf("an empty range: %.2000s", page.body)
	}
	// A time that is not one is refused with the reason, and the page
	// still shows the activity unfiltered.
	page = c.do("GET", "/activity?since=yesterday", nil)
	if page.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(page.body, "since must be a date and time") || len(activityRows.FindAllStringSubmatch(page.body, -1)) < 3 {
		t.Fatalf("a bad time: %d %.2000s", page.status, page.body)
	}
}

// GET /owner/v1/activity answers bad filters with 422 and the reason, and
// an agent key with 401 (the owner API takes only owner credentials).
func TestOwnerActivityRefusesBadFilters(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	reader, _ := o.key("read", "r")
	for query, want := range map[string]string{
		"since=yesterday":   "since must be an RFC 3339 time",
		"until=2026-11-26":  "until must be an RFC 3339 time",
		"before=0":          "before must be the next_before",
		"before=-3":         "before must be the next_before",
		"limit=101":         "limit must be an integer from 1 to 100",
		"colour=red":        `unknown query parameter "colour"`,
		"key_id=k&Key_ID=x": `unknown query parameter "Key_ID"`,
		"changes_only=1":    "changes_only must be true or false",
	} {
		status, _, m := o.send("192.0.2.1", "GET", "/owner/v1/activity?"+query, o.account.OwnerSecret, nil)
		if status != fasthttp.StatusUnprocessableEntity || m["code"] != "VALIDATION" || !strings.Contains(m["error"].(string), want) {
			t.Errorf("%s: %d %v", query, status, m)
		}
	}
	if status, _, m := o.send("192.0.2.1", "GET", "/owner/v1/activity?since=2026-01-01T00:00:00Z&limit=5", o.account.OwnerSecret, nil); status != 200 || m["next_before"] != nil {
		t.Fatalf("a good filter: %d %v", status, m)
	}
	if status, _, _ := o.send("192.0.2.1", "GET", "/owner/v1/activity", reader, nil); status != fasthttp.StatusUnauthorized {
		t.Fatalf("an agent key: %d", status)
	}
}

// changes_only=true keeps the changes a key made and leaves out its reads
// and refusals, as the site's "Changes only" does.
func TestOwnerActivityChangesOnly(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	_, _, created := o.send("192.0.2.1", "POST", "/owner/v1/portfolio/cards", o.account.OwnerSecret, map[string]any{"address": csvAddrA, "name": "Cold"})
	card := created["card"].(map[string]any)
	o.ownerJSON("PUT", "/owner/v1/grants/portfolio/"+card["id"].(string), map[string]string{"level": "write"}, 200)
	writer, _ := o.key("write", "writer")
	reader, _ := o.key("read", "reader")
	o.send("192.0.2.7", "GET", "/v1/portfolio/cards/"+card["id"].(string), writer, nil)
	if status, _, m := o.send("192.0.2.7", "PATCH", "/v1/portfolio/cards/"+card["id"].(string), writer, map[string]any{"expected_version": card["version"], "name": "Warm"}); status != 200 {
		t.Fatalf("the change: %d %v", status, m)
	}
	o.send("192.0.2.7", "PATCH", "/v1/portfolio/cards/"+card["id"].(string), reader, map[string]any{"expected_version": "x", "name": "n"})
	o.server.activity.Wait()
	ops := func(query string) []string {
		t.Helper()
		_, _, m := o.send("192.0.2.1", "GET", "/owner/v1/activity"+query, o.account.OwnerSecret, nil)
		var got []string
		for _, e := range m["entries"].([]any) {
			e := e.(map[string]any)
			got = append(got, fmt.Sprintf("%s %v", e["op"], e["status"]))
		}
		return got
	}
	if all := ops(""); len(all) != 3 {
		t.Fatalf("every line: %v", all)
	}
	for _, query := range []string{"?changes_only=true", "?changes_only=true&limit=5"} {
		if got := ops(query); len(got) != 1 || got[0] != "PATCH /v1/portfolio/cards/{card_id} 200" {
			t.Errorf("%s: %v, want the one change", query, got)
		}
	}
	if got := ops("?changes_only=false"); len(got) != 3 {
		t.Errorf("changes_only=false: %v", got)
	}
}

// The activity page of one key names it: a live key by its name, a
// revoked key whose lines are kept as revoked, and an ID that is no key
// of the account as unknown, not as a revoked key.
func TestSiteActivitySaysWhenAKeyIsUnknown(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	gone, goneID := o.key("read", "gone")
	o.send("192.0.2.7", "GET", "/v1/me", gone, nil)
	o.server.activity.Wait()
	o.ownerJSON("DELETE", "/owner/v1/keys/"+goneID, nil, fasthttp.StatusNoContent)

	page := c.do("GET", "/activity?key="+goneID, nil)
	if page.status != 200 || !strings.Contains(page.body, "<h1>Activity of key "+goneID+" (revoked)</h1>") || len(activityRows.FindAllStringSubmatch(page.body, -1)) != 1 {
		t.Fatalf("a revoked key's page: %d %.3000s", page.status, page.body)
	}
	for _, id := range []string{"nosuchkey", `<img src=x onerror=alert(1)>`} {
		page = c.do("GET", "/activity?key="+url.QueryEscape(id), nil)
		escaped := html.EscapeString(id)
		if page.status != fasthttp.StatusNotFound || strings.Contains(page.body, "(revoked)") ||
			!strings.Contains(page.body, "<h1>Unknown key "+escaped+"</h1>") || !strings.Contains(page.body, "This account has no key "+escaped) ||
			strings.Contains(page.body, "<img src=x") {
			t.Fatalf("an unknown key %q: %d %.3000s", id, page.status, page.body)
		}
	}
}
