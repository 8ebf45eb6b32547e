package httpd

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/keys"
	"github.com/addrwatch/addrwatch/notify/send"
)

// The site's notification pages over the real handlers: channels with a
// webhook's secret shown once, rules read from BTC with each bad field
// said beside it, the delivery log with "send again", the notification
// centre and its badge, the Portfolio's last activity; every form refused
// without its token or from another origin; hostile names as text.

// fakeEgress refuses a URL naming 127.0.0.1 as a send would, and accepts
// any other.
type fakeEgress struct{}

func (fakeEgress) Check(_ context.Context, raw string) error {
	if strings.Contains(raw, "127.0.0.1") {
		return &egress.Error{Class: "refused_target", Detail: "the host resolves to a loopback address"}
	}
	return nil
}

// fakeTester sends email, and its tests of a channel named "down" fail.
type fakeTester struct{}

func (fakeTester) Test(_ context.Context, _ string, ch actors.NotifyChannelTarget, _ time.Time) send.Outcome {
	if ch.Name == "down" {
		return send.Outcome{Status: 503, Latency: 31 * time.Millisecond, Class: "answer", Detail: "the receiver answered 503 <b>"}
	}
	return send.Outcome{Delivered: true, Status: 250, Latency: 12 * time.Millisecond}
}

func (fakeTester) SendsEmail() bool { return true }

// newNotifySite is an extended-plan account with a notify key and a
// deliverer that sends email, signed in through the site.
func newNotifySite(t *testing.T) (*siteClient, *ownerTest) {
	t.Helper()
	return newNotifySiteOn(t, actors.PlanExtended)
}

// newNotifySiteOn is newNotifySite on plan.
func newNotifySiteOn(t *testing.T, plan actors.Plan) (*siteClient, *ownerTest) {
	t.Helper()
	key, err := keys.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return newConfiguredSite(t, plan, func(cfg *Config) {
		cfg.NotifyKey, cfg.NotifyEgress, cfg.NotifyTester = key, fakeEgress{}, fakeTester{}
	})
}

var shownSecret = regexp.MustCompile(`id="webhook-secret" value="(whsec_[^"]+)"`)

// ntChannels lists the channels through the owner API.
func (o *ownerTest) ntChannels() []map[string]any {
	o.t.Helper()
	var out []map[string]any
	for _, ch := range o.ownerJSON("GET", "/owner/v1/notifications/channels", nil, 200)["channels"].([]any) {
		out = append(out, ch.(map[string]any))
	}
	return out
}

// system proposes p as the system, as the follower and the deliverer do.
func (o *ownerTest) system(p actors.Payload) actors.Result {
	o.t.Helper()
	res, err := o.server.store.Propose(context.Background(), &actors.Command{Account: o.account.AccountID, At: o.clock.now().UnixNano(),
		Principal: actors.Principal{Kind: actors.PrincipalSystem}, Payload: p})
	if err != nil {
		o.t.Fatalf("%T: %v", p, err)
	}
	return res
}

// observe tells the account of txs of address at a tip of 900.
func (o *ownerTest) observe(address string, txs ...actors.TxObservation) {
	o.t.Helper()
	o.system(&actors.ObserveChain{ObserveAddress: actors.ObserveAddress{Address: address, TipHeight: 900, TipHash: strings.Repeat("9", 64),
		Confirmed: actors.AddressTotals{FundedSat: 1, TxCount: 1}, Txs: txs}})
}

