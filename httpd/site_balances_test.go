package httpd

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// fixedBalances is a balance source of fixed answers; an address it does
// not hold fails, as a block explorer that does not answer for it.
type fixedBalances map[string]chain.Balance

func (f fixedBalances) Balance(_ context.Context, address string) (chain.Balance, error) {
	b, known := f[address]
	if !known {
		return chain.Balance{}, fmt.Errorf("no answer for %s: %w", address, chain.ErrUpstream)
	}
	return b, nil
}

const siteHostileName = `"><img src=x onerror=alert(1)><script>alert(1)</script>`

// newBalancesSite is an ownerTest whose balances come from src (its
// History is empty), signed in through the site.
func newBalancesSite(t *testing.T, src Balances) (*siteClient, *ownerTest) {
	t.Helper()
	return newConfiguredSite(t, actors.PlanBase, func(cfg *Config) { cfg.Balances = src })
}

// newConfiguredSite is an account of plan on a server with an empty
// History and what configure sets, signed in through the site.
func newConfiguredSite(t *testing.T, plan actors.Plan, configure func(*Config)) (*siteClient, *ownerTest) {
	t.Helper()
	c := newClock()
	cfg := Config{Store: newMemoryStore(t), Now: c.now, PasswordCost: bcrypt.MinCost, History: &csvHistory{now: c.now()}}
	configure(&cfg)
	s := New(cfg)
	created, err := s.CreateAccount(context.Background(), plan, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	o := &ownerTest{t: t, server: s, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}
	sc := newSiteClient(o)
	sc.mustSignIn()
	return sc, o
}

// ownerPost sends an owner API request and returns the body's object
// under key.
func (o *ownerTest) ownerPost(path string, body map[string]any, key string) map[string]any {
	o.t.Helper()
	status, _, m := o.send("192.0.2.1", "POST", "/owner/v1"+path, o.account.OwnerSecret, body)
	if status != 201 && status != 200 {
		o.t.Fatalf("POST %s: %d %v", path, status, m)
	}
	return m[key].(map[string]any)
}

var (
	balSavings = testaddr.P2PKH("balances savings")
	balHostile = testaddr.P2PKH("balances hostile")
	balDown    = testaddr.P2PKH("balances down")
	balKept    = testaddr.P2PKH("balances kept")
	balEmpty   = testaddr.P2PKH("balances empty")
	balLast    = time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
)

// The Portfolio's total row, each card's balance, a card whose address
// the source fails for shown as unknown (not zero) and left out of the
// total, which says so; a hostile name stays text.
func TestSitePortfolioShowsBalancesAndTheirTotal(t *testing.T) {
	t.Parallel()
	c, o := newBalancesSite(t, fixedBalances{
		balSavings: {ConfirmedSat: 1_500_000, UnconfirmedSat: 2_000, ReceivedSat: 2_002_000, SentSat: 500_000, TxCount: 4, UnconfirmedTxCount: 1, LastTxAt: balLast},
		balHostile: {ConfirmedSat: 100_000_000, ReceivedSat: 100_000_000, TxCount: 1, LastTxAt: balLast.Add(-time.Hour)},
	})
	savings := o.ownerPost("/portfolio/cards", map[string]any{"address": balSavings, "name": "Savings"}, "card")["id"].(string)
	o.ownerPost("/portfolio/cards", map[string]any{"address": balHostile, "name": siteHostileName}, "card")
	down := o.ownerPost("/portfolio/cards", map[string]any{"address": balDown, "name": "Down"}, "card")["id"].(string)

	page := c.do("GET", "/portfolio", nil)
	if page.status != 200 {
		t.Fatalf("portfolio: %d %.500s", page.status, page.body)
	}
	row := rowOf(t, page.body, "row-"+savings)
	if !strings.Contains(row, "0.01500000 BTC") || !strings.Contains(row, "+0.00002000 BTC unconfirmed") {
		t.Fatalf("the savings row: %s", row)
	}
	if row := rowOf(t, page.body, "row-"+down); !strings.Contains(row, "unknown") || strings.Contains(row, "0.00000000 BTC") {
		t.Fatalf("the row of a card the source fails for: %s", row)
	}
	total := rowOf(t, page.body, "portfolio-total")
	for _, want := range []string{"Total of 2 of 3 cards", "1.01500000 BTC", "+0.00002000 BTC unconfirmed", "5 transactions", "1.02002000 BTC received", "0.00500000 BTC sent",
		`<time datetime="2026-05-01T14:03:00Z">2026-05-01 14:03 UTC</time>`, "Incomplete"} {
		if !strings.Contains(total, want) {
			t.Errorf("the total row lacks %q: %s", want, total)
		}
	}
	if strings.Contains(page.body, "<script>alert") || strings.Contains(page.body, "<img src=x") || !strings.Contains(page.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("the hostile name is not text on the Portfolio")
	}

	// The card's own page and its History page show its balance block.
	for _, path := range []string{"/portfolio/cards/" + savings, "/history/cards/" + savings} {
		card := c.do("GET", path, nil)
		text := html.UnescapeString(card.body)
		for _, want := range []string{`data-balance="confirmed">0.01500000 BTC`, `data-balance="unconfirmed">+0.00002000 BTC`, `data-balance="count">4, 1 in the mempool`,
			`data-balance="received">0.02002000 BTC`, `data-balance="sent">0.00500000 BTC`, `<time datetime="2026-05-01T14:03:00Z">2026-05-01 14:03 UTC</time>`} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
	}
	if card := c.do("GET", "/portfolio/cards/"+down, nil); card.status != 200 || !strings.Contains(card.body, `id="balance-unknown"`) || strings.Contains(card.body, "data-balance=") {
		t.Fatalf("the page of a card the source fails for: %d %.3000s", card.status, card.body)
	}
}

// A bitcoin Space shows its cards' balances and their total.
func TestSiteBitcoinSpaceShowsItsTotal(t *testing.T) {
	t.Parallel()
	c, o := newBalancesSite(t, fixedBalances{
		balKept:  {ConfirmedSat: 2_500, ReceivedSat: 5_000, SentSat: 2_500, TxCount: 2, LastTxAt: balLast},
		balEmpty: {},
	})
	_, _, spaces := o.send("192.0.2.1", "GET", "/owner/v1/bookmark-spaces", o.account.OwnerSecret, nil)
	space := spaces["spaces"].([]any)[0].(map[string]any)
	id := space["id"].(string)
	for _, card := range []struct{ address, name string }{{balKept, "Kept"}, {balEmpty, siteHostileName}} {
		_, _, list := o.send("192.0.2.1", "GET", "/owner/v1/bookmark-spaces/"+id+"/cards", o.account.OwnerSecret, nil)
		version := list["space"].(map[string]any)["version"]
		o.ownerPost("/bookmark-spaces/"+id+"/cards", map[string]any{"expected_space_version": version, "address": card.address, "name": card.name}, "card")
	}
	page := c.do("GET", "/spaces/"+id, nil)
	total := rowOf(t, page.body, "space-total")
	for _, want := range []string{"Total of 2 cards", "0.00002500 BTC", "2 transactions", "0.00005000 BTC received", "0.00002500 BTC sent", "2026-05-01 14:03 UTC"} {
		if !strings.Contains(total, want) {
			t.Errorf("the Space's total lacks %q: %s", want, total)
		}
	}
	if strings.Contains(total, "Incomplete") || strings.Contains(page.body, "<script>alert") {
		t.Fatalf("the Space page: %s", total)
	}
}

// rowOf is the table row with id, its character references resolved.
func rowOf(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr[^>]*id="` + regexp.QuoteMeta(id) + `".*?</tr>`).FindString(body)
	if m == "" {
		t.Fatalf("no row %s in %.3000s", id, body)
	}
	return html.UnescapeString(m)
}
