package system_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// End-to-end tests of History and transaction notes: the real server
// against the embedded simulated chain (--upstream sim), and against a
// chain.Sim served by an httptest.Server (--upstream http://...) whose
// faults the tests switch on and off. Expected transactions come from a
// reference Sim in the test process: the sim is deterministic, so the same
// address shows the same history in both processes.

// Sim addresses (chain/HISTORY.md). Dormant ones have nothing in the last
// year; the hubs share transactions, among them one unconfirmed
// transaction paying hiGenesis, hiHubQ and hiHub3.
const (
	hiGenesis  = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
	hiHubQ     = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	hiHub3     = "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
	hiDormant1 = "3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6"
	hiDormant2 = "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"
	hiDormant3 = "3LDsS579y7sruadqu11beEJoTjdFiFCdX4"
)

// hiActiveCandidates are ordinary (non-hub) mainnet addresses; hiBusy picks
// one with enough activity in the window for several pages.
var hiActiveCandidates = []string{
	"12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG",
	"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
	"1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX",
	"1Q1pE5vPGEEMqRcVRMbtBK842Y6Pzo6nK9",
	"3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC",
}

// ---- server and upstream ----

// hiStart starts addrwatchd with extra flags and closes the test process's
// idle connections before it stops (see apStartServer).
func hiStart(t *testing.T, extraArgs ...string) *server {
	t.Helper()
	s := startServer(t, extraArgs...)
	t.Cleanup(func() {
		httpClient.CloseIdleConnections()
		if tr, isTransport := http.DefaultTransport.(*http.Transport); isTransport {
			tr.CloseIdleConnections()
		}
	})
	return s
}

// hiSimUpstream serves a fresh chain.Sim on loopback and starts a server
// pointed at it. The Sim is returned so the test can inject faults.
func hiSimUpstream(t *testing.T) (*server, *chain.Sim) {
	t.Helper()
	sim := chain.NewSim(time.Now)
	up := httptest.NewServer(sim)
	t.Cleanup(func() { // after the server has stopped (cleanups run last first)
		sim.SetFault(chain.SimFault{})
		up.CloseClientConnections()
		up.Close()
	})
	return hiStart(t, "--upstream", up.URL), sim
}

// ---- reference data ----

// hiRef is an address's whole history, as the reference Sim shows it.
type hiRef struct {
	addr  string
	txs   []chain.Tx // mempool first, then newest first
	stats chain.AddressStats
}

func hiReference(t testing.TB, addr string) hiRef {
	t.Helper()
	hc := chain.NewHistoryCache(chain.NewHandlerClient(chain.NewSim(time.Now), chain.ClientOptions{}), time.Minute, nil, 16)
	ref := hiRef{addr: addr}
	for offset := 0; ; {
		p, err := hc.Page(context.Background(), addr, offset, chain.HistoryPageLimitMax, false)
		if err != nil {
			t.Fatalf("reference history of %s at %d: %v", addr, offset, err)
		}
		ref.txs = append(ref.txs, p.Txs...)
		ref.stats = p.Stats
		if !p.HasMore {
			break
		}
		offset = p.NextOffset
	}
	if int64(len(ref.txs)) != ref.stats.TxCount() {
		t.Fatalf("reference history of %s lists %d transactions, stats say %d", addr, len(ref.txs), ref.stats.TxCount())
	}
	return ref
}

// hiWindow is the base plan's window as the server computes it: the same
// day a year ago (exclusive) to today, UTC dates.
func hiWindow() (from, to time.Time) {
	now := time.Now().UTC()
	to = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return to.AddDate(-1, 0, 1), to
}

func hiInWindow(tx chain.Tx) bool {
	if !tx.Confirmed {
		return true
	}
	from, to := hiWindow()
	day := tx.BlockTime.UTC().Truncate(24 * time.Hour)
	return !day.Before(from) && !day.After(to)
}

// recent returns the leading transactions inside the window.
func (r hiRef) recent() []chain.Tx {
	for i, tx := range r.txs {
		if !hiInWindow(tx) {
			return r.txs[:i]
		}
	}
	return r.txs
}

func (r hiRef) ids(txs []chain.Tx) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.TxID
	}
	return out
}

// firstOld is the newest confirmed transaction before the window, and its
// position.
func (r hiRef) firstOld(t testing.TB) (chain.Tx, int) {
	t.Helper()
	for i, tx := range r.txs {
		if !hiInWindow(tx) {
			return tx, i
		}
	}
	t.Fatalf("%s has nothing older than the window", r.addr)
	return chain.Tx{}, 0
}

// firstRecentOwn is a confirmed transaction in the window that involves
// the address and one made-up counterparty only.
func (r hiRef) firstRecentOwn(t testing.TB) chain.Tx {
	t.Helper()
	for _, tx := range r.recent() {
		if tx.Confirmed && len(tx.Addresses()) <= 2 {
			return tx
		}
	}
	t.Fatalf("%s has no own confirmed transaction in the window", r.addr)
	return chain.Tx{}
}

// hiBusy returns the reference of a non-hub active address with at least
// 30 transactions in the window (several base-plan pages).
func hiBusy(t testing.TB) hiRef {
	t.Helper()
	for _, a := range hiActiveCandidates {
		if info, err := chain.SimInfo(a); err != nil || info.Dormant || info.Hub {
			continue
		}
		if r := hiReference(t, a); len(r.recent()) >= 30 {
			return r
		}
	}
	t.Fatalf("no candidate address has 30 transactions in the window")
	return hiRef{}
}

// hiSharedMempoolTx is the unconfirmed hub transaction paying both a and b.
func hiSharedMempoolTx(t testing.TB, a, b hiRef) chain.Tx {
	t.Helper()
	for _, tx := range a.txs {
		if !tx.Confirmed && tx.Involves(b.addr) {
			return tx
		}
	}
	t.Fatalf("no unconfirmed transaction shared by %s and %s", a.addr, b.addr)
	return chain.Tx{}
}

// ---- decoded answers ----

type hiTx struct {
	TxID        string   `json:"txid"`
	Time        *string  `json:"time"`
	Confirmed   bool     `json:"confirmed"`
	BlockHeight *int64   `json:"block_height"`
	AmountSat   int64    `json:"amount_sat"`
	FeeSat      int64    `json:"fee_sat"`
	Note        *string  `json:"note"`
	CardIDs     []string `json:"card_ids"`
}

type hiExport struct {
	Plan                 string  `json:"plan"`
	WindowEnforced       bool    `json:"window_enforced"`
	From                 *string `json:"from"`
	To                   *string `json:"to"`
	Complete             bool    `json:"complete"`
	OlderPreview         bool    `json:"older_preview"`
	OffsetCeilingReached bool    `json:"offset_ceiling_reached"`
}

type hiPage struct {
	Transactions    []hiTx   `json:"transactions"`
	NextOffset      *int     `json:"next_offset"`
	HasMore         bool     `json:"has_more"`
	HistoryExport   hiExport `json:"history_export"`
	HistoryDegraded bool     `json:"history_degraded"`
	Complete        bool     `json:"complete"`
	TotalCount      *int64   `json:"total_count"`
}

// hiKeys fails unless the JSON object has every key (a null counts).
func hiKeys(t testing.TB, what string, raw json.RawMessage, keys ...string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s is not a JSON object: %v\n%s", what, err, raw)
	}
	for _, k := range keys {
		if _, found := m[k]; !found {
			t.Fatalf("%s lacks %q: %s", what, k, raw)
		}
	}
	return m
}

var (
	hiTxKeys     = []string{"txid", "time", "confirmed", "block_height", "amount_sat", "fee_sat", "note"}
	hiExportKeys = []string{"plan", "window_enforced", "from", "to", "complete", "older_preview", "offset_ceiling_reached"}
)