func TestSiteNotificationChannels(t *testing.T) {
	t.Parallel()
	c, o := newNotifySite(t)
	const token = "t0ken-in-the-path"
	page := c.do("GET", "/notifications", nil)
	if page.status != 200 || !strings.Contains(page.body, `href="/notifications" aria-current="page"`) || !strings.Contains(page.body, "No channels yet") {
		t.Fatalf("the empty page: %d %.400s", page.status, page.body)
	}

	// A webhook: the answer shows its secret, once.
	a, _ := c.submit("/notifications", "/notifications/channels", url.Values{"kind": {"webhook"}, "name": {siteHostileName}, "where": {"https://hooks.example/" + token}})
	m := shownSecret.FindStringSubmatch(a.body)
	if a.status != 200 || m == nil {
		t.Fatalf("adding a webhook: %d %.600s", a.status, a.body)
	}
	secret := m[1]
	if strings.Contains(a.body, "<script>alert") || !strings.Contains(a.body, "&lt;script&gt;") {
		t.Errorf("the hostile name is not text on the secret page")
	}
	list := c.do("GET", "/notifications", nil)
	for _, hidden := range []string{secret, token, "<script>alert", "<img src=x"} {
		if strings.Contains(list.body, hidden) {
			t.Errorf("the channels page holds %q", hidden)
		}
	}
	if !strings.Contains(list.body, "https://hooks.example/…") || !strings.Contains(list.body, "Active, nothing sent yet") {
		t.Errorf("the webhook's row: %.2000s", list.body)
	}
	hook := o.ntChannels()[0]["id"].(string)

	// ntfy and email: no secret page.
	a = c.post("/notifications", "/notifications/channels", url.Values{"kind": {"ntfy"}, "name": {"phone"}, "where": {"https://ntfy.example/topic-" + token}})
	if a.status != 303 || a.location != "/notifications?m=channel-added" {
		t.Fatalf("adding ntfy: %d %q %.300s", a.status, a.location, a.body)
	}
	a = c.post("/notifications", "/notifications/channels", url.Values{"kind": {"email"}, "name": {"me"}, "where": {"Owner <owner@example.com>"}})
	if a.status != 303 {
		t.Fatalf("adding email: %d %.300s", a.status, a.body)
	}
	if chs := o.ntChannels(); len(chs) != 3 || chs[2]["display"] != "owner@example.com" {
		t.Fatalf("channels %v", chs)
	}

	// A refused URL says why and is not given back (it may hold a token).
	a = c.post("/notifications", "/notifications/channels", url.Values{"kind": {"webhook"}, "name": {"lab"}, "where": {"http://127.0.0.1/" + token}})
	if a.status != 422 || !strings.Contains(a.body, "loopback") || strings.Contains(a.body, token) || !strings.Contains(a.body, `value="lab"`) {
		t.Errorf("a loopback URL: %d %.3000s", a.status, a.body)
	}
	a = c.post("/notifications", "/notifications/channels", url.Values{"kind": {"sms"}, "name": {"x"}, "where": {"x"}})
	if a.status != 422 || !strings.Contains(a.body, "kind must be webhook, ntfy or email") {
		t.Errorf("an unknown kind: %d", a.status)
	}

	// Rename, disable, enable, rotate (a new secret, shown once), delete.
	if a = c.post("/notifications", "/notifications/channels/"+hook+"/name", url.Values{"name": {"renamed"}}); a.status != 303 {
		t.Fatalf("rename: %d %.300s", a.status, a.body)
	}
	if a = c.post("/notifications", "/notifications/channels/"+hook+"/enabled", url.Values{"enabled": {"false"}}); a.status != 303 || a.location != "/notifications?m=channel-disabled" {
		t.Fatalf("disable: %d %q", a.status, a.location)
	}
	if ch := o.ntChannels()[0]; ch["name"] != "renamed" || ch["enabled"] != false {
		t.Fatalf("after rename and disable: %v", ch)
	}
	if body := c.do("GET", "/notifications", nil).body; !strings.Contains(body, "Disabled by you") || !strings.Contains(body, ">Enable<") {
		t.Errorf("a disabled channel's row")
	}
	c.post("/notifications", "/notifications/channels/"+hook+"/enabled", url.Values{"enabled": {"true"}})
	a, _ = c.submit("/notifications", "/notifications/channels/"+hook+"/secret", nil)
	m = shownSecret.FindStringSubmatch(a.body)
	if a.status != 200 || m == nil || m[1] == secret {
		t.Fatalf("rotate: %d %.300s", a.status, a.body)
	}
	if strings.Contains(c.do("GET", "/notifications", nil).body, m[1]) {
		t.Error("the rotated secret is on the page after it was shown")
	}
	// Rotate keeping the old secret for an hour: the page says until
	// when, and so does the channel's row; a grace not offered is refused.
	a, _ = c.submit("/notifications", "/notifications/channels/"+hook+"/secret", url.Values{"grace": {"3600"}})
	if a.status != 200 || shownSecret.FindStringSubmatch(a.body) == nil || !strings.Contains(a.body, "signed with both the old and the new one") {
		t.Fatalf("rotate with a grace: %d %.3000s", a.status, a.body)
	}
	if body := c.do("GET", "/notifications", nil).body; !strings.Contains(body, "the old secret also signs until") {
		t.Errorf("the channel's row does not say the old secret still signs")
	}
	if a = c.post("/notifications", "/notifications/channels/"+hook+"/secret", url.Values{"grace": {"7"}}); a.status != 422 || !strings.Contains(a.body, "how long the old secret keeps working") {
		t.Errorf("a grace the form does not offer: %d", a.status)
	}
	// Send a test: how it went, on the page.
	a, _ = c.submit("/notifications", "/notifications/channels/"+hook+"/test", nil)
	if a.status != 200 || !strings.Contains(a.body, "Test delivered (answer 250, 12 ms)") {
		t.Errorf("a test: %d %.300s", a.status, a.body)
	}
	c.post("/notifications", "/notifications/channels/"+hook+"/name", url.Values{"name": {"down"}})
	a, _ = c.submit("/notifications", "/notifications/channels/"+hook+"/test", nil)
	if a.status != 200 || !strings.Contains(a.body, "The test was not delivered (answer 503, 31 ms). answer: the receiver answered 503 &lt;b&gt;") {
		t.Errorf("a failed test: %d", a.status)
	}
	if a = c.post("/notifications", "/notifications/channels/nc_nope/test", nil); a.status != 404 {
		t.Errorf("a test of no channel: %d", a.status)
	}
	confirm := c.do("GET", "/notifications/channels/"+hook+"/delete", nil)
	if confirm.status != 200 || !strings.Contains(confirm.body, "Delete the channel") {
		t.Fatalf("the confirmation: %d", confirm.status)
	}
	if a = c.post("/notifications/channels/"+hook+"/delete", "/notifications/channels/"+hook+"/delete", nil); a.status != 303 || len(o.ntChannels()) != 2 {
		t.Fatalf("delete: %d, %d channels left", a.status, len(o.ntChannels()))
	}
	if a = c.do("GET", "/notifications/channels/"+hook+"/delete", nil); a.status != 404 {
		t.Errorf("a deleted channel's confirmation: %d", a.status)
	}
}

