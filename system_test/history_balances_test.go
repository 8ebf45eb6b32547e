package system_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// End-to-end tests of the balances in GET /v1/history (and the owner's
// /owner/v1/history): every readable Account card's and bitcoin Space
// card's balance, the Portfolio's and each Space's total, over the real
// server and the simulated chain. The expected figures are worked out here
// from a reference Sim's counters and listing (history_test.go), not with
// the server's code.

// hbBalance is a balance as the History summary shows it.
type hbBalance struct {
	ConfirmedSat       *int64  `json:"confirmed_sat"`
	UnconfirmedSat     *int64  `json:"unconfirmed_sat"`
	ReceivedSat        *int64  `json:"received_sat"`
	SentSat            *int64  `json:"sent_sat"`
	TxCount            *int64  `json:"tx_count"`
	UnconfirmedTxCount *int64  `json:"unconfirmed_tx_count"`
	LastTxAt           *string `json:"last_tx_at"`
	Degraded           bool    `json:"degraded"`
}

// hbTotal is a total as the History summary shows it.
type hbTotal struct {
	ConfirmedSat       int64   `json:"confirmed_sat"`
	UnconfirmedSat     int64   `json:"unconfirmed_sat"`
	ReceivedSat        int64   `json:"received_sat"`
	SentSat            int64   `json:"sent_sat"`
	TxCount            int64   `json:"tx_count"`
	UnconfirmedTxCount int64   `json:"unconfirmed_tx_count"`
	LastTxAt           *string `json:"last_tx_at"`
	CardCount          int     `json:"card_count"`
	Complete           bool    `json:"complete"`
}

type hbCard struct {
	CardID          string    `json:"card_id"`
	Address         string    `json:"address"`
	HistoryDegraded bool      `json:"history_degraded"`
	Balance         hbBalance `json:"balance"`
}

type hbSpace struct {
	SpaceID string   `json:"space_id"`
	Name    string   `json:"name"`
	Cards   []hbCard `json:"cards"`
	Total   hbTotal  `json:"total"`
}

type hbSummary struct {
	Cards           []hbCard  `json:"cards"`
	PortfolioTotal  hbTotal   `json:"portfolio_total"`
	Spaces          []hbSpace `json:"spaces"`
	HistoryDegraded bool      `json:"history_degraded"`
}

var (
	hbBalanceKeys = []string{"confirmed_sat", "unconfirmed_sat", "received_sat", "sent_sat", "tx_count", "unconfirmed_tx_count", "last_tx_at", "degraded"}
	hbTotalKeys   = []string{"confirmed_sat", "unconfirmed_sat", "received_sat", "sent_sat", "tx_count", "unconfirmed_tx_count", "last_tx_at", "card_count", "complete"}
)

// hbGet reads the History summary and checks that every balance field is
// there (a null counts).
func hbGet(t testing.TB, s *server, prefix, bearer string) (hbSummary, response) {
	t.Helper()
	r := do(t, "GET", s.URL+prefix+"/history", bearer, nil)
	expect(t, r, http.StatusOK, "")
	m := hiKeys(t, "History summary", r.Body, "cards", "portfolio_total", "spaces", "transactions", "history_export", "history_degraded", "complete")
	hiKeys(t, "portfolio_total", m["portfolio_total"], hbTotalKeys...)
	var raw struct {
		Cards  []map[string]json.RawMessage `json:"cards"`
		Spaces []struct {
			Cards []map[string]json.RawMessage `json:"cards"`
			Total json.RawMessage              `json:"total"`
		} `json:"spaces"`
	}
	if err := json.Unmarshal(r.Body, &raw); err != nil || raw.Spaces == nil {
		t.Fatalf("History summary: %v (spaces must be a list)\n%s", err, r.Body)
	}
	cards := raw.Cards
	for _, sp := range raw.Spaces {
		hiKeys(t, "a Space's total", sp.Total, hbTotalKeys...)
		cards = append(cards, sp.Cards...)
	}
	for _, c := range cards {
		hiKeys(t, "a card's balance", c["balance"], hbBalanceKeys...)
	}
	var v hbSummary
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("History summary: %v\n%s", err, r.Body)
	}
	return v, r
}

// hbWant is the balance of addr as the reference Sim's counters and
// listing give it.
func hbWant(t testing.TB, addr string) hbBalance {
	t.Helper()
	ref := hiReference(t, addr)
	st := ref.stats
	n := func(v int64) *int64 { return &v }
	b := hbBalance{
		ConfirmedSat:   n(st.Chain.FundedTxoSum - st.Chain.SpentTxoSum),
		UnconfirmedSat: n(st.Mempool.FundedTxoSum - st.Mempool.SpentTxoSum),
		ReceivedSat:    n(st.Chain.FundedTxoSum + st.Mempool.FundedTxoSum),
		SentSat:        n(st.Chain.SpentTxoSum + st.Mempool.SpentTxoSum),
		TxCount:        n(st.Chain.TxCount + st.Mempool.TxCount), UnconfirmedTxCount: n(st.Mempool.TxCount),
	}
	for _, tx := range ref.txs {
		if tx.Confirmed {
			at := tx.BlockTime.UTC().Format(time.RFC3339)
			b.LastTxAt = &at
			break
		}
	}
	return b
}

