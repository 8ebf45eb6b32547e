package httpd

import (
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/site"
)

// Every route the Agent API serves (and so may log in a key's activity)
// has words on the site's activity page, and every route with words is
// still served: a route added without words fails here.
func TestActivityWordsCoverEveryAgentRoute(t *testing.T) {
	t.Parallel()
	served := map[string]bool{}
	for _, op := range operations {
		if !op.servedOn(audienceAgent) || op.document {
			continue // a fixed document is served outside activity
		}
		route := op.method + " " + agentPrefix + op.path
		served[route] = true
		if !site.ActivityOpHasWords(route) {
			t.Errorf("the activity page has no words for %s: add them to activityPhrases (httpd/site/activity_words.go)", route)
		}
	}
	if len(served) == 0 {
		t.Fatal("no Agent API routes")
	}
}

// Agent activity in the owner's words, through the real server: a
// change to a bookmark card names the card as it is called now and its
// Space, an add names the Space, a read of History names the Account
// card, a refusal says so with its outcome; hostile and right-to-left
// names are text; and "changes only" leaves the reads and the refusal
// out.
func TestSiteActivityInTheOwnersWords(t *testing.T) {
	t.Parallel()
	c, o := newSpacesSite(t)
	friends := c.createSpace(t, "Friends", "bitcoin")
	if a := c.addBookmark(t, friends, url.Values{"address": {siteTestAddress(1)}, "name": {"Alice"}}); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("add Alice: %d %.500s", a.status, a.body)
	}
	card := o.spaceCards(friends)[0]
	rtl := "כספת קרה" // a right-to-left name
	created := o.ownerJSON("POST", "/owner/v1/portfolio/cards", map[string]any{"address": csvAddrA, "name": rtl}, fasthttp.StatusCreated)
	account := created["card"].(map[string]any)["id"].(string)
	o.ownerJSON("PUT", "/owner/v1/grants/bookmark-spaces/"+friends, map[string]string{"level": "write"}, 200)
	o.ownerJSON("PUT", "/owner/v1/grants/portfolio/"+account, map[string]string{"level": "read"}, 200)
	writer, _ := o.key("write", "writer")
	reader, _ := o.key("read", "reader")

	hostile := `<img src=x onerror=alert(1)>`
	cardPath := "/v1/bookmark-spaces/" + friends + "/cards/" + card["id"].(string)
	if status, _, m := o.send("192.0.2.7", "PATCH", cardPath, writer, map[string]any{"expected_version": card["version"], "name": hostile}); status != 200 {
		t.Fatalf("the writer's rename: %d %v", status, m)
	}
	space := o.spaces()["Friends"]
	if status, _, m := o.send("192.0.2.7", "POST", "/v1/bookmark-spaces/"+friends+"/cards", writer,
		map[string]any{"expected_space_version": space["version"], "address": siteTestAddress(2), "name": "Carol"}); status != 201 {
		t.Fatalf("the writer's add: %d %v", status, m)
	}
	if status, _, _ := o.send("192.0.2.7", "PATCH", cardPath, reader, map[string]any{"expected_version": "x", "name": "y"}); status != fasthttp.StatusForbidden {
		t.Fatalf("the reader's change: %d", status)
	}
	if status, _, m := o.send("192.0.2.7", "GET", "/v1/history/cards/"+account+"/transactions", writer, nil); status != 200 {
		t.Fatalf("the writer's History read: %d %v", status, m)
	}
	o.server.activity.Wait()

	words := func(page siteAnswer) map[string]bool {
		out := map[string]bool{}
		for _, r := range activityRows.FindAllStringSubmatch(page.body, -1) {
			// Names are isolated from the sentence (U+2068 … U+2069).
			out[r[1]+" "+withoutIsolates(r[2])] = true
		}
		return out
	}
	page := c.do("GET", "/activity", nil)
	got := words(page)
	escaped := "&lt;img src=x onerror=alert(1)&gt;"
	for _, want := range []string{
		"writer changed card “" + escaped + "” in Space “Friends”",
		"writer added a card to Space “Friends”",
		"reader was refused: change card “" + escaped + "” in Space “Friends” (403 FORBIDDEN)",
		"writer read the History of Account card “" + rtl + "”",
	} {
		if !got[want] {
			t.Errorf("no line %q in %v", want, got)
		}
	}
	if page.status != 200 || strings.Contains(page.body, "<img src=x") {
		t.Fatalf("the activity page: %d %.3000s", page.status, page.body)
	}
	if !strings.Contains(page.body, `<span class="mono">PATCH /v1/bookmark-spaces/{space_id}/cards/{card_id}</span> · 200 OK`) {
		t.Fatalf("the request is not under its words: %.3000s", page.body)
	}

	changes := c.do("GET", "/activity?changes=1", nil)
	got = words(changes)
	if changes.status != 200 || len(got) != 2 || !got["writer changed card “"+escaped+"” in Space “Friends”"] || !got["writer added a card to Space “Friends”"] ||
		strings.Contains(changes.body, `<tr class="read">`) || strings.Contains(changes.body, `<tr class="refused">`) ||
		!strings.Contains(changes.body, `name="changes" value="1" checked`) {
		t.Fatalf("changes only: %d %v %.3000s", changes.status, got, changes.body)
	}
}
