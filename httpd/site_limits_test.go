package httpd

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The base plan's one Space: the Spaces page says the limit and the way
// to raise it in place of a create form that could only fail, a create
// sent anyway (a page drawn before the last Space was made) answers in the
// same words, and the plan's change brings the form back.
func TestSiteSpacesSayThePlansLimitAndTheWayToRaiseIt(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	const limit = "Your plan (base) allows 1 Space; you have 1. The extended plan allows 10 Spaces: change the plan in Account settings, or delete a Space you no longer need to make another."
	page := c.do("GET", "/spaces", nil)
	if page.status != 200 || strings.Contains(page.body, `id="create-space"`) || !strings.Contains(page.body, `<div class="plan-limit" id="spaces-limit">`) ||
		!strings.Contains(page.body, limit) || !strings.Contains(page.body, `<a href="/settings#plan-heading">Change the plan in Account settings</a>`) {
		t.Fatalf("the base plan's Spaces page: %d %.3000s", page.status, page.body)
	}
	if settings := c.do("GET", "/settings", nil); !strings.Contains(settings.body, `id="plan-heading"`) {
		t.Fatal("the settings page has no #plan-heading to link to")
	}
	// The create form of a page drawn before (another tab's, the plan's
	// change back to base), sent with the current revision.
	revision := o.ownerJSON("GET", "/owner/v1/bookmark-spaces", nil, 200)["bookmark_revision"].(string)
	a := c.do("POST", "/spaces", url.Values{"csrf": {formToken(t, page)}, "expected_bookmark_revision": {revision}, "name": {"Second"}, "type": {"bitcoin"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, `<p class="problem" role="alert">The Space was not created. `+limit+`</p>`) || strings.Contains(a.body, `id="create-space"`) {
		t.Fatalf("a create past the limit: %d %.3000s", a.status, a.body)
	}
	if len(o.spaces()) != 1 {
		t.Fatalf("a Space was created past the limit: %v", o.spaces())
	}
	o.ownerJSON("PUT", "/owner/v1/plan", map[string]string{"plan": "extended"}, 200)
	if page = c.do("GET", "/spaces", nil); !strings.Contains(page.body, `id="create-space"`) || strings.Contains(page.body, "spaces-limit") {
		t.Fatalf("the extended plan's Spaces page: %.3000s", page.body)
	}
}

// The limits no plan raises (a Space's cards, the Portfolio's cards, API
// keys, notification channels) say so and what to remove instead, in
// place of the form; an add sent from a page drawn before the limit was
// reached answers with the limit and what the owner typed.
func TestSiteFullFormsSayTheLimitAndKeepWhatWasTyped(t *testing.T) {
	t.Parallel()
	c, o := newNotifySiteOn(t, actors.PlanBase)
	space := o.spaces()["Bitcoin"]
	id := space["id"].(string)
	addPage := c.do("GET", "/spaces/"+id, nil)
	for i := range 10 {
		space = o.spaces()["Bitcoin"]
		o.ownerJSON("POST", "/owner/v1/bookmark-spaces/"+id+"/cards", map[string]any{"expected_space_version": space["version"], "address": siteTestAddress(100 + i)}, fasthttp.StatusCreated)
	}
	const spaceLimit = "Your plan (base) allows 10 cards in a Space; this one holds 10. No plan allows more: delete a card of this Space or move one out, or add the card to another Space."
	page := c.do("GET", "/spaces/"+id, nil)
	if strings.Contains(page.body, `id="add-bookmark"`) || !strings.Contains(page.body, spaceLimit) || strings.Contains(page.body, "/settings#plan-heading") {
		t.Fatalf("a full Space: %.3000s", page.body)
	}
	a := c.do("POST", "/spaces/"+id+"/cards", url.Values{"csrf": {formToken(t, addPage)}, "expected_space_version": {hidden(t, addPage, "expected_space_version")},
		"address": {siteTestAddress(200)}, "name": {"Typed"}, "note": {"a note I typed"}})
	if a.status/100 != 4 || !strings.Contains(a.body, "The card was not added. "+spaceLimit+" You typed: address “"+siteTestAddress(200)+"”, name “Typed”, note “a note I typed”.") {
		t.Fatalf("an add to a full Space: %d %.3000s", a.status, a.body)
	}

	portfolio := c.do("GET", "/portfolio", nil)
	for i := range 10 {
		o.ownerJSON("POST", "/owner/v1/portfolio/cards", map[string]any{"address": siteTestAddress(300 + i)}, fasthttp.StatusCreated)
	}
	const cardsLimit = "Your plan (base) allows 10 Account cards; you have 10. No plan allows more: delete an Account card, or move one into a Bitcoin Space, to add another."
	if page = c.do("GET", "/portfolio", nil); strings.Contains(page.body, `id="add-card"`) || !strings.Contains(page.body, cardsLimit) {
		t.Fatalf("a full Portfolio: %.3000s", page.body)
	}
	a = c.do("POST", "/portfolio/cards", url.Values{"csrf": {formToken(t, portfolio)}, "address": {siteTestAddress(400)}, "name": {"Typed"}, "note": {"kept"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "The card was not added. "+cardsLimit+" You typed: address “"+siteTestAddress(400)+"”, name “Typed”, note “kept”.") {
		t.Fatalf("an add to a full Portfolio: %d %.3000s", a.status, a.body)
	}

	access := c.do("GET", "/access", nil)
	for i := range 100 {
		o.key("read", fmt.Sprintf("k%d", i))
	}
	const keysLimit = "An account holds at most 100 API keys, on every plan; you have 100. No plan allows more: revoke a key no agent uses any more to create another."
	if page = c.do("GET", "/access", nil); strings.Contains(page.body, `action="/access/keys"`) || !strings.Contains(page.body, keysLimit) {
		t.Fatalf("a full key list: %.3000s", page.body)
	}
	a = c.do("POST", "/access/keys", url.Values{"csrf": {formToken(t, access)}, "name": {"one more"}, "capability": {"read"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "The key was not created. "+keysLimit) {
		t.Fatalf("a key past the limit: %d %.3000s", a.status, a.body)
	}

	channels := c.do("GET", "/notifications", nil)
	for i := range 10 {
		if a := c.post("/notifications", "/notifications/channels", url.Values{"kind": {"ntfy"}, "name": {fmt.Sprint("n", i)}, "where": {fmt.Sprint("https://ntfy.example/topic-limit-", i)}}); a.status != fasthttp.StatusSeeOther {
			t.Fatalf("channel %d: %d", i, a.status)
		}
	}
	const channelsLimit = "An account holds at most 10 notification channels, on every plan; you have 10. No plan allows more: delete a channel to add another."
	if page = c.do("GET", "/notifications", nil); strings.Contains(page.body, `id="add-channel"`) || !strings.Contains(page.body, channelsLimit) {
		t.Fatalf("a full channel list: %.3000s", page.body)
	}
	a = c.do("POST", "/notifications/channels", url.Values{"csrf": {formToken(t, channels)}, "kind": {"ntfy"}, "name": {"eleventh"}, "where": {"https://ntfy.example/topic-eleventh"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "The channel was not added. "+channelsLimit) {
		t.Fatalf("a channel past the limit: %d %.3000s", a.status, a.body)
	}
}