// Every notification form is refused (403, nothing changed) without the
// session's token or from another origin.
func TestSiteNotificationFormsNeedTheTokenAndOurOrigin(t *testing.T) {
	t.Parallel()
	c, o := newNotifySite(t)
	c.post("/notifications", "/notifications/channels", url.Values{"kind": {"email"}, "name": {"me"}, "where": {"owner@example.com"}})
	id := o.ntChannels()[0]["id"].(string)
	csrf := formToken(t, c.do("GET", "/notifications", nil))
	forms := map[string]url.Values{
		"/notifications/channels":                    {"kind": {"email"}, "name": {"x"}, "where": {"x@example.com"}},
		"/notifications/channels/" + id + "/name":    {"name": {"x"}},
		"/notifications/channels/" + id + "/enabled": {"enabled": {"false"}},
		"/notifications/channels/" + id + "/secret":  {},
		"/notifications/channels/" + id + "/delete":  {},
		"/notifications/rules/default":               {"depth": {"3"}},
		"/notifications/rules/default/delete":        {},
		"/notifications/deliveries/nd_x/redeliver":   {},
	}
	for path, form := range forms {
		a := c.do("POST", path, form) // no token
		if a.status != 403 {
			t.Errorf("%s without a token: %d", path, a.status)
		}
		withToken := url.Values{"csrf": {csrf}}
		for k, v := range form {
			withToken[k] = v
		}
		c.origin = "http://evil.example"
		if a := c.do("POST", path, withToken); a.status != 403 {
			t.Errorf("%s from another origin: %d", path, a.status)
		}
		c.origin = "http://" + siteTestHost
	}
	if chs := o.ntChannels(); len(chs) != 1 || chs[0]["name"] != "me" || chs[0]["enabled"] != true {
		t.Errorf("channels after the refusals: %v", chs)
	}
	if rules := o.ownerJSON("GET", "/owner/v1/notifications/rules", nil, 200); rules["default"].(map[string]any)["set"] != false {
		t.Errorf("the default rule was set: %v", rules)
	}
}