// hbSum is the total of known balances.
func hbSum(balances ...hbBalance) hbTotal {
	total := hbTotal{Complete: true}
	for _, b := range balances {
		if b.Degraded {
			total.Complete = false
			continue
		}
		total.CardCount++
		total.ConfirmedSat += *b.ConfirmedSat
		total.UnconfirmedSat += *b.UnconfirmedSat
		total.ReceivedSat += *b.ReceivedSat
		total.SentSat += *b.SentSat
		total.TxCount += *b.TxCount
		total.UnconfirmedTxCount += *b.UnconfirmedTxCount
		if b.LastTxAt != nil && (total.LastTxAt == nil || *b.LastTxAt > *total.LastTxAt) {
			total.LastTxAt = b.LastTxAt
		}
	}
	return total
}

func hbJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hbCheckCards fails unless cards are exactly the addresses of want (by
// card ID), each with its balance.
func hbCheckCards(t testing.TB, what string, cards []hbCard, want map[string]string, balances map[string]hbBalance) {
	t.Helper()
	if len(cards) != len(want) {
		t.Fatalf("%s: %d cards, want %d: %s", what, len(cards), len(want), hbJSON(cards))
	}
	for _, c := range cards {
		if want[c.CardID] != c.Address {
			t.Fatalf("%s: unexpected card %s", what, hbJSON(c))
		}
		if got, exp := hbJSON(c.Balance), hbJSON(balances[c.Address]); got != exp {
			t.Fatalf("%s: card %s balance\n got %s\nwant %s", what, c.Address, got, exp)
		}
	}
}

func TestHistoryBalancesOfReadableCardsOnly(t *testing.T) {
	t.Parallel()
	s := hiStart(t)
	e := spSetup(t, s, "extended", "read")
	owner := e.owner()
	shown := spAddress("balances shown")
	hiddenInSpace := spAddress("balances hidden space")
	want := map[string]hbBalance{}
	for _, a := range []string{hiGenesis, hiHubQ, hiHub3, hiDormant1, shown, hiddenInSpace} {
		want[a] = hbWant(t, a)
	}

	// Portfolio: two cards the agent made (write), one the owner made
	// (none). Spaces: the first, bitcoin at read, with two cards; a
	// bitcoin Space at none; an altcoin Space at read.
	cardG := apID(apCreateCard(t, s, e.write, map[string]any{"address": hiGenesis, "name": "genesis"}))
	cardQ := apID(apCreateCard(t, s, e.write, map[string]any{"address": hiHubQ, "name": "hub q"}))
	hidden := apID(apOwnerCreateCard(t, s, e.acct, hiHub3, "hidden hub"))
	first1 := spID(owner.addCard(t, e.first, map[string]any{"address": hiDormant1, "name": "dormant"}))
	first2 := spID(owner.addCard(t, e.first, map[string]any{"address": shown, "name": "shown"}))
	hiddenSpace := spID(owner.createSpace(t, "Hidden bitcoin", "bitcoin"))
	hiddenCard := spID(owner.addCard(t, hiddenSpace, map[string]any{"address": hiddenInSpace, "name": "hidden"}))
	alt := spID(owner.createSpace(t, "Altcoins", "altcoin"))
	owner.addCard(t, alt, map[string]any{"address": "my own chain: abc-123", "coin_id": "unknown"})
	e.grant(t, alt, "read")

	v, r := hbGet(t, s, "/v1", e.read)
	mustNotLeak(t, r, hidden, hiHub3, hiddenSpace, hiddenCard, hiddenInSpace, alt, "abc-123", "Hidden bitcoin", "Altcoins")
	hbCheckCards(t, "readable Account cards", v.Cards, map[string]string{cardG: hiGenesis, cardQ: hiHubQ}, want)
	if got, exp := hbJSON(v.PortfolioTotal), hbJSON(hbSum(want[hiGenesis], want[hiHubQ])); got != exp {
		t.Fatalf("portfolio_total\n got %s\nwant %s", got, exp)
	}
	if len(v.Spaces) != 1 || v.Spaces[0].SpaceID != e.first {
		t.Fatalf("spaces: %s, want only the readable bitcoin Space %s", hbJSON(v.Spaces), e.first)
	}
	hbCheckCards(t, "the first Space", v.Spaces[0].Cards, map[string]string{first1: hiDormant1, first2: shown}, want)
	if got, exp := hbJSON(v.Spaces[0].Total), hbJSON(hbSum(want[hiDormant1], want[shown])); got != exp {
		t.Fatalf("the first Space's total\n got %s\nwant %s", got, exp)
	}
	if !v.PortfolioTotal.Complete || v.PortfolioTotal.ConfirmedSat == 0 || v.PortfolioTotal.LastTxAt == nil {
		t.Fatalf("the fixture's Portfolio should hold a known, nonzero balance: %s", hbJSON(v.PortfolioTotal))
	}

	// The owner changes grants; the very next read follows them: the
	// Account card now granted counts, the bitcoin Space now granted is
	// listed, and the first Space, now at none, is gone with its cards.
	e.grantCard(t, hidden, "read")
	e.grant(t, hiddenSpace, "read")
	e.grant(t, e.first, "none")
	v, r = hbGet(t, s, "/v1", e.read)
	mustNotLeak(t, r, e.first, first1, first2, shown)
	hbCheckCards(t, "after the grant change", v.Cards, map[string]string{cardG: hiGenesis, cardQ: hiHubQ, hidden: hiHub3}, want)
	if got, exp := hbJSON(v.PortfolioTotal), hbJSON(hbSum(want[hiGenesis], want[hiHubQ], want[hiHub3])); got != exp {
		t.Fatalf("portfolio_total after the grant\n got %s\nwant %s", got, exp)
	}
	if len(v.Spaces) != 1 || v.Spaces[0].SpaceID != hiddenSpace || v.Spaces[0].Name != "Hidden bitcoin" {
		t.Fatalf("spaces after the grant change: %s", hbJSON(v.Spaces))
	}
	hbCheckCards(t, "the Space granted since", v.Spaces[0].Cards, map[string]string{hiddenCard: hiddenInSpace}, want)

	// The owner reads everything: every Account card and both bitcoin
	// Spaces (not the altcoin one), in stored order.
	v, _ = hbGet(t, s, "/owner/v1", e.acct.OwnerSecret)
	var ids []string
	for _, sp := range v.Spaces {
		ids = append(ids, sp.SpaceID)
	}
	if len(v.Cards) != 3 || !slices.Equal(ids, []string{e.first, hiddenSpace}) {
		t.Fatalf("the owner's summary: %d cards, Spaces %v", len(v.Cards), ids)
	}
}

// One address the block explorer fails for: that card's balance is
// unknown (null figures, degraded), the other cards keep theirs, and the
// totals leave it out and say so. Never a 500, never a zero.
func TestHistoryBalancesDegradeOneCard(t *testing.T) {
	t.Parallel()
	bad, badInSpace := spAddress("balances failing"), spAddress("balances failing in a Space")
	sim := chain.NewSim(time.Now)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/address/"+bad) || strings.Contains(r.URL.Path, "/address/"+badInSpace) {
			http.Error(w, "Invalid Bitcoin address", http.StatusBadRequest)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		up.CloseClientConnections()
		up.Close()
	})
	s := hiStart(t, "--upstream", up.URL)
	e := spSetup(t, s, "base", "read")
	good := hbWant(t, hiGenesis)
	inSpace := hbWant(t, hiDormant1)
	goodCard := apID(apCreateCard(t, s, e.write, map[string]any{"address": hiGenesis, "name": "good"}))
	badCard := apID(apCreateCard(t, s, e.write, map[string]any{"address": bad, "name": "failing"}))
	owner := e.owner()
	spaceGood := spID(owner.addCard(t, e.first, map[string]any{"address": hiDormant1, "name": "kept"}))
	spaceBad := spID(owner.addCard(t, e.first, map[string]any{"address": badInSpace, "name": "failing too"}))

	unknown := hbBalance{Degraded: true}
	want := map[string]hbBalance{hiGenesis: good, bad: unknown, hiDormant1: inSpace, badInSpace: unknown}
	v, r := hbGet(t, s, "/v1", e.read)
	if !strings.Contains(string(r.Body), `"balance":{"confirmed_sat":null,"unconfirmed_sat":null,"received_sat":null,"sent_sat":null,"tx_count":null,"unconfirmed_tx_count":null,"last_tx_at":null,"degraded":true}`) {
		t.Fatalf("no unknown balance in %s", r.Body)
	}
	hbCheckCards(t, "the Portfolio", v.Cards, map[string]string{goodCard: hiGenesis, badCard: bad}, want)
	if got, exp := hbJSON(v.PortfolioTotal), hbJSON(hbSum(good, unknown)); got != exp || v.PortfolioTotal.Complete || v.PortfolioTotal.CardCount != 1 {
		t.Fatalf("portfolio_total with a failing card\n got %s\nwant %s", got, exp)
	}
	if len(v.Spaces) != 1 {
		t.Fatalf("spaces: %s", hbJSON(v.Spaces))
	}
	hbCheckCards(t, "the Space", v.Spaces[0].Cards, map[string]string{spaceGood: hiDormant1, spaceBad: badInSpace}, want)
	if got, exp := hbJSON(v.Spaces[0].Total), hbJSON(hbSum(inSpace, unknown)); got != exp || v.Spaces[0].Total.Complete {
		t.Fatalf("the Space's total with a failing card\n got %s\nwant %s", got, exp)
	}
	if !v.HistoryDegraded {
		t.Fatalf("the History of the failing card is not degraded: %s", r.Body)
	}
}
