package httpd

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/keys"
	"github.com/addrwatch/addrwatch/notify/send"
)

// Post/redirect/get: every form that does something answers 303 to a GET
// page, so a reload or Back repeats nothing, and a secret a form made is
// shown by that page once, from a flash cookie only this session can
// open on that page (site/flash.go).

// countingTester is fakeTester counting the tests it sends.
type countingTester struct {
	fakeTester
	sent atomic.Int32
}

func (c *countingTester) Test(ctx context.Context, id string, ch actors.NotifyChannelTarget, at time.Time) send.Outcome {
	c.sent.Add(1)
	return c.fakeTester.Test(ctx, id, ch, at)
}

// checkFlashRedirect checks a form's answer: 303 to page, the page's flash
// cookie HttpOnly, SameSite=Strict, scoped to the page and short-lived,
// and no secret in the redirect.
func checkFlashRedirect(t *testing.T, what string, a siteAnswer, page string) {
	t.Helper()
	if a.status != fasthttp.StatusSeeOther || a.location != page {
		t.Fatalf("%s: %d to %q, want 303 to %s: %.300s", what, a.status, a.location, page, a.body)
	}
	ck := a.cookies["addrwatch_flash"]
	if ck == nil {
		t.Fatalf("%s: no flash cookie", what)
	}
	if !ck.HTTPOnly() || ck.SameSite() != fasthttp.CookieSameSiteStrictMode || string(ck.Path()) != page || ck.MaxAge() <= 0 || ck.MaxAge() > 60 {
		t.Fatalf("%s: flash cookie %s: want HttpOnly, SameSite=Strict, Path=%s, Max-Age at most 60", what, ck, page)
	}
}

// reloadShowsNoSecret reloads a result page and checks that the secret is
// not on it and that it says it was shown once.
func reloadShowsNoSecret(t *testing.T, c *siteClient, what, page, secret string) {
	t.Helper()
	again := c.do("GET", page, nil)
	if again.status != 200 || strings.Contains(again.body, secret) || !strings.Contains(again.body, "was shown once and cannot be shown again") {
		t.Fatalf("%s reloaded: %d, secret shown again %v: %.1500s", what, again.status, strings.Contains(again.body, secret), again.body)
	}
	if got := string(again.header.Peek(fasthttp.HeaderCacheControl)); got != "no-store" {
		t.Fatalf("%s: Cache-Control %q", what, got)
	}
}

func TestSiteKeyCreationIsPostRedirectGet(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	page, post := c.submit("/access", "/access/keys", url.Values{"name": {"bot"}, "capability": {"read"}})
	checkFlashRedirect(t, "create a key", post, "/access/keys/created")
	key := regexp.MustCompile(`value="(awk\.[^"]+)"`).FindStringSubmatch(page.body)
	if page.status != 200 || key == nil {
		t.Fatalf("the key page: %d %.600s", page.status, page.body)
	}
	if strings.Contains(post.location, key[1]) || strings.Contains(post.body, key[1]) {
		t.Fatal("the key is in the redirect")
	}
	if got := string(page.header.Peek(fasthttp.HeaderCacheControl)); got != "no-store" {
		t.Fatalf("the key page's Cache-Control: %q", got)
	}
	if _, still := c.cookies["addrwatch_flash"]; still {
		t.Fatal("the flash cookie was not cleared once shown")
	}
	reloadShowsNoSecret(t, c, "the key page", "/access/keys/created", key[1])
	if n := o.keyCount(); n != 1 {
		t.Fatalf("%d keys after one create and a reload", n)
	}
	// Back to the panel and forward again: nothing more.
	c.do("GET", "/access", nil)
	reloadShowsNoSecret(t, c, "the key page after Back", "/access/keys/created", key[1])
	if n := o.keyCount(); n != 1 {
		t.Fatalf("%d keys after Back and forward", n)
	}
}

// A flash cookie is useless to anyone but the session that made it, and
// on any page but its own; and a replayed one is refused where it was
// shown.
func TestSiteFlashOpensOnlyForItsSessionAndPage(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	post := c.post("/access", "/access/keys", url.Values{"capability": {"write"}})
	stolen := c.cookies["addrwatch_flash"]

	other := newSiteClient(o) // another session of the same owner
	other.mustSignIn()
	other.cookies["addrwatch_flash"] = stolen
	if a := other.do("GET", post.location, nil); strings.Contains(a.body, "awk.") || !strings.Contains(a.body, "shown once") {
		t.Fatalf("another session opened the flash: %.600s", a.body)
	}
	c.cookies["addrwatch_flash"] = stolen
	if a := c.do("GET", "/settings/secret", nil); strings.Contains(a.body, "awk.") {
		t.Fatal("another page opened the flash")
	}
	c.cookies["addrwatch_flash"] = stolen
	if a := c.do("GET", post.location, nil); !strings.Contains(a.body, "awk.") {
		t.Fatalf("the session's own page did not open its flash: %.600s", a.body)
	}
	c.cookies["addrwatch_flash"] = stolen // replayed after it was shown
	if a := c.do("GET", post.location, nil); strings.Contains(a.body, "awk.") {
		t.Fatal("a replayed flash was shown again")
	}
}