func TestSiteNotificationRules(t *testing.T) {
	t.Parallel()
	c, o := newNotifySite(t)
	card := o.ownerPost("/portfolio/cards", map[string]any{"address": siteTestAddress(1), "name": siteHostileName}, "card")["id"].(string)
	c.post("/notifications", "/notifications/channels", url.Values{"kind": {"email"}, "name": {"me"}, "where": {"owner@example.com"}})
	mail := o.ntChannels()[0]["id"].(string)

	// Reachable from the card's page; the card follows the built-in default.
	if body := c.do("GET", "/portfolio/cards/"+card, nil).body; !strings.Contains(body, `href="/notifications/rules/cards/`+card+`"`) {
		t.Errorf("the card's page does not link its rule")
	}
	page := c.do("GET", "/notifications/rules/cards/"+card, nil)
	if page.status != 200 || !strings.Contains(page.body, "the default rule (built in)") || strings.Contains(page.body, "<script>alert") ||
		strings.Count(page.body, `name="events"`) != 6 || strings.Count(page.body, " checked>") != 6 {
		t.Fatalf("the card's rule page: %d %.3000s", page.status, page.body)
	}

	// Bad input: each field's reason, a 422, nothing saved.
	for name, c2 := range map[string]struct {
		form url.Values
		says string
	}{
		"letters":         {url.Values{"min_btc": {"abc"}, "depth": {"6"}}, "Type an amount in BTC"},
		"nine decimals":   {url.Values{"min_btc": {"0.123456789"}, "depth": {"6"}}, "at most 8 decimals"},
		"negative":        {url.Values{"min_btc": {"-1"}, "depth": {"6"}}, "Type an amount in BTC"},
		"too much":        {url.Values{"min_btc": {"21000001"}, "depth": {"6"}}, "at most 21,000,000 BTC"},
		"depth 0":         {url.Values{"depth": {"0"}}, "from 1 to 100"},
		"depth 101":       {url.Values{"depth": {"101"}}, "from 1 to 100"},
		"depth x":         {url.Values{"depth": {"six"}}, "from 1 to 100"},
		"unknown kind":    {url.Values{"depth": {"6"}, "events": {"tx_lost"}}, "Pick events from the list"},
		"unknown channel": {url.Values{"depth": {"6"}, "channels": {"nc_nope"}}, "no channel of the account"},
	} {
		a := c.post("/notifications/rules/cards/"+card, "/notifications/rules/cards/"+card, c2.form)
		if a.status != 422 || !strings.Contains(a.body, c2.says) {
			t.Errorf("%s: %d, want 422 saying %q: %.200s", name, a.status, c2.says, a.body)
		}
	}
	if rules := o.ownerJSON("GET", "/owner/v1/notifications/rules", nil, 200); len(rules["cards"].([]any)) != 0 {
		t.Fatalf("a refused form saved a rule: %v", rules)
	}

	// A good one: stored in satoshis, the channel named.
	a := c.post("/notifications/rules/cards/"+card, "/notifications/rules/cards/"+card,
		url.Values{"events": {"tx_seen", "tx_confirmed"}, "min_btc": {"0.0015"}, "depth": {"3"}, "channels": {mail}})
	if a.status != 303 || a.location != "/notifications?m=rule-saved" {
		t.Fatalf("saving: %d %.300s", a.status, a.body)
	}
	rule := o.ownerJSON("GET", "/owner/v1/notifications/rules", nil, 200)["cards"].([]any)[0].(map[string]any)
	if rule["min_amount_sat"] != float64(150000) || rule["depth"] != float64(3) || len(rule["events"].([]any)) != 2 || rule["channels"].([]any)[0] != mail {
		t.Errorf("the saved rule %v", rule)
	}
	page = c.do("GET", "/notifications/rules/cards/"+card, nil)
	if !strings.Contains(page.body, `value="0.00150000"`) || !strings.Contains(page.body, "Remove this rule") {
		t.Errorf("the rule drawn again: %.3000s", page.body)
	}
	if body := c.do("GET", "/notifications", nil).body; !strings.Contains(body, "its own rule") || strings.Contains(body, "<img src=x") {
		t.Errorf("the rules summary")
	}
	// The default rule, then removing the card's.
	if a = c.post("/notifications/rules/default", "/notifications/rules/default", url.Values{"depth": {"2"}}); a.status != 303 {
		t.Fatalf("the default: %d %.300s", a.status, a.body)
	}
	if def := o.ownerJSON("GET", "/owner/v1/notifications/rules", nil, 200)["default"].(map[string]any); def["set"] != true || len(def["events"].([]any)) != 0 {
		t.Errorf("the default rule, no box checked, mutes: %v", def)
	}
	if a = c.post("/notifications/rules/cards/"+card, "/notifications/rules/cards/"+card+"/delete", nil); a.status != 303 {
		t.Fatalf("removing: %d", a.status)
	}
	if a = c.do("GET", "/notifications/rules/cards/card_nope", nil); a.status != 404 {
		t.Errorf("an unknown card's rule: %d", a.status)
	}
	// A bitcoin Space's page links its rule.
	var space string
	for _, sp := range o.spaces() {
		if sp["type"] == "bitcoin" {
			space = sp["id"].(string)
		}
	}
	if body := c.do("GET", "/spaces/"+space, nil).body; !strings.Contains(body, `href="/notifications/rules/spaces/`+space+`"`) {
		t.Errorf("the bitcoin Space's page does not link its rule")
	}
	if a = c.do("GET", "/notifications/rules/spaces/"+space, nil); a.status != 200 || !strings.Contains(a.body, "the default rule") {
		t.Errorf("the Space's rule page: %d", a.status)
	}
}