// hiDecodePage decodes a 200 transactions page and checks its shape: every
// field the spec names present, no error code, transactions an array.
func hiDecodePage(t testing.TB, r response) hiPage {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("transactions page: status %d, want 200; body %s", r.Status, r.Body)
	}
	m := hiKeys(t, "transactions page", r.Body, "transactions", "next_offset", "has_more", "history_export", "history_degraded", "complete", "total_count")
	if _, found := m["code"]; found {
		t.Fatalf("a 200 History page carries an error code: %s", r.Body)
	}
	if string(m["transactions"]) == "null" {
		t.Fatalf("transactions is null: %s", r.Body)
	}
	hiKeys(t, "history_export", m["history_export"], hiExportKeys...)
	var txs []json.RawMessage
	if err := json.Unmarshal(m["transactions"], &txs); err != nil {
		t.Fatalf("transactions is not an array: %s", r.Body)
	}
	for i, tx := range txs {
		hiKeys(t, fmt.Sprintf("transactions[%d]", i), tx, hiTxKeys...)
	}
	var p hiPage
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("decode transactions page: %v\n%s", err, r.Body)
	}
	// Paging fields agree with each other.
	if p.HasMore != (p.NextOffset != nil) && !p.HistoryDegraded {
		t.Fatalf("has_more %v with next_offset %v: %s", p.HasMore, p.NextOffset, r.Body)
	}
	if p.HistoryExport.Complete != p.Complete {
		t.Fatalf("history_export.complete %v differs from complete %v", p.HistoryExport.Complete, p.Complete)
	}
	if p.HistoryDegraded && p.Complete {
		t.Fatalf("a degraded page claims to be complete: %s", r.Body)
	}
	return p
}

func hiTxURL(s *server, prefix, cardID, query string) string {
	u := s.URL + prefix + "/history/cards/" + cardID + "/transactions"
	if query != "" {
		u += "?" + query
	}
	return u
}

// hiGetPage fetches and decodes one page of a card's History.
func hiGetPage(t testing.TB, s *server, bearer, prefix, cardID, query string) hiPage {
	t.Helper()
	return hiDecodePage(t, do(t, "GET", hiTxURL(s, prefix, cardID, query), bearer, nil))
}

// hiCheckTx compares a shown transaction with the reference one, for the
// amount of the given addresses.
func hiCheckTx(t testing.TB, what string, got hiTx, want chain.Tx, addresses ...string) {
	t.Helper()
	if got.TxID != want.TxID {
		t.Fatalf("%s: txid %s, want %s", what, got.TxID, want.TxID)
	}
	var amount int64
	for _, a := range addresses {
		amount += want.NetAmount(a)
	}
	if got.Confirmed != want.Confirmed || got.FeeSat != want.Fee || got.AmountSat != amount {
		t.Fatalf("%s: confirmed %v fee %d amount %d, want %v %d %d", what, got.Confirmed, got.FeeSat, got.AmountSat, want.Confirmed, want.Fee, amount)
	}
	if !want.Confirmed {
		if got.Time != nil || got.BlockHeight != nil {
			t.Fatalf("%s: unconfirmed transaction with time %v block_height %v", what, got.Time, got.BlockHeight)
		}
		return
	}
	if got.Time == nil || got.BlockHeight == nil {
		t.Fatalf("%s: confirmed transaction without time or block_height", what)
	}
	ts, err := time.Parse(time.RFC3339, *got.Time)
	if err != nil || !ts.Equal(want.BlockTime) || *got.BlockHeight != want.BlockHeight {
		t.Fatalf("%s: time %s height %d, want %s %d", what, *got.Time, *got.BlockHeight, want.BlockTime.Format(time.RFC3339), want.BlockHeight)
	}
}

// hiPageAll follows next_offset from 0 with the given limit until has_more
// is false, checking each page, and returns every transaction and the
// last page.
func hiPageAll(t testing.TB, s *server, bearer, prefix, cardID string, limit int) ([]hiTx, hiPage) {
	t.Helper()
	var all []hiTx
	offset := 0
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatalf("paging did not end after 200 pages")
		}
		p := hiGetPage(t, s, bearer, prefix, cardID, fmt.Sprintf("limit=%d&offset=%d", limit, offset))
		if p.HistoryDegraded || !p.Complete {
			t.Fatalf("page at %d degraded or incomplete: %+v", offset, p)
		}
		if len(p.Transactions) > limit {
			t.Fatalf("page at %d holds %d transactions, limit %d", offset, len(p.Transactions), limit)
		}
		all = append(all, p.Transactions...)
		if !p.HasMore {
			return all, p
		}
		if *p.NextOffset != offset+len(p.Transactions) {
			t.Fatalf("next_offset %d after %d transactions at %d", *p.NextOffset, len(p.Transactions), offset)
		}
		offset = *p.NextOffset
	}
}

func hiTxIDs(txs []hiTx) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.TxID
	}
	return out
}

// ---- accounts, cards, notes ----

// hiEnv is an account with a write key and a read key.
type hiEnv struct {
	s     *server
	acct  account
	write string
	read  string
}

func hiSetup(t testing.TB, s *server, plan string) hiEnv {
	t.Helper()
	e := hiEnv{s: s, acct: s.createAccount(t, plan)}
	e.write, _ = apCreateKey(t, s, e.acct, "write")
	e.read, _ = apCreateKey(t, s, e.acct, "read")
	return e
}

// card creates an Account card with the write key (grant write).
func (e hiEnv) card(t testing.TB, address, name string) string {
	t.Helper()
	return apID(apCreateCard(t, e.s, e.write, map[string]any{"address": address, "name": name}))
}

// ownerCard creates an Account card as the owner (grant none).
func (e hiEnv) ownerCard(t testing.TB, address, name string) string {
	t.Helper()
	return apID(apOwnerCreateCard(t, e.s, e.acct, address, name))
}

func (e hiEnv) grant(t testing.TB, cardID, level string) {
	t.Helper()
	apGrantCard(t, e.s, e.acct, cardID, level)
}

func (e hiEnv) setPlan(t testing.TB, plan string) {
	t.Helper()
	r := do(t, "PUT", e.s.URL+"/owner/v1/plan", e.acct.OwnerSecret, map[string]any{"plan": plan})
	expect(t, r, http.StatusOK, "")
}

func hiPutNote(t testing.TB, s *server, prefix, bearer, txid, note string) response {
	t.Helper()
	return do(t, "PUT", s.URL+prefix+"/history/notes/"+txid, bearer, map[string]any{"note": note})
}

