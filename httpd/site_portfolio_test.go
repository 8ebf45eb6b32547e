package httpd

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// portfolioCards lists the owner's Account cards through the owner API.
func (o *ownerTest) portfolioCards() []map[string]any {
	o.t.Helper()
	_, _, body := o.send("192.0.2.1", "GET", "/owner/v1/portfolio/cards", o.account.OwnerSecret, nil)
	var out []map[string]any
	for _, c := range body["cards"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

func TestSitePortfolioAddsEditsAndDeletesACard(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	hostile := `<img src=x onerror=alert(1)>`
	a := c.post("/portfolio", "/portfolio/cards", url.Values{"address": {csvAddrA}, "name": {hostile}, "note": {"cold"}, "color_key": {"teal"}})
	if a.status != fasthttp.StatusSeeOther || a.location != "/portfolio?m=card-added" {
		t.Fatalf("add: %d to %q: %.300s", a.status, a.location, a.body)
	}
	cards := o.portfolioCards()
	if len(cards) != 1 || cards[0]["name"] != hostile || cards[0]["color_key"] != "teal" || cards[0]["grant"] != "none" {
		t.Fatalf("the card the site added: %v", cards)
	}
	page := c.do("GET", "/portfolio?m=card-added", nil)
	if strings.Contains(page.body, hostile) || !strings.Contains(page.body, "&lt;img src=x onerror=alert(1)&gt;") || !strings.Contains(page.body, "Account card added") {
		t.Fatalf("the portfolio page: %.2000s", page.body)
	}

	// A refused add keeps what was typed and says why, in the API's words.
	a = c.post("/portfolio", "/portfolio/cards", url.Values{"address": {"bc1qnotanaddress"}, "name": {"Typed name"}})
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, `value="Typed name"`) || !strings.Contains(a.body, "address:") {
		t.Fatalf("a refused add: %d %.2000s", a.status, a.body)
	}

	id := cards[0]["id"].(string)
	version := cards[0]["version"].(string)
	edit := c.do("GET", "/portfolio/cards/"+id, nil)
	if edit.status != 200 || !strings.Contains(edit.body, `name="expected_version" value="`+version+`"`) {
		t.Fatalf("the edit page: %d %.1000s", edit.status, edit.body)
	}
	token := formToken(t, edit)
	// An agent (here the owner API) saves first: the site's save is
	// refused, shows the card as it is now and keeps what the owner typed.
	o.send("192.0.2.1", "PATCH", "/owner/v1/portfolio/cards/"+id, o.account.OwnerSecret, map[string]any{"expected_version": version, "name": "Renamed by an agent"})
	a = c.do("POST", "/portfolio/cards/"+id, url.Values{"csrf": {token}, "expected_version": {version}, "name": {"My own name"}, "note": {"mine"}, "color_key": {"blue"}})
	if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "changed while you were editing") ||
		!strings.Contains(a.body, `id="stored-name">Renamed by an agent<`) || !strings.Contains(a.body, `value="My own name"`) {
		t.Fatalf("a stale save: %d %.3000s", a.status, a.body)
	}
	if name := o.portfolioCards()[0]["name"]; name != "Renamed by an agent" {
		t.Fatalf("the stale save overwrote the agent's name: %v", name)
	}
	// Saving again from that page applies the owner's values.
	fresh := regexp.MustCompile(`name="expected_version" value="([^"]+)"`).FindStringSubmatch(a.body)[1]
	a = c.do("POST", "/portfolio/cards/"+id, url.Values{"csrf": {token}, "expected_version": {fresh}, "name": {"My own name"}, "note": {"mine"}, "color_key": {"blue"}})
	if a.status != fasthttp.StatusSeeOther {
		t.Fatalf("save again: %d %.500s", a.status, a.body)
	}
	got := o.portfolioCards()[0]
	if got["name"] != "My own name" || got["note"] != "mine" || got["color_key"] != "blue" {
		t.Fatalf("after the second save: %v", got)
	}

	// Delete goes through a confirmation page.
	confirm := c.do("GET", "/portfolio/cards/"+id+"/delete", nil)
	if confirm.status != 200 || !strings.Contains(confirm.body, "cannot be undone") {
		t.Fatalf("the delete page: %d", confirm.status)
	}
	v := regexp.MustCompile(`name="expected_version" value="([^"]+)"`).FindStringSubmatch(confirm.body)[1]
	a = c.do("POST", "/portfolio/cards/"+id+"/delete", url.Values{"csrf": {token}, "expected_version": {v}})
	if a.status != fasthttp.StatusSeeOther || len(o.portfolioCards()) != 0 {
		t.Fatalf("delete: %d, %d cards left", a.status, len(o.portfolioCards()))
	}
}

func TestSitePortfolioValidatesWithTheAPIsRules(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	token := formToken(t, c.do("GET", "/portfolio", nil))
	check := func(form url.Values) map[string]any {
		t.Helper()
		form.Set("csrf", token)
		a := c.do("POST", "/portfolio/validate", form)
		var m map[string]any
		if a.status != 200 || json.Unmarshal([]byte(a.body), &m) != nil {
			t.Fatalf("validate: %d %s", a.status, a.body)
		}
		return m
	}
	if m := check(url.Values{"address": {csvAddrA}, "name": {"ok"}}); m["valid"] != true {
		t.Fatalf("a good card: %v", m)
	}
	if m := check(url.Values{"address": {"LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA"}}); m["valid"] != false || m["code"] != string(actors.CodeValidation) || !strings.Contains(m["error"].(string), "address:") {
		t.Fatalf("a litecoin address: %v", m)
	}
	if m := check(url.Values{"address": {csvAddrA}, "name": {strings.Repeat("n", 101)}}); m["valid"] != false || !strings.Contains(m["error"].(string), "name must be at most 100") {
		t.Fatalf("a long name: %v", m)
	}
	if len(o.portfolioCards()) != 0 {
		t.Fatal("validation added a card")
	}
	// Without the form token the check is refused like any form.
	if a := c.do("POST", "/portfolio/validate", url.Values{"address": {csvAddrA}}); a.status != fasthttp.StatusForbidden {
		t.Fatalf("validate without the token: %d", a.status)
	}
}