// Events make lines in the delivery log, which "send again" makes
// pending; the centre shows them newest first, and the badge counts the
// ones since it was last opened; the Portfolio shows each card's last.
func TestSiteDeliveriesCentreAndLastActivity(t *testing.T) {
	t.Parallel()
	c, o := newNotifySite(t)
	address := siteTestAddress(2)
	card := o.ownerPost("/portfolio/cards", map[string]any{"address": address, "name": siteHostileName}, "card")["id"].(string)
	o.ownerPost("/portfolio/cards", map[string]any{"address": siteTestAddress(3), "name": "quiet"}, "card")
	c.post("/notifications", "/notifications/channels", url.Values{"kind": {"email"}, "name": {"me <b>"}, "where": {"owner@example.com"}})
	if body := c.do("GET", "/portfolio", nil).body; !strings.Contains(body, "Last activity") || strings.Contains(body, "Seen<br>") {
		t.Fatalf("the Portfolio before any event")
	}
	if body := c.do("GET", "/notifications/deliveries", nil).body; !strings.Contains(body, "No tries") {
		t.Fatalf("the empty log")
	}
	o.observe(address)
	txid := strings.Repeat("ab", 32)
	o.observe(address, actors.TxObservation{TxID: txid, State: actors.TxMempool, ReceivedSat: 150_000})

	// The badge counts the event on any page until the centre is opened.
	if body := c.do("GET", "/portfolio", nil).body; !strings.Contains(body, `<span class="count"`) || !strings.Contains(body, ">1<span class=\"visually-hidden\"> new") {
		t.Errorf("no badge: %.1500s", body)
	} else if !strings.Contains(body, "Seen<br>") {
		t.Errorf("the Portfolio's last activity")
	}
	centre := c.do("GET", "/centre", nil)
	if centre.status != 200 || !strings.Contains(centre.body, "0.00150000 BTC") || !strings.Contains(centre.body, `title="`+txid+`"`) ||
		!strings.Contains(centre.body, "abababab…abababab") || strings.Contains(centre.body, "<script>alert") || !strings.Contains(centre.body, "&lt;script&gt;") {
		t.Fatalf("the centre: %d %.3000s", centre.status, centre.body)
	}
	if strings.Contains(centre.body, `<span class="count"`) {
		t.Error("the centre's own page still shows the badge")
	}
	if body := c.do("GET", "/portfolio", nil).body; strings.Contains(body, `<span class="count"`) {
		t.Error("the badge is still there after the centre was opened")
	}
	var live map[string]any
	json.Unmarshal([]byte(c.do("GET", "/live?after=0", nil).body), &live)
	if live["chain_cursor"] != float64(1) {
		t.Errorf("/live: %v", live)
	}

	// A try fails; the log shows it; "send again" makes it pending.
	outbox := o.ownerJSON("GET", "/owner/v1/notifications/outbox", nil, 200)["channels"].([]any)[0].(map[string]any)
	if outbox["pending"] != float64(1) {
		t.Fatalf("outbox %v", outbox)
	}
	due, err := actors.Answer[actors.DueDeliveries](o.server.store.Query(context.Background(),
		actors.Credential{Kind: actors.CredentialSystem, AccountID: o.account.AccountID, Now: o.clock.now().UnixNano()}, actors.DueDeliveriesQuery{Now: o.clock.now().UnixNano()}, ReadLeader))
	if err != nil || len(due.Due) != 1 {
		t.Fatalf("due %+v %v", due, err)
	}
	entry := due.Due[0].EntryID
	o.system(&actors.RecordDeliveries{Results: []actors.DeliveryResult{{EntryID: entry, Attempt: 1, At: o.clock.now().UnixNano(), Status: 554, LatencyMs: 42, Class: "smtp", Detail: "554 no <b>"}}})
	log := c.do("GET", "/notifications/deliveries", nil)
	for _, want := range []string{"Seen", "0.00150000 BTC", "(554)", "smtp", "42 ms", "me &lt;b&gt;", "&lt;script&gt;", "554 no &lt;b&gt;", `action="/notifications/deliveries/` + entry + `/redeliver"`} {
		if !strings.Contains(log.body, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if strings.Contains(log.body, "<script>alert") {
		t.Error("a hostile card name is markup in the log")
	}
	o.system(&actors.RecordDeliveries{Results: []actors.DeliveryResult{{EntryID: entry, Attempt: 2, At: o.clock.now().UnixNano(), Delivered: true, Status: 250, LatencyMs: 7}}})
	mail := o.ntChannels()[0]["id"].(string)
	a := c.post("/notifications/deliveries", "/notifications/deliveries/"+entry+"/redeliver", url.Values{"channel": {mail}})
	if a.status != 303 || !strings.HasPrefix(a.location, "/notifications/deliveries?") || !strings.Contains(a.location, "sent-again") {
		t.Fatalf("send again: %d %q %.300s", a.status, a.location, a.body)
	}
	if outbox := o.ownerJSON("GET", "/owner/v1/notifications/outbox", nil, 200)["channels"].([]any)[0].(map[string]any); outbox["pending"] != float64(1) {
		t.Errorf("after send again: %v", outbox)
	}
	if page := c.do("GET", a.location, nil); !strings.Contains(page.body, "pending again") || !strings.Contains(page.body, `<option value="`+mail+`" selected>`) {
		t.Errorf("back on the filtered log: %.2000s", page.body)
	}
	if a = c.post("/notifications/deliveries", "/notifications/deliveries/nd_00000000000000000000000000000000/redeliver", nil); a.status != 404 || !strings.Contains(a.body, "no longer kept") {
		t.Errorf("an unknown entry: %d", a.status)
	}
	if page := c.do("GET", "/notifications/deliveries?channel=nc_other", nil); page.status != 200 || !strings.Contains(page.body, "No tries to this channel") {
		t.Errorf("another channel's log: %d", page.status)
	}
	_ = card
}
