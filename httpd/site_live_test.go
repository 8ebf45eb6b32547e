package httpd

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

var liveCursor = regexp.MustCompile(`data-live-cursor="(\d+)"`)

func TestSiteLiveListsTheChangesAfterThePage(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	page := c.do("GET", "/portfolio", nil)
	m := liveCursor.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the page has no live cursor: %.500s", page.body)
	}
	live := func(after string) (int, map[string]any) {
		a := c.do("GET", "/live?after="+after, nil)
		var body map[string]any
		json.Unmarshal([]byte(a.body), &body)
		return a.status, body
	}
	if status, body := live(m[1]); status != 200 || len(body["changes"].([]any)) != 0 || body["gap"] != false {
		t.Fatalf("nothing changed yet: %d %v", status, body)
	}
	_, _, created := o.send("192.0.2.1", "POST", "/owner/v1/portfolio/cards", o.account.OwnerSecret, map[string]any{"address": csvAddrA})
	id := created["card"].(map[string]any)["id"].(string)
	status, body := live(m[1])
	changes := body["changes"].([]any)
	if status != 200 || len(changes) != 1 {
		t.Fatalf("after a card was added: %d %v", status, body)
	}
	change := changes[0].(map[string]any)
	if change["kind"] != "portfolio_changed" || change["resource"].(map[string]any)["id"] != id || change["by_agent"] != false {
		t.Fatalf("the change: %v", change)
	}
	if status, body := live("x"); status != fasthttp.StatusUnprocessableEntity || !strings.Contains(body["error"].(string), "cursor") {
		t.Fatalf("a bad cursor: %d %v", status, body)
	}
	if status, _ := live("99999"); status != fasthttp.StatusUnprocessableEntity {
		t.Fatalf("a cursor from the future: %d", status)
	}
}

// An open page polls /live on its own every second: that must not keep
// an idle session alive, while the owner's own requests do.
func TestSiteLivePollsDoNotExtendTheSession(t *testing.T) {
	t.Parallel()
	for _, ownerActs := range []bool{false, true} {
		o := newOwnerTest(t)
		c := newSiteClient(o)
		c.mustSignIn()
		cursor := liveCursor.FindStringSubmatch(c.do("GET", "/portfolio", nil).body)[1]
		o.server.use.wait() // the sign-in's own use, recorded in the background
		o.clock.advance(20 * time.Minute)
		for range 5 {
			if a := c.do("GET", "/live?after="+cursor, nil); a.status != 200 {
				t.Fatalf("poll: %d", a.status)
			}
		}
		if ownerActs {
			c.do("GET", "/portfolio", nil)
		}
		o.server.use.wait()
		o.clock.advance(15 * time.Minute)
		a := c.do("GET", "/portfolio", nil)
		if alive := a.status == 200; alive != ownerActs {
			t.Fatalf("owner acted %v: at 35 minutes the session answers %d to %q", ownerActs, a.status, a.location)
		}
	}
}
