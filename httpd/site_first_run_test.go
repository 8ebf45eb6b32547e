package httpd

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// startStep finds a step of the Portfolio's getting-started list: its
// class ("done" or "") and its link.
func startStep(t *testing.T, page siteAnswer, id string) (class, link string) {
	t.Helper()
	m := regexp.MustCompile(`<li id="` + id + `"(?: class="([a-z]+)")?>(?:<span class="tick" aria-hidden="true">✓</span> )?<a href="([^"]*)">`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no step %s on the Portfolio: %.4000s", id, page.body)
	}
	return m[1], m[2]
}

// Signing in lands on the Portfolio. While the account holds nothing to
// watch, it lists the steps that set it up, each a link to the page (and
// the form) that does it; a step done is ticked, and the list goes once
// the account holds a card.
func TestSiteSignInLandsOnThePortfolioWithGettingStarted(t *testing.T) {
	t.Parallel()
	c, o := newNotifySiteOn(t, actors.PlanBase) // signed in: mustSignIn wants the 303 to /portfolio
	page := c.do("GET", "/portfolio", nil)
	if page.status != 200 || !strings.Contains(page.body, `<section class="card" aria-labelledby="start-heading" id="getting-started">`) {
		t.Fatalf("a new account's Portfolio: %d %.3000s", page.status, page.body)
	}
	want := map[string][2]string{
		"start-card":    {"", "#card-address"},
		"start-space":   {"done", "/spaces"}, // every account starts with one Space
		"start-key":     {"", "/access#create-heading"},
		"start-channel": {"", "/notifications#add-channel-heading"},
	}
	for id, w := range want {
		if class, link := startStep(t, page, id); class != w[0] || link != w[1] {
			t.Errorf("step %s: class %q link %q, want %q %q", id, class, link, w[0], w[1])
		}
	}
	if !strings.Contains(page.body, "you have 1 Space (“Bitcoin”)") {
		t.Errorf("the Space step does not name the Space: %.3000s", page.body)
	}
	// Each link leads to the form it names.
	for path, target := range map[string]string{"/portfolio": `id="card-address"`, "/access": `id="create-heading"`, "/notifications": `id="add-channel-heading"`, "/spaces": `id="new-space-heading"`} {
		if p := c.do("GET", path, nil); !strings.Contains(p.body, target) {
			t.Errorf("%s has no %s", path, target)
		}
	}

	// A key and a channel are ticked once they exist.
	o.key("read", "bot")
	if a := c.post("/notifications", "/notifications/channels", url.Values{"kind": {"ntfy"}, "name": {"phone"}, "where": {"https://ntfy.example/topic-first-run"}}); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("add a channel: %d %.1000s", a.status, a.body)
	}
	page = c.do("GET", "/portfolio", nil)
	for _, id := range []string{"start-key", "start-channel"} {
		if class, _ := startStep(t, page, id); class != "done" {
			t.Errorf("step %s after it was done: %q", id, class)
		}
	}

	// A bookmark card in the Space is something to watch: the list goes.
	space := o.spaces()["Bitcoin"]
	o.ownerJSON("POST", "/owner/v1/bookmark-spaces/"+space["id"].(string)+"/cards", map[string]any{"expected_space_version": space["version"], "address": csvAddrB}, fasthttp.StatusCreated)
	if page = c.do("GET", "/portfolio", nil); strings.Contains(page.body, "getting-started") {
		t.Fatalf("the list stays after a bookmark card: %.3000s", page.body)
	}
	// And so is an Account card, on its own.
	o2 := newOwnerTest(t)
	c2 := newSiteClient(o2)
	c2.mustSignIn()
	if a := c2.post("/portfolio", "/portfolio/cards", url.Values{"address": {csvAddrA}, "name": {"Cold"}}); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("add a card: %d", a.status)
	}
	if page = c2.do("GET", "/portfolio", nil); page.status != 200 || strings.Contains(page.body, "getting-started") || !strings.Contains(page.body, "Cold") {
		t.Fatalf("the list stays after an Account card: %.3000s", page.body)
	}
}