// hiNotes runs the batch read and returns txid → note.
func hiNotes(t testing.TB, s *server, prefix, bearer string, txids ...string) map[string]string {
	t.Helper()
	if txids == nil {
		txids = []string{}
	}
	r := do(t, "POST", s.URL+prefix+"/history/notes/batch", bearer, map[string]any{"txids": txids})
	expect(t, r, http.StatusOK, "")
	var body struct {
		Notes []struct {
			TxID      string `json:"txid"`
			Note      string `json:"note"`
			UpdatedAt string `json:"updated_at"`
		} `json:"notes"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Notes == nil {
		t.Fatalf("batch body: %v %s", err, r.Body)
	}
	out := map[string]string{}
	for _, n := range body.Notes {
		if _, twice := out[n.TxID]; twice {
			t.Fatalf("batch returns %s twice: %s", n.TxID, r.Body)
		}
		out[n.TxID] = n.Note
	}
	return out
}

// hiHasNote fails unless the batch read answers exactly want (or no note
// when want is "").
func hiHasNote(t testing.TB, what string, s *server, prefix, bearer, txid, want string) {
	t.Helper()
	got, found := hiNotes(t, s, prefix, bearer, txid)[txid]
	switch {
	case want == "" && found:
		t.Fatalf("%s: batch returns note %q, want none", what, got)
	case want != "" && got != want:
		t.Fatalf("%s: batch returns %q (found %v), want %q", what, got, found, want)
	}
}

// ---- tests ----

func TestHistoryCardTransactionsShapeAndPaging(t *testing.T) {
	t.Parallel()
	s := hiStart(t)
	busy := hiBusy(t)
	e := hiSetup(t, s, "base")
	card := e.card(t, busy.addr, "busy")
	from, to := hiWindow()

	// The default page: 25 transactions from offset 0, each as the
	// upstream has it.
	p := hiGetPage(t, s, e.write, "/v1", card, "")
	if len(p.Transactions) != 25 || !p.HasMore || p.NextOffset == nil || *p.NextOffset != 25 {
		t.Fatalf("default page: %d transactions, has_more %v, next_offset %v", len(p.Transactions), p.HasMore, p.NextOffset)
	}
	for i, tx := range p.Transactions {
		hiCheckTx(t, fmt.Sprintf("default page [%d]", i), tx, busy.txs[i], busy.addr)
		if tx.Note != nil {
			t.Fatalf("transaction %s shows a note before any was written", tx.TxID)
		}
	}
	if p.TotalCount == nil || *p.TotalCount != busy.stats.TxCount() {
		t.Fatalf("total_count %v, want the lifetime upstream count %d", p.TotalCount, busy.stats.TxCount())
	}
	want := hiExport{Plan: "base", WindowEnforced: true, Complete: true}
	got := p.HistoryExport
	if got.From == nil || got.To == nil || *got.From != from.Format(time.DateOnly) || *got.To != to.Format(time.DateOnly) {
		t.Fatalf("history_export window %v..%v, want %s..%s", got.From, got.To, from.Format(time.DateOnly), to.Format(time.DateOnly))
	}
	got.From, got.To = nil, nil
	if got != want || p.HistoryDegraded || !p.Complete {
		t.Fatalf("history_export %+v degraded %v complete %v", p.HistoryExport, p.HistoryDegraded, p.Complete)
	}

	// Paging by next_offset (odd page size) returns exactly the window's
	// transactions, in order, without repeats, then stops.
	all, last := hiPageAll(t, s, e.write, "/v1", card, 7)
	if wantIDs := busy.ids(busy.recent()); !slices.Equal(hiTxIDs(all), wantIDs) {
		t.Fatalf("base-plan paging returned %d transactions, want the %d of the window:\ngot  %v\nwant %v", len(all), len(wantIDs), hiTxIDs(all), wantIDs)
	}
	if last.NextOffset != nil || last.HistoryExport.OlderPreview {
		t.Fatalf("last page: next_offset %v older_preview %v", last.NextOffset, last.HistoryExport.OlderPreview)
	}
	for i, tx := range all {
		hiCheckTx(t, fmt.Sprintf("window [%d]", i), tx, busy.txs[i], busy.addr)
	}
	// Past the window: an empty page, not older transactions.
	p = hiGetPage(t, s, e.write, "/v1", card, fmt.Sprintf("offset=%d", len(all)))
	if len(p.Transactions) != 0 || p.HasMore || p.NextOffset != nil || p.HistoryExport.OlderPreview {
		t.Fatalf("page past the window: %+v", p)
	}
	if p.TotalCount == nil || *p.TotalCount != busy.stats.TxCount() {
		t.Fatalf("total_count past the window %v, want %d", p.TotalCount, busy.stats.TxCount())
	}

	// Bounds.
	for _, q := range []string{"limit=1", "limit=100", "offset=0", "limit=25&offset=3"} {
		apExpect(t, q, do(t, "GET", hiTxURL(s, "/v1", card, q), e.write, nil), http.StatusOK, "")
	}
	if p := hiGetPage(t, s, e.write, "/v1", card, "limit=100"); len(p.Transactions) != min(100, len(all)) {
		t.Fatalf("limit=100 page holds %d transactions, want %d", len(p.Transactions), min(100, len(all)))
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=abc", "limit=", "limit=1.5", "limit=+5",
		"offset=-1", "offset=x", "offset=", "offset=1e3",
		"cursor=5", "limit=5&limit=6", "force_refresh=true"} {
		apExpect(t, q, do(t, "GET", hiTxURL(s, "/v1", card, q), e.write, nil), http.StatusUnprocessableEntity, "VALIDATION")
	}

	// Read key: readable. Owner counterpart: the same transactions.
	if p := hiGetPage(t, s, e.read, "/v1", card, ""); !slices.Equal(hiTxIDs(p.Transactions), busy.ids(busy.txs[:25])) {
		t.Fatalf("read key sees other transactions")
	}
	if p := hiGetPage(t, s, e.acct.OwnerSecret, "/owner/v1", card, "limit=10&offset=5"); !slices.Equal(hiTxIDs(p.Transactions), busy.ids(busy.txs[5:15])) {
		t.Fatalf("owner page differs from the reference")
	}
	// Agent credentials on the owner path and the reverse are refused.
	apExpect(t, "key on owner path", do(t, "GET", hiTxURL(s, "/owner/v1", card, ""), e.write, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	apExpect(t, "owner secret on agent path", do(t, "GET", hiTxURL(s, "/v1", card, ""), e.acct.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	apExpect(t, "no key", do(t, "GET", hiTxURL(s, "/v1", card, ""), "", nil), http.StatusUnauthorized, "UNAUTHORIZED")

	// Hidden and unknown cards: 404.
	hidden := e.ownerCard(t, hiDormant3, "hidden")
	r := do(t, "GET", hiTxURL(s, "/v1", hidden, ""), e.write, nil)
	expect(t, r, http.StatusNotFound, "NOT_FOUND")
	mustNotLeak(t, r, hiDormant3)
	expect(t, do(t, "GET", hiTxURL(s, "/v1", "no-such-card", ""), e.write, nil), http.StatusNotFound, "NOT_FOUND")
	// A grant change applies to the next request.
	e.grant(t, card, "none")
	expect(t, do(t, "GET", hiTxURL(s, "/v1", card, ""), e.read, nil), http.StatusNotFound, "NOT_FOUND")

	// GET /history/cards lists only readable cards.
	e.grant(t, card, "read")
	r = do(t, "GET", s.URL+"/v1/history/cards", e.write, nil)
	expect(t, r, http.StatusOK, "")
	var cards struct {
		Cards []struct {
			ID              string `json:"id"`
			Address         string `json:"address"`
			EffectiveAccess string `json:"effective_access"`
		} `json:"cards"`
	}
	if err := json.Unmarshal(r.Body, &cards); err != nil || len(cards.Cards) != 1 || cards.Cards[0].ID != card || cards.Cards[0].Address != busy.addr || cards.Cards[0].EffectiveAccess != "read" {
		t.Fatalf("history cards: %s", r.Body)
	}
	mustNotLeak(t, r, hidden, hiDormant3)
	apExpect(t, "history cards with a parameter", do(t, "GET", s.URL+"/v1/history/cards?x=1", e.write, nil), http.StatusUnprocessableEntity, "VALIDATION")

	// Extended plan: full history beyond the window, by next_offset.
	e.setPlan(t, "extended")
	all, last = hiPageAll(t, s, e.write, "/v1", card, 100)
	if !slices.Equal(hiTxIDs(all), busy.ids(busy.txs)) {
		t.Fatalf("extended paging returned %d transactions, want all %d", len(all), len(busy.txs))
	}
	if len(all) <= len(busy.recent()) {
		t.Fatalf("extended plan shows nothing beyond the window")
	}
	x := last.HistoryExport
	if x.Plan != "extended" || x.WindowEnforced || x.From != nil || x.To != nil || !x.Complete || x.OlderPreview || x.OffsetCeilingReached {
		t.Fatalf("extended history_export %+v", x)
	}
	if last.TotalCount == nil || *last.TotalCount != int64(len(all)) {
		t.Fatalf("extended total_count %v, want %d", last.TotalCount, len(all))
	}
	for i, tx := range all {
		hiCheckTx(t, fmt.Sprintf("extended [%d]", i), tx, busy.txs[i], busy.addr)
	}
}

// mustNotLeak fails if a response mentions any of the strings.
func mustNotLeak(t testing.TB, r response, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(string(r.Body), s) {
			t.Fatalf("response reveals %q: %s", s, r.Body)
		}
	}
}

func TestHistoryOlderPreview(t *testing.T) {
	t.Parallel()
	s := hiStart(t)
	dormant := hiReference(t, hiDormant1)
	if len(dormant.recent()) != 0 {
		t.Fatalf("fixture %s has recent transactions", hiDormant1)
	}
	e := hiSetup(t, s, "base")
	card := e.card(t, dormant.addr, "dormant")

	for _, q := range []string{"", "limit=25", "limit=100"} {
		p := hiGetPage(t, s, e.write, "/v1", card, q)
		n := min(25, len(dormant.txs))
		if len(p.Transactions) != n || p.HasMore || p.NextOffset != nil || !p.HistoryExport.OlderPreview || !p.Complete {
			t.Fatalf("preview (%q): %d transactions, has_more %v, next_offset %v, older_preview %v, complete %v",
				q, len(p.Transactions), p.HasMore, p.NextOffset, p.HistoryExport.OlderPreview, p.Complete)
		}
		for i, tx := range p.Transactions {
			hiCheckTx(t, fmt.Sprintf("preview [%d]", i), tx, dormant.txs[i], dormant.addr)
		}
		// The preview does not extend the date window.
		from, _ := hiWindow()
		if x := p.HistoryExport; !x.WindowEnforced || x.From == nil || *x.From != from.Format(time.DateOnly) {
			t.Fatalf("preview history_export %+v", x)
		}
		if *p.TotalCount != dormant.stats.TxCount() {
			t.Fatalf("preview total_count %d, want %d", *p.TotalCount, dormant.stats.TxCount())
		}
	}
	// A smaller limit never shows more than the preview's 25.
	if p := hiGetPage(t, s, e.write, "/v1", card, "limit=5"); len(p.Transactions) > 25 || !p.HistoryExport.OlderPreview || p.HasMore {
		t.Fatalf("preview with limit=5: %+v", p)
	}
	// Beyond the preview: nothing.
	for _, q := range []string{"offset=25", "offset=1", "offset=25&limit=100"} {
		p := hiGetPage(t, s, e.write, "/v1", card, q)
		if len(p.Transactions) != 0 || p.HasMore || p.HistoryExport.OlderPreview {
			t.Fatalf("%s: %d transactions, has_more %v, older_preview %v", q, len(p.Transactions), p.HasMore, p.HistoryExport.OlderPreview)
		}
	}

	// Notes: a transaction on the preview page is eligible; one past it is
	// not (base plan), and nothing is written.
	onPreview, beyond := dormant.txs[3].TxID, dormant.txs[30].TxID
	expect(t, hiPutNote(t, s, "/v1", e.write, onPreview, "preview note"), http.StatusOK, "")
	expect(t, hiPutNote(t, s, "/v1", e.write, beyond, "too old"), http.StatusForbidden, "FORBIDDEN")
	expect(t, hiPutNote(t, s, "/owner/v1", e.acct.OwnerSecret, beyond, "too old"), http.StatusForbidden, "FORBIDDEN")
	hiHasNote(t, "preview note", s, "/v1", e.write, onPreview, "preview note")
	hiHasNote(t, "refused old note", s, "/owner/v1", e.acct.OwnerSecret, beyond, "")
	// The note shows on the preview page.
	p := hiGetPage(t, s, e.read, "/v1", card, "")
	if p.Transactions[3].Note == nil || *p.Transactions[3].Note != "preview note" {
		t.Fatalf("preview page does not show the note: %+v", p.Transactions[3])
	}

	// Extended plan: no preview, the full history pages on.
	e.setPlan(t, "extended")
	p = hiGetPage(t, s, e.write, "/v1", card, "")
	if p.HistoryExport.OlderPreview || !p.HasMore || p.NextOffset == nil || *p.NextOffset != 25 || p.HistoryExport.WindowEnforced {
		t.Fatalf("extended first page of a dormant card: %+v", p)
	}
	p = hiGetPage(t, s, e.write, "/v1", card, "offset=25&limit=10")
	if !slices.Equal(hiTxIDs(p.Transactions), dormant.ids(dormant.txs[25:35])) {
		t.Fatalf("extended offset 25 differs from the reference")
	}
	expect(t, hiPutNote(t, s, "/v1", e.write, beyond, "old is fine now"), http.StatusOK, "")
	// After a downgrade the note stays, and stays editable and deletable.
	e.setPlan(t, "base")
	hiHasNote(t, "after downgrade", s, "/v1", e.read, beyond, "old is fine now")
	expect(t, hiPutNote(t, s, "/v1", e.write, beyond, "edited after downgrade"), http.StatusOK, "")
	hiHasNote(t, "edited after downgrade", s, "/v1", e.read, beyond, "edited after downgrade")
	expect(t, do(t, "DELETE", s.URL+"/owner/v1/history/notes/"+beyond, e.acct.OwnerSecret, nil), http.StatusOK, "")
	hiHasNote(t, "deleted after downgrade", s, "/owner/v1", e.acct.OwnerSecret, beyond, "")
}

func TestHistoryCombinedView(t *testing.T) {
	t.Parallel()
	s := hiStart(t)
	gen, hubQ := hiReference(t, hiGenesis), hiReference(t, hiHubQ)
	shared := hiSharedMempoolTx(t, gen, hubQ)
	if !shared.Involves(hiHub3) {
		t.Fatalf("the shared mempool transaction does not pay %s", hiHub3)
	}

	type combinedCard struct {
		CardID          string `json:"card_id"`
		Address         string `json:"address"`
		TotalCount      *int64 `json:"total_count"`
		BalanceSat      *int64 `json:"balance_sat"`
		RecentCount     *int   `json:"recent_count"`
		HistoryDegraded bool   `json:"history_degraded"`
	}
	type combined struct {
		Cards           []combinedCard `json:"cards"`
		Transactions    []hiTx         `json:"transactions"`
		HistoryExport   hiExport       `json:"history_export"`
		HistoryDegraded bool           `json:"history_degraded"`
		Complete        bool           `json:"complete"`
	}
	get := func(t *testing.T, prefix, bearer, query string) (combined, response) {
		t.Helper()
		u := s.URL + prefix + "/history"
		if query != "" {
			u += "?" + query
		}
		r := do(t, "GET", u, bearer, nil)
		expect(t, r, http.StatusOK, "")
		m := hiKeys(t, "combined history", r.Body, "cards", "transactions", "history_export", "history_degraded", "complete")
		if _, found := m["code"]; found {
			t.Fatalf("combined history carries an error code: %s", r.Body)
		}
		if string(m["cards"]) == "null" || string(m["transactions"]) == "null" {
			t.Fatalf("combined history has a null list: %s", r.Body)
		}
		hiKeys(t, "combined history_export", m["history_export"], hiExportKeys...)
		var v combined
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatalf("combined history: %v\n%s", err, r.Body)
		}
		if len(v.Transactions) > 25 {
			t.Fatalf("combined view holds %d transactions", len(v.Transactions))
		}
		// Newest first, unconfirmed before confirmed, no repeats.
		seen := map[string]bool{}
		for i, tx := range v.Transactions {
			if seen[tx.TxID] {
				t.Fatalf("combined view repeats %s", tx.TxID)
			}
			seen[tx.TxID] = true
			if i == 0 {
				continue
			}
			prev := v.Transactions[i-1]
			switch {
			case prev.Confirmed && !tx.Confirmed:
				t.Fatalf("unconfirmed %s after confirmed %s", tx.TxID, prev.TxID)
			case prev.Confirmed && tx.Confirmed && *prev.Time < *tx.Time:
				t.Fatalf("combined view not newest first at %d: %s then %s", i, *prev.Time, *tx.Time)
			}
		}
		return v, r
	}
	refOf := map[string]hiRef{hiGenesis: gen, hiHubQ: hubQ}

	t.Run("readable cards and shared transactions", func(t *testing.T) {
		e := hiSetup(t, s, "base")
		cardG := e.card(t, hiGenesis, "genesis")
		cardQ := e.card(t, hiHubQ, "hub q")
		hidden := e.ownerCard(t, hiHub3, "hidden hub") // grant none: excluded
		cardAddr := map[string]string{cardG: hiGenesis, cardQ: hiHubQ}

		v, r := get(t, "/v1", e.read, "")
		mustNotLeak(t, r, hidden, hiHub3)
		if len(v.Cards) != 2 {
			t.Fatalf("combined view lists %d cards, want the 2 readable: %s", len(v.Cards), r.Body)
		}
		for _, c := range v.Cards {
			ref, known := refOf[c.Address]
			if !known || cardAddr[c.CardID] != c.Address {
				t.Fatalf("unexpected card %+v", c)
			}
			if c.TotalCount == nil || *c.TotalCount != ref.stats.TxCount() || c.BalanceSat == nil || *c.BalanceSat != ref.stats.Balance() {
				t.Fatalf("card %s: total_count %v balance_sat %v, want %d %d", c.Address, c.TotalCount, c.BalanceSat, ref.stats.TxCount(), ref.stats.Balance())
			}
			if c.RecentCount == nil || *c.RecentCount != min(25, len(ref.recent())) || c.HistoryDegraded {
				t.Fatalf("card %s: recent_count %v, want %d (first page in the window)", c.Address, c.RecentCount, min(25, len(ref.recent())))
			}
		}
		if v.HistoryDegraded || !v.Complete || v.HistoryExport.OlderPreview || v.HistoryExport.Plan != "base" {
			t.Fatalf("combined flags: degraded %v complete %v export %+v", v.HistoryDegraded, v.Complete, v.HistoryExport)
		}
		// The merged list is the newest 25 of both cards' windows.
		union := map[string]chain.Tx{}
		for _, ref := range refOf {
			for _, tx := range ref.recent() {
				union[tx.TxID] = tx
			}
		}
		if want := min(25, len(union)); len(v.Transactions) != want {
			t.Fatalf("combined view holds %d transactions, want %d", len(v.Transactions), want)
		}
		found := false
		for _, tx := range v.Transactions {
			ref, known := union[tx.TxID]
			if !known {
				t.Fatalf("combined view shows %s, in neither card's window", tx.TxID)
			}
			var involved []string
			for id, a := range cardAddr {
				if ref.Involves(a) {
					involved = append(involved, id)
				}
			}
			apSameSet(t, "card_ids of "+tx.TxID, tx.CardIDs, involved)
			if tx.TxID == shared.TxID {
				found = true
				hiCheckTx(t, "shared", tx, shared, hiGenesis, hiHubQ)
			}
		}
		if !found {
			t.Fatalf("the shared unconfirmed hub transaction %s is not in the combined view", shared.TxID)
		}

		// The owner's combined view includes the card at none.
		ov, _ := get(t, "/owner/v1", e.acct.OwnerSecret, "force_refresh=true")
		if len(ov.Cards) != 3 {
			t.Fatalf("owner combined view lists %d cards, want 3", len(ov.Cards))
		}
		for _, tx := range ov.Transactions {
			if tx.TxID == shared.TxID && len(tx.CardIDs) != 3 {
				t.Fatalf("owner view of the shared transaction: card_ids %v, want all three", tx.CardIDs)
			}
		}
		// A grant change applies at once: the card at read joins.
		e.grant(t, hidden, "read")
		v, _ = get(t, "/v1", e.read, "")
		if len(v.Cards) != 3 {
			t.Fatalf("after granting read the combined view lists %d cards", len(v.Cards))
		}

		apExpect(t, "force_refresh=maybe", do(t, "GET", s.URL+"/v1/history?force_refresh=maybe", e.read, nil), http.StatusUnprocessableEntity, "VALIDATION")
		apExpect(t, "unknown parameter", do(t, "GET", s.URL+"/v1/history?limit=5", e.read, nil), http.StatusUnprocessableEntity, "VALIDATION")
		apExpect(t, "no key", do(t, "GET", s.URL+"/v1/history", "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	})

	t.Run("preview only when every card is quiet", func(t *testing.T) {
		d1, d2 := hiReference(t, hiDormant2), hiReference(t, hiDormant3)
		quiet := hiSetup(t, s, "base")
		quiet.card(t, hiDormant2, "d2")
		quiet.card(t, hiDormant3, "d3")
		v, _ := get(t, "/v1", quiet.write, "")
		if !v.HistoryExport.OlderPreview || len(v.Transactions) == 0 {
			t.Fatalf("dormant-only combined view: older_preview %v, %d transactions", v.HistoryExport.OlderPreview, len(v.Transactions))
		}
		older := map[string]bool{}
		for _, ref := range []hiRef{d1, d2} {
			for _, tx := range ref.txs[:min(25, len(ref.txs))] {
				older[tx.TxID] = true
			}
		}
		for _, tx := range v.Transactions {
			if !older[tx.TxID] {
				t.Fatalf("dormant-only preview shows %s, not on either card's preview page", tx.TxID)
			}
		}
		for _, c := range v.Cards {
			if c.RecentCount == nil || *c.RecentCount != 0 {
				t.Fatalf("dormant card %s: recent_count %v", c.Address, c.RecentCount)
			}
		}

		// A dormant card next to an active one: no older transactions.
		mixed := hiSetup(t, s, "base")
		mixed.card(t, hiDormant2, "d2")
		mixed.card(t, hiHubQ, "active")
		v, _ = get(t, "/v1", mixed.write, "")
		if v.HistoryExport.OlderPreview {
			t.Fatalf("mixed combined view claims a preview")
		}
		recent := map[string]bool{}
		for _, tx := range hubQ.recent() {
			recent[tx.TxID] = true
		}
		for _, tx := range v.Transactions {
			if !recent[tx.TxID] {
				t.Fatalf("mixed combined view shows %s, outside the window", tx.TxID)
			}
		}
		if len(v.Transactions) == 0 {
			t.Fatalf("mixed combined view shows nothing")
		}

		// The only card hidden (owner-created, none): nothing is included,
		// so there is nothing to preview.
		half := hiSetup(t, s, "base")
		half.ownerCard(t, hiDormant2, "hidden dormant")
		v, r := get(t, "/v1", half.write, "")
		if len(v.Cards) != 0 || len(v.Transactions) != 0 || v.HistoryExport.OlderPreview {
			t.Fatalf("no readable cards: %s", r.Body)
		}
		// Extended plan: no preview and no window.
		quiet.setPlan(t, "extended")
		v, _ = get(t, "/v1", quiet.write, "")
		if v.HistoryExport.OlderPreview || v.HistoryExport.WindowEnforced || v.HistoryExport.Plan != "extended" || len(v.Transactions) != 25 {
			t.Fatalf("extended combined view: export %+v, %d transactions", v.HistoryExport, len(v.Transactions))
		}
	})
}

func TestHistoryNotes(t *testing.T) {
	t.Parallel()
	s := hiStart(t)
	gen, hubQ := hiReference(t, hiGenesis), hiReference(t, hiHubQ)
	shared := hiSharedMempoolTx(t, gen, hubQ).TxID
	recent := gen.firstRecentOwn(t)
	oldTx, _ := gen.firstOld(t)

	e := hiSetup(t, s, "base")
	cardG := e.card(t, hiGenesis, "genesis")
	cardQ := e.card(t, hiHubQ, "hub q")
	put := func(bearer, txid, note string) response { return hiPutNote(t, s, "/v1", bearer, txid, note) }

	// A recent transaction: saved, returned by the batch read and shown
	// on the History page.
	r := put(e.write, recent.TxID, "rent")
	expect(t, r, http.StatusOK, "")
	m := r.JSON(t)
	if m["txid"] != recent.TxID || m["note"] != "rent" {
		t.Fatalf("note write answered %s", r.Body)
	}
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(m["updated_at"])); err != nil {
		t.Fatalf("updated_at %v: %v", m["updated_at"], err)
	}
	hiHasNote(t, "recent note", s, "/v1", e.write, recent.TxID, "rent")
	hiHasNote(t, "recent note, read key", s, "/v1", e.read, recent.TxID, "rent")
	all, _ := hiPageAll(t, s, e.read, "/v1", cardG, 100)
	shown := false
	for _, tx := range all {
		if tx.TxID == recent.TxID {
			shown = tx.Note != nil && *tx.Note == "rent"
		} else if tx.Note != nil {
			t.Fatalf("transaction %s shows note %q", tx.TxID, *tx.Note)
		}
	}
	if !shown {
		t.Fatalf("the History page does not show the note on %s", recent.TxID)
	}
	// Replace: still one note.
	expect(t, put(e.write, recent.TxID, "rent, March"), http.StatusOK, "")
	hiHasNote(t, "replaced note", s, "/v1", e.write, recent.TxID, "rent, March")
	// An upper-case txid names the same transaction.
	expect(t, put(e.write, strings.ToUpper(recent.TxID), "rent, April"), http.StatusOK, "")
	hiHasNote(t, "upper-case txid", s, "/v1", e.write, recent.TxID, "rent, April")

	// Unknown txid: 404, nothing written.
	unknown := strings.Repeat("ab", 32)
	expect(t, put(e.write, unknown, "ghost"), http.StatusNotFound, "NOT_FOUND")
	tampered := []byte(recent.TxID)
	tampered[10] ^= 1
	if tampered[10] > 'f' || (tampered[10] > '9' && tampered[10] < 'a') {
		tampered[10] = '0'
	}
	if string(tampered) != recent.TxID {
		expect(t, put(e.write, string(tampered), "ghost"), http.StatusNotFound, "NOT_FOUND")
		hiHasNote(t, "tampered txid", s, "/owner/v1", e.acct.OwnerSecret, string(tampered), "")
	}
	hiHasNote(t, "unknown txid", s, "/owner/v1", e.acct.OwnerSecret, unknown, "")
	// A transaction that involves no card of the account: 404.
	other := hiReference(t, hiActiveCandidates[0]).firstRecentOwn(t).TxID
	expect(t, put(e.write, other, "not ours"), http.StatusNotFound, "NOT_FOUND")
	// Shape errors.
	for name, c := range map[string]struct {
		txid string
		body any
	}{
		"51 code points": {recent.TxID, map[string]any{"note": strings.Repeat("é", 51)}},
		"empty note":     {recent.TxID, map[string]any{"note": ""}},
		"no note":        {recent.TxID, map[string]any{}},
		"null note":      {recent.TxID, `{"note":null}`},
		"extra field":    {recent.TxID, map[string]any{"note": "x", "txid": recent.TxID}},
		"short txid":     {recent.TxID[:63], map[string]any{"note": "x"}},
		"non-hex txid":   {recent.TxID[:63] + "z", map[string]any{"note": "x"}},
	} {
		apExpect(t, name, do(t, "PUT", s.URL+"/v1/history/notes/"+c.txid, e.write, c.body), http.StatusUnprocessableEntity, "VALIDATION")
	}
	hiHasNote(t, "after refused writes", s, "/v1", e.write, recent.TxID, "rent, April")
	fifty := strings.Repeat("😀", 50)
	expect(t, put(e.write, recent.TxID, fifty), http.StatusOK, "")
	hiHasNote(t, "50 code points", s, "/v1", e.write, recent.TxID, fifty)

	// Base plan: a new note on an old transaction of an active card is
	// refused (the card has recent activity, so no preview page).
	expect(t, put(e.write, oldTx.TxID, "old"), http.StatusForbidden, "FORBIDDEN")
	hiHasNote(t, "refused old note", s, "/owner/v1", e.acct.OwnerSecret, oldTx.TxID, "")

	// Read-only key: 403, but it reads notes.
	expect(t, put(e.read, recent.TxID, "nope"), http.StatusForbidden, "FORBIDDEN")
	expect(t, do(t, "DELETE", s.URL+"/v1/history/notes/"+recent.TxID, e.read, nil), http.StatusForbidden, "FORBIDDEN")
	hiHasNote(t, "after read-only attempts", s, "/v1", e.read, recent.TxID, fifty)

	// The shared unconfirmed transaction involves both cards: a note
	// needs write on each.
	e.grant(t, cardQ, "read")
	expect(t, put(e.write, shared, "shared"), http.StatusForbidden, "FORBIDDEN")
	hiHasNote(t, "refused shared note", s, "/owner/v1", e.acct.OwnerSecret, shared, "")
	expect(t, hiPutNote(t, s, "/owner/v1", e.acct.OwnerSecret, shared, "owner shared"), http.StatusOK, "")
	hiHasNote(t, "shared, both readable", s, "/v1", e.write, shared, "owner shared")
	hiHasNote(t, "shared, read key", s, "/v1", e.read, shared, "owner shared")
	expect(t, do(t, "DELETE", s.URL+"/v1/history/notes/"+shared, e.write, nil), http.StatusForbidden, "FORBIDDEN")
	// The card at none: the note is hidden from keys, not from the owner.
	e.grant(t, cardQ, "none")
	hiHasNote(t, "shared, one card none", s, "/v1", e.write, shared, "")
	hiHasNote(t, "shared, one card none, owner", s, "/owner/v1", e.acct.OwnerSecret, shared, "owner shared")
	expect(t, do(t, "DELETE", s.URL+"/v1/history/notes/"+shared, e.write, nil), http.StatusNotFound, "NOT_FOUND")
	expect(t, put(e.write, shared, "x"), http.StatusNotFound, "NOT_FOUND")
	// And the History page of the other card does not show it.
	p := hiGetPage(t, s, e.write, "/v1", cardG, "")
	for _, tx := range p.Transactions {
		if tx.TxID == shared && tx.Note != nil {
			t.Fatalf("History page shows the hidden note %q", *tx.Note)
		}
	}
	// Both write: the key writes it.
	e.grant(t, cardQ, "write")
	expect(t, put(e.write, shared, "key shared"), http.StatusOK, "")
	hiHasNote(t, "shared, key write", s, "/v1", e.read, shared, "key shared")

	// Delete: 200 {"deleted":true}, then gone.
	r = do(t, "DELETE", s.URL+"/v1/history/notes/"+shared, e.write, nil)
	expect(t, r, http.StatusOK, "")
	if strings.TrimSpace(string(r.Body)) != `{"deleted":true}` {
		t.Fatalf("delete answered %s", r.Body)
	}
	hiHasNote(t, "deleted", s, "/owner/v1", e.acct.OwnerSecret, shared, "")
	expect(t, do(t, "DELETE", s.URL+"/v1/history/notes/"+shared, e.write, nil), http.StatusNotFound, "NOT_FOUND")
	apExpect(t, "delete malformed txid", do(t, "DELETE", s.URL+"/v1/history/notes/xyz", e.write, nil), http.StatusUnprocessableEntity, "VALIDATION")

	// Idempotency-Key on DELETE replays the first answer.
	expect(t, put(e.write, shared, "to delete"), http.StatusOK, "")
	token := "hi-delete-note-0001"
	del := func(txid, tok string) response {
		return do(t, "DELETE", s.URL+"/v1/history/notes/"+txid, e.write, nil, "Idempotency-Key", tok)
	}
	first := del(shared, token)
	expect(t, first, http.StatusOK, "")
	replay := del(shared, token)
	expect(t, replay, http.StatusOK, "")
	if string(replay.Body) != string(first.Body) {
		t.Fatalf("replay answered %s, first %s", replay.Body, first.Body)
	}
	hiHasNote(t, "after replay", s, "/owner/v1", e.acct.OwnerSecret, shared, "")
	expect(t, del(recent.TxID, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
	hiHasNote(t, "after conflicting token", s, "/v1", e.write, recent.TxID, fifty)
	apExpect(t, "short token", del(recent.TxID, "short"), http.StatusUnprocessableEntity, "VALIDATION")
	hiHasNote(t, "after short token", s, "/v1", e.write, recent.TxID, fifty)
	// Without the header a retry is a new request.
	expect(t, put(e.write, shared, "again"), http.StatusOK, "")
	expect(t, del(shared, "hi-delete-note-0002"), http.StatusOK, "")
	expect(t, do(t, "DELETE", s.URL+"/v1/history/notes/"+shared, e.write, nil), http.StatusNotFound, "NOT_FOUND")

	// Owner counterparts.
	expect(t, hiPutNote(t, s, "/owner/v1", e.acct.OwnerSecret, recent.TxID, "owner edit"), http.StatusOK, "")
	hiHasNote(t, "owner edit", s, "/v1", e.read, recent.TxID, "owner edit")
	expect(t, hiPutNote(t, s, "/owner/v1", e.acct.OwnerSecret, oldTx.TxID, "owner old"), http.StatusForbidden, "FORBIDDEN")
	expect(t, hiPutNote(t, s, "/owner/v1", e.acct.OwnerSecret, unknown, "x"), http.StatusNotFound, "NOT_FOUND")
	apExpect(t, "key on owner note path", hiPutNote(t, s, "/owner/v1", e.write, recent.TxID, "x"), http.StatusUnauthorized, "UNAUTHORIZED")
	apExpect(t, "no key", hiPutNote(t, s, "/v1", "", recent.TxID, "x"), http.StatusUnauthorized, "UNAUTHORIZED")

	// Batch bounds.
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprintf("%064x", i)
	}
	batch := func(body any) response {
		return do(t, "POST", s.URL+"/v1/history/notes/batch", e.read, body)
	}
	apExpect(t, "101 txids", batch(map[string]any{"txids": ids}), http.StatusUnprocessableEntity, "VALIDATION")
	ids[99] = recent.TxID
	if got := hiNotes(t, s, "/v1", e.read, ids[:100]...); len(got) != 1 || got[recent.TxID] != "owner edit" {
		t.Fatalf("100-txid batch answered %v", got)
	}
	for name, body := range map[string]any{
		"malformed txid": map[string]any{"txids": []string{recent.TxID, "xyz"}},
		"short txid":     map[string]any{"txids": []string{recent.TxID[:63]}},
		"null txid":      `{"txids":[null]}`,
		"number txid":    `{"txids":[5]}`,
		"missing txids":  map[string]any{},
		"null txids":     `{"txids":null}`,
		"extra field":    map[string]any{"txids": []string{}, "x": 1},
		"not an object":  `["` + recent.TxID + `"]`,
	} {
		apExpect(t, name, batch(body), http.StatusUnprocessableEntity, "VALIDATION")
	}
	if got := hiNotes(t, s, "/v1", e.read); len(got) != 0 {
		t.Fatalf("empty batch answered %v", got)
	}
	if got := hiNotes(t, s, "/v1", e.read, strings.ToUpper(recent.TxID)); got[recent.TxID] != "owner edit" {
		t.Fatalf("upper-case batch txid answered %v", got)
	}

	// Extended plan: any transaction of a writable card.
	e.setPlan(t, "extended")
	expect(t, put(e.write, oldTx.TxID, "old is fine"), http.StatusOK, "")
	hiHasNote(t, "extended old note", s, "/v1", e.read, oldTx.TxID, "old is fine")
	oldest := gen.txs[len(gen.txs)-1].TxID
	expect(t, put(e.write, oldest, "the first"), http.StatusOK, "")
	hiHasNote(t, "extended oldest note", s, "/v1", e.read, oldest, "the first")
}

func TestHistoryUpstreamOutage(t *testing.T) {
	t.Parallel()
	s, sim := hiSimUpstream(t)
	busy := hiBusy(t)
	e := hiSetup(t, s, "base")
	card := e.card(t, busy.addr, "busy")
	window := busy.ids(busy.recent())

	degraded := func(t *testing.T, what string, offset int) {
		t.Helper()
		r := do(t, "GET", hiTxURL(s, "/v1", card, fmt.Sprintf("offset=%d", offset)), e.write, nil)
		p := hiDecodePage(t, r)
		if !p.HistoryDegraded || p.Complete || p.HistoryExport.Complete || len(p.Transactions) != 0 {
			t.Fatalf("%s: not reported degraded: %s", what, r.Body)
		}
		if p.HasMore && (p.NextOffset == nil || *p.NextOffset != offset) {
			t.Fatalf("%s: degraded page skips ahead: %s", what, r.Body)
		}
		if p.NextOffset != nil && *p.NextOffset != offset {
			t.Fatalf("%s: degraded page points at %d, want the same page %d", what, *p.NextOffset, offset)
		}
		if p.TotalCount != nil && *p.TotalCount == 0 {
			t.Fatalf("%s: degraded page reports total_count 0", what)
		}
	}

	// First page fine.
	p := hiGetPage(t, s, e.write, "/v1", card, "")
	if !slices.Equal(hiTxIDs(p.Transactions), window[:25]) || !p.HasMore || *p.NextOffset != 25 || !p.Complete {
		t.Fatalf("first page before the outage: %+v", p)
	}
	// The upstream fails (500 on every request): the next page is
	// degraded, never an empty complete page.
	sim.SetFault(chain.SimFault{Status: http.StatusInternalServerError})
	degraded(t, "500", 25)
	// A note write cannot be verified: 503, nothing written.
	unseen := busy.txs[len(window)-1].TxID // a window transaction the server has not listed
	r := hiPutNote(t, s, "/v1", e.write, unseen, "during outage")
	expect(t, r, http.StatusServiceUnavailable, "HTTP_ERROR")
	// The combined view says it is degraded too.
	r = do(t, "GET", s.URL+"/v1/history?force_refresh=true", e.write, nil)
	expect(t, r, http.StatusOK, "")
	var cv struct {
		Cards []struct {
			HistoryDegraded bool   `json:"history_degraded"`
			TotalCount      *int64 `json:"total_count"`
		} `json:"cards"`
		Transactions    []hiTx `json:"transactions"`
		HistoryDegraded bool   `json:"history_degraded"`
		Complete        bool   `json:"complete"`
	}
	if err := json.Unmarshal(r.Body, &cv); err != nil || !cv.HistoryDegraded || cv.Complete || len(cv.Cards) != 1 || !cv.Cards[0].HistoryDegraded || strings.Contains(string(r.Body), `"code"`) {
		t.Fatalf("combined view during the outage: %s", r.Body)
	}
	// The batch read needs no upstream: saved notes stay readable.
	hiHasNote(t, "no note written in the outage", s, "/v1", e.write, unseen, "")

	// Persistent 429 with a Retry-After longer than the client waits, and
	// malformed answers: degraded as well.
	sim.SetFault(chain.SimFault{Status: http.StatusTooManyRequests, RetryAfter: time.Minute})
	degraded(t, "429", 25)
	expect(t, hiPutNote(t, s, "/v1", e.write, unseen, "during 429"), http.StatusServiceUnavailable, "HTTP_ERROR")
	sim.SetFault(chain.SimFault{Malformed: true})
	degraded(t, "malformed", 25)

	// Recovery: the outage cooled the card's address down (one account
	// cannot open the client's circuit breaker), which lets a call through
	// again within chain.DefaultBreakerOpen; from then the
	// same page answers, and paging goes on to the end of the window
	// without gaps or repeats.
	sim.SetFault(chain.SimFault{})
	for deadline := time.Now().Add(2 * chain.DefaultBreakerOpen); ; time.Sleep(100 * time.Millisecond) {
		if p := hiGetPage(t, s, e.write, "/v1", card, "offset=25"); !p.HistoryDegraded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still degraded %s after the upstream recovered", 2*chain.DefaultBreakerOpen)
		}
	}
	hiHasNote(t, "after the outage", s, "/v1", e.write, unseen, "")
	all, last := hiPageAll(t, s, e.write, "/v1", card, 25)
	if !slices.Equal(hiTxIDs(all), window) || !last.Complete || last.HistoryDegraded {
		t.Fatalf("after recovery paging returned %d transactions, want the %d of the window", len(all), len(window))
	}
	expect(t, hiPutNote(t, s, "/v1", e.write, unseen, "after the outage"), http.StatusOK, "")
	hiHasNote(t, "written after the outage", s, "/v1", e.write, unseen, "after the outage")

	// A single 429 is retried by the client: the answer is complete.
	e.setPlan(t, "extended")
	// (The offset is two chain pages past anything fetched so far, so the
	// page needs the upstream.)
	at := min(len(window)+60, len(busy.txs)-10)
	before := sim.Requests()
	sim.SetFault(chain.SimFault{Status: http.StatusTooManyRequests, RetryAfter: time.Second, Times: 1})
	deep := hiGetPage(t, s, e.write, "/v1", card, fmt.Sprintf("offset=%d&limit=10", at))
	if deep.HistoryDegraded || !deep.Complete || !slices.Equal(hiTxIDs(deep.Transactions), busy.ids(busy.txs[at:at+10])) {
		t.Fatalf("page after one 429: %+v", deep)
	}
	if n := sim.Requests() - before; n < 2 {
		t.Fatalf("the page took %d upstream requests; the 429 was not met", n)
	}
	// An outage on the extended plan mid-paging: degraded, then recovered.
	sim.SetFault(chain.SimFault{Status: http.StatusServiceUnavailable})
	far := len(busy.txs) - 3
	r = do(t, "GET", hiTxURL(s, "/v1", card, fmt.Sprintf("offset=%d", far)), e.write, nil)
	if p := hiDecodePage(t, r); !p.HistoryDegraded || p.Complete || len(p.Transactions) != 0 {
		t.Fatalf("extended page during the outage: %s", r.Body)
	}
	// A note on an old transaction (extended: no eligibility check) still
	// needs the upstream to verify it.
	expect(t, hiPutNote(t, s, "/v1", e.write, busy.txs[far].TxID, "old"), http.StatusServiceUnavailable, "HTTP_ERROR")
	sim.SetFault(chain.SimFault{})
	p = hiGetPage(t, s, e.write, "/v1", card, fmt.Sprintf("offset=%d", far))
	if !slices.Equal(hiTxIDs(p.Transactions), busy.ids(busy.txs[far:])) || p.HasMore || !p.Complete {
		t.Fatalf("extended last page after recovery: %+v", p)
	}
	hiHasNote(t, "old note refused in the outage", s, "/v1", e.write, busy.txs[far].TxID, "")
}

func TestHistorySlowUpstream(t *testing.T) {
	t.Parallel()
	s, sim := hiSimUpstream(t)
	busy := hiBusy(t)
	e := hiSetup(t, s, "extended")
	card := e.card(t, busy.addr, "busy")

	// The upstream holds every answer back longer than the client waits:
	// the page is degraded and the note write is 503, both within the
	// server's upstream deadline. The two run at once.
	sim.SetFault(chain.SimFault{Delay: time.Minute})
	var wg sync.WaitGroup
	var page, note response
	var pageErr, noteErr error
	start := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		page, pageErr = apRaw("GET", hiTxURL(s, "/v1", card, ""), e.write, nil, "")
	}()
	go func() {
		defer wg.Done()
		note, noteErr = apRaw("PUT", s.URL+"/v1/history/notes/"+busy.txs[0].TxID, e.write, []byte(`{"note":"slow"}`), "application/json")
	}()
	wg.Wait()
	if pageErr != nil || noteErr != nil {
		t.Fatalf("requests failed: %v, %v", pageErr, noteErr)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("slow upstream answers took %s", took)
	}
	if p := hiDecodePage(t, page); !p.HistoryDegraded || p.Complete || len(p.Transactions) != 0 {
		t.Fatalf("page with a slow upstream: %s", page.Body)
	}
	expect(t, note, http.StatusServiceUnavailable, "HTTP_ERROR")
	sim.SetFault(chain.SimFault{})
	hiHasNote(t, "no note after the slow upstream", s, "/v1", e.write, busy.txs[0].TxID, "")
	// The address's timeouts cooled it down (chain/breaker.go): it is
	// asked again within chain.DefaultBreakerOpen.
	p := hiGetPage(t, s, e.write, "/v1", card, "")
	for deadline := time.Now().Add(2 * chain.DefaultBreakerOpen); p.HistoryDegraded && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		p = hiGetPage(t, s, e.write, "/v1", card, "")
	}
	if p.HistoryDegraded || !p.Complete || !slices.Equal(hiTxIDs(p.Transactions), busy.ids(busy.txs[:25])) {
		t.Fatalf("page after the slow upstream recovered: %+v", p)
	}
}

// TestHistoryOffsetCeilingKeepsTotalCount: an offset at the 10,000 ceiling
// on a card with a short history answers like any offset past its end:
// total_count is still the lifetime count (History rule 6), and the
// ceiling is not "reached" by a history that stops long before it.
func TestHistoryOffsetCeilingKeepsTotalCount(t *testing.T) {
	t.Parallel()
	s := hiStart(t)
	ref := hiReference(t, hiDormant1)
	e := hiSetup(t, s, "extended")
	card := e.card(t, ref.addr, "short history")
	past := hiGetPage(t, s, e.write, "/v1", card, "offset=9999")
	if past.TotalCount == nil || *past.TotalCount != ref.stats.TxCount() || !past.Complete || past.HistoryExport.OffsetCeilingReached {
		t.Fatalf("offset 9999: total_count %v complete %v ceiling %v", past.TotalCount, past.Complete, past.HistoryExport.OffsetCeilingReached)
	}
	p := hiGetPage(t, s, e.write, "/v1", card, "offset=10000")
	if len(p.Transactions) != 0 || p.HasMore {
		t.Fatalf("offset 10000: %+v", p)
	}
	if p.TotalCount == nil || *p.TotalCount != ref.stats.TxCount() {
		t.Errorf("offset 10000: total_count %v, want the lifetime count %d (offset 9999 reports it)", hiInt(p.TotalCount), ref.stats.TxCount())
	}
	if p.HistoryExport.OffsetCeilingReached || !p.Complete {
		t.Errorf("offset 10000 on a history of %d transactions: offset_ceiling_reached %v, complete %v; want false, true as at offset 9999",
			ref.stats.TxCount(), p.HistoryExport.OffsetCeilingReached, p.Complete)
	}
}

func hiInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestHistoryNoteShapeErrorsBeforeUpstream: a note body that can never be
// saved (51 code points, empty) is a request-shape error, 422, whatever
// the transaction and whatever the upstream's state; a 503 would tell the
// client to retry a request that cannot succeed.
func TestHistoryNoteShapeErrorsBeforeUpstream(t *testing.T) {
	t.Parallel()
	s, sim := hiSimUpstream(t)
	ref := hiReference(t, hiDormant1)
	e := hiSetup(t, s, "extended")
	e.card(t, ref.addr, "d")
	tooLong := strings.Repeat("é", 51)
	apExpect(t, "51 code points, known transaction", hiPutNote(t, s, "/v1", e.write, ref.txs[40].TxID, tooLong), http.StatusUnprocessableEntity, "VALIDATION")
	apExpect(t, "51 code points, unknown transaction", hiPutNote(t, s, "/v1", e.write, strings.Repeat("ab", 32), tooLong), http.StatusUnprocessableEntity, "VALIDATION")
	sim.SetFault(chain.SimFault{Status: http.StatusInternalServerError})
	apExpect(t, "empty note, upstream down", hiPutNote(t, s, "/v1", e.write, ref.txs[41].TxID, ""), http.StatusUnprocessableEntity, "VALIDATION")
	apExpect(t, "51 code points, upstream down", hiPutNote(t, s, "/v1", e.write, ref.txs[42].TxID, tooLong), http.StatusUnprocessableEntity, "VALIDATION")
	sim.SetFault(chain.SimFault{})
	hiHasNote(t, "nothing written", s, "/owner/v1", e.acct.OwnerSecret, ref.txs[41].TxID, "")
}