func TestSiteOwnerSecretIsShownOnceAfterARedirect(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	ownerSecret := regexp.MustCompile(`value="(aws\.[^"]+)"`)
	page, post := c.submit("/settings", "/settings/owner-secret", url.Values{"current_password": {o.password}})
	checkFlashRedirect(t, "rotate the owner secret", post, "/settings/secret")
	secret := ownerSecret.FindStringSubmatch(page.body)
	if secret == nil || !strings.Contains(page.body, "Owner secret rotated") {
		t.Fatalf("the secret page: %d %.600s", page.status, page.body)
	}
	reloadShowsNoSecret(t, c, "the owner secret page", "/settings/secret", secret[1])
	if status, _, _ := o.send("192.0.2.1", "GET", "/owner/v1/keys", secret[1], nil); status != 200 {
		t.Fatalf("the shown secret does not work after the reload (rotated again?): %d", status)
	}
	o.account.OwnerSecret = secret[1]

	page, post = c.submit("/settings", "/settings/password", url.Values{"current_password": {o.password}, "new_password": {"a new password"}, "repeat_password": {"a new password"}})
	checkFlashRedirect(t, "change the password", post, "/settings/secret")
	secret = ownerSecret.FindStringSubmatch(page.body)
	if secret == nil || !strings.Contains(page.body, "Password changed") {
		t.Fatalf("the password page: %d %.600s", page.status, page.body)
	}
	reloadShowsNoSecret(t, c, "the password page", "/settings/secret", secret[1])
	if status, _, _ := o.send("192.0.2.1", "GET", "/owner/v1/keys", secret[1], nil); status != 200 {
		t.Fatalf("the shown secret does not work after the reload: %d", status)
	}
}

func TestSiteWebhookSecretAndTestAreRedirects(t *testing.T) {
	t.Parallel()
	tester := &countingTester{}
	key, err := keys.Generate()
	if err != nil {
		t.Fatal(err)
	}
	c, o := newConfiguredSite(t, actors.PlanExtended, func(cfg *Config) {
		cfg.NotifyKey, cfg.NotifyEgress, cfg.NotifyTester = key, fakeEgress{}, tester
	})
	page, post := c.submit("/notifications", "/notifications/channels", url.Values{"kind": {"webhook"}, "name": {siteHostileName}, "where": {"https://hooks.example/x"}})
	checkFlashRedirect(t, "add a webhook", post, "/notifications/secret")
	m := shownSecret.FindStringSubmatch(page.body)
	if m == nil || !strings.Contains(page.body, "Webhook added") || strings.Contains(page.body, "<script>alert") {
		t.Fatalf("the webhook's secret page: %.1500s", page.body)
	}
	reloadShowsNoSecret(t, c, "the webhook's secret page", "/notifications/secret", m[1])
	if n := len(o.ntChannels()); n != 1 {
		t.Fatalf("%d channels after one add and a reload", n)
	}
	hook := o.ntChannels()[0]["id"].(string)

	page, post = c.submit("/notifications", "/notifications/channels/"+hook+"/secret", url.Values{"grace": {"3600"}})
	checkFlashRedirect(t, "rotate a webhook's secret", post, "/notifications/secret")
	rotated := shownSecret.FindStringSubmatch(page.body)
	if rotated == nil || rotated[1] == m[1] || !strings.Contains(page.body, "signed with both the old and the new one") {
		t.Fatalf("the rotation's page: %.1500s", page.body)
	}
	reloadShowsNoSecret(t, c, "the rotation's page", "/notifications/secret", rotated[1])

	page, post = c.submit("/notifications", "/notifications/channels/"+hook+"/test", nil)
	checkFlashRedirect(t, "test a channel", post, "/notifications/tested")
	if !strings.Contains(page.body, "Test delivered (answer 250, 12 ms)") || tester.sent.Load() != 1 {
		t.Fatalf("the test's page (%d sent): %.600s", tester.sent.Load(), page.body)
	}
	again := c.do("GET", "/notifications/tested", nil)
	if again.status != 200 || strings.Contains(again.body, "Test delivered") || tester.sent.Load() != 1 {
		t.Fatalf("the test's page reloaded: %d, %d sent", again.status, tester.sent.Load())
	}
}

func TestSiteAccountDeletionRedirectsToSignIn(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	post := c.post("/settings/delete", "/settings/delete", url.Values{"confirm": {o.account.AccountID}, "current_password": {o.password}})
	if post.status != fasthttp.StatusSeeOther || post.location != "/?m=deleted" || c.cookies[sessionCookie] != "" {
		t.Fatalf("delete: %d to %q", post.status, post.location)
	}
	if page := c.do("GET", post.location, nil); !strings.Contains(page.body, "The account and everything in it are deleted") {
		t.Fatalf("the sign-in page after a deletion: %.600s", page.body)
	}
}

// A conflict page answers a refused POST and shows what the owner typed;
// sending that POST again (a reload) is refused the same way, since it
// carries the version the page was drawn from: nothing changes.
func TestSiteConflictPageReloadChangesNothing(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	card := o.ownerPost("/portfolio/cards", map[string]any{"address": someAddress(t, 1), "name": "first"}, "card")
	id, version := card["id"].(string), card["version"].(string)
	o.ownerJSON("PATCH", "/owner/v1/portfolio/cards/"+id, map[string]any{"expected_version": version, "name": "by an agent"}, fasthttp.StatusOK)
	form := url.Values{"expected_version": {version}, "name": {"mine"}, "note": {""}}
	for i := range 2 { // the POST, then its reload
		a := c.post("/portfolio/cards/"+id, "/portfolio/cards/"+id, form)
		if a.status != fasthttp.StatusConflict || !strings.Contains(a.body, "This card changed while you were editing it") {
			t.Fatalf("send %d: %d %.300s", i+1, a.status, a.body)
		}
	}
	now := o.ownerJSON("GET", "/owner/v1/portfolio/cards/"+id, nil, fasthttp.StatusOK)["card"].(map[string]any)
	if now["name"] != "by an agent" {
		t.Fatalf("the conflict's reload changed the card: %v", now)
	}
}
