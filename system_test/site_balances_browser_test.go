package system_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Balances on the owner's site in a real browser: the Portfolio's rows and
// total row, a card's balance block, a bitcoin Space's total, in BTC with
// the unit, confirmed and unconfirmed apart; hostile names stay text. The
// figures expected are worked out from the reference Sim (hbWant). With
// ADDRWATCH_BALANCES_SHOTS set, the Portfolio and the card's page are
// saved there as PNGs.

// hbBTC is satoshis as the site writes them: eight decimals and the unit,
// signed when asked (with the minus sign, U+2212).
func hbBTC(sat int64, signed bool) string {
	abs := max(sat, -sat)
	text := fmt.Sprintf("%d.%08d BTC", abs/100_000_000, abs%100_000_000)
	if sat < 0 {
		return "−" + text
	}
	if signed && sat > 0 {
		return "+" + text
	}
	return text
}

// hbShown is an RFC 3339 time as the site writes it.
func hbShown(t *testing.T, rfc3339 string) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC().Format("2006-01-02 15:04 UTC")
}

// attr is the attribute name of the element matching selector.
func (b *browserTab) attr(selector, name string) string {
	b.t.Helper()
	js := `(() => { const e = document.querySelector(` + jsonString(selector) + `); return e ? (e.getAttribute(` + jsonString(name) + `) || "") : ""; })()`
	return run(b, "attribute "+name+" of "+selector, chromedp.Evaluate[string](js))
}

// hubName is the hub card's name: markup that must show as text on the
// card's page, above its balance.
const hubName = `Hub </h2><script>alert("hub")</script>`

func TestSiteBalancesInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "balances.owner") // two Account cards with hostile names
	hub := owString(t, owOwnerCard(t, s, o.OwnerSecret, hiHubQ, hubName), "id")
	addresses := []string{owAddress(900), owAddress(901), hiHubQ}
	e := spEnv{s: s, acct: o.account}
	first := spID(e.owner().list(t).spaces[0])
	inSpace := []string{hiDormant1, owAddress(902)}
	e.owner().addCard(t, first, map[string]any{"address": inSpace[0], "name": "Dormant"})
	e.owner().addCard(t, first, map[string]any{"address": inSpace[1], "name": siteHostileImg})
	want := map[string]hbBalance{}
	for _, a := range append(slices.Clone(addresses), inSpace...) {
		want[a] = hbWant(t, a)
	}
	portfolio := hbSum(want[addresses[0]], want[addresses[1]], want[addresses[2]])
	space := hbSum(want[inSpace[0]], want[inSpace[1]])
	if *want[hiHubQ].UnconfirmedTxCount == 0 {
		t.Fatalf("the fixture %s has nothing in the mempool", hiHubQ)
	}

	b := newBrowser(t)
	siteSignIn(t, b, o, "balances.owner")
	shots := os.Getenv("ADDRWATCH_BALANCES_SHOTS")

	if status := b.open(s.URL + "/portfolio"); status != http.StatusOK {
		t.Fatalf("portfolio: %d", status)
	}
	b.assertUsable("the portfolio with balances")
	b.assertNoConsoleErrors()
	names := b.texts("#portfolio-cards tbody td.text a")
	if !slices.Contains(names, siteHostileScript) || !slices.Contains(names, siteHostileImg) {
		t.Fatalf("the portfolio's names: %q", names)
	}
	hubRow := b.text("#row-" + hub + " td.amount")
	if !strings.HasPrefix(hubRow, hbBTC(*want[hiHubQ].ConfirmedSat, false)) || !strings.Contains(hubRow, hbBTC(*want[hiHubQ].UnconfirmedSat, true)+" unconfirmed") {
		t.Fatalf("the hub's balance cell says %q, want %s and %s unconfirmed", hubRow, hbBTC(*want[hiHubQ].ConfirmedSat, false), hbBTC(*want[hiHubQ].UnconfirmedSat, true))
	}
	total := b.text("#portfolio-total")
	for _, part := range []string{"Total of 3 cards", hbBTC(portfolio.ConfirmedSat, false), hbBTC(portfolio.UnconfirmedSat, true) + " unconfirmed",
		fmt.Sprintf("%d transactions", portfolio.TxCount), hbBTC(portfolio.ReceivedSat, false) + " received", hbBTC(portfolio.SentSat, false) + " sent",
		"last " + hbShown(t, *portfolio.LastTxAt)} {
		if !strings.Contains(total, part) {
			t.Errorf("the total row lacks %q: %q", part, total)
		}
	}
	if strings.Contains(total, "Incomplete") {
		t.Fatalf("the total says it is incomplete: %q", total)
	}
	if shots != "" {
		b.screenshot(filepath.Join(shots, "balances-portfolio.png"))
	}

	// The card's page: its balance block, figure by figure.
	if status := b.open(s.URL + "/portfolio/cards/" + hub); status != http.StatusOK {
		t.Fatalf("the card's page: %d", status)
	}
	b.assertNoConsoleErrors()
	if got := b.text("#card-heading"); got != hubName {
		t.Errorf("the card's heading is %q, want its name as text, %q", got, hubName)
	}
	w := want[hiHubQ]
	for field, text := range map[string]string{
		"confirmed": hbBTC(*w.ConfirmedSat, false), "unconfirmed": hbBTC(*w.UnconfirmedSat, true), "received": hbBTC(*w.ReceivedSat, false),
		"sent": hbBTC(*w.SentSat, false), "count": fmt.Sprint(*w.TxCount), "last": hbShown(t, *w.LastTxAt),
	} {
		if got := b.text(`dd[data-balance="` + field + `"]`); !strings.HasPrefix(got, text) {
			t.Errorf("the card's %s says %q, want %q", field, got, text)
		}
	}
	if got := b.attr(`dd[data-balance="last"] time`, "datetime"); got != *w.LastTxAt {
		t.Errorf("the last transaction's datetime is %q, want %q", got, *w.LastTxAt)
	}
	if shots != "" {
		b.screenshot(filepath.Join(shots, "balances-card.png"))
	}

	// The bitcoin Space: its total, and the hostile name as text.
	if status := b.open(s.URL + "/spaces/" + first); status != http.StatusOK {
		t.Fatalf("the Space: %d", status)
	}
	b.assertNoConsoleErrors()
	spaceTotal := b.text("#space-total")
	if !strings.Contains(spaceTotal, "Total of 2 cards") || !strings.Contains(spaceTotal, hbBTC(space.ConfirmedSat, false)) ||
		!strings.Contains(spaceTotal, fmt.Sprintf("%d transactions", space.TxCount)) {
		t.Fatalf("the Space's total says %q, want %s over %d transactions", spaceTotal, hbBTC(space.ConfirmedSat, false), space.TxCount)
	}
	if !slices.Contains(b.texts("#space-cards tbody td.text"), siteHostileImg) {
		t.Fatalf("the Space's names: %q", b.texts("#space-cards tbody td.text"))
	}
	if shots != "" {
		b.screenshot(filepath.Join(shots, "balances-space.png"))
	}
}
