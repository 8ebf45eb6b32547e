package chain

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// simNow is the present of most sim tests.
var simNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// simFixtures are real mainnet addresses of every kind (the same ones the
// actors tests use), hubs and non-hubs, active and dormant.
var simFixtures = []string{
	"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
	"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
	"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
	"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
	"3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6",
	"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	"1Q1pE5vPGEEMqRcVRMbtBK842Y6Pzo6nK9",
	"1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX",
	"12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG",
	"3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC",
	"bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3",
	"bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr",
}

// simDormantFixtures are the fixtures HISTORY.md names as dormant.
var simDormantFixtures = []string{
	"3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6",
	"bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3",
	"3LDsS579y7sruadqu11beEJoTjdFiFCdX4",
}

func simClient(t *testing.T, now time.Time) (*Client, *Sim) {
	t.Helper()
	s := NewSim(fixedClock(now))
	return NewHandlerClient(s, ClientOptions{}), s
}

// walkChain fetches an address's whole confirmed history through c.
func walkChain(t *testing.T, c *Client, addr string) []Tx {
	t.Helper()
	var all []Tx
	last := ""
	for range 1000 {
		page, err := c.ChainTxs(context.Background(), addr, last)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		all = append(all, page...)
		if len(page) < ChainPageSize {
			return all
		}
		last = page[len(page)-1].TxID
	}
	t.Fatalf("%s: the history does not end", addr)
	return nil
}

func simGet(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestSimIsDeterministic(t *testing.T) {
	a, b := NewSimHandler(fixedClock(simNow)), NewSimHandler(fixedClock(simNow))
	for _, addr := range simFixtures {
		c := NewHandlerClient(a, ClientOptions{})
		txs := walkChain(t, c, addr)
		paths := []string{
			"/address/" + addr,
			"/address/" + addr + "/txs/chain",
			"/address/" + addr + "/txs/chain/" + txs[len(txs)/2].TxID,
			"/address/" + addr + "/txs/mempool",
			"/tx/" + txs[0].TxID,
			"/tx/" + txs[len(txs)-1].TxID,
		}
		for _, p := range paths {
			codeA, bodyA := simGet(t, a, p)
			codeB, bodyB := simGet(t, b, p)
			if codeA != 200 || codeA != codeB || bodyA != bodyB {
				t.Fatalf("GET %s differs between two sims: %d %q vs %d %q", p, codeA, bodyA, codeB, bodyB)
			}
		}
	}
}

func TestSimHistoriesSpanYears(t *testing.T) {
	c, _ := simClient(t, simNow)
	yearAgo := simNow.AddDate(-1, 0, 0)
	for _, addr := range append(slices.Clone(simFixtures), simDormantFixtures...) {
		info, err := SimInfo(addr)
		if err != nil {
			t.Fatal(err)
		}
		txs := walkChain(t, c, addr)
		if len(txs) < 40 || len(txs) > 450 {
			t.Fatalf("%s has %d confirmed transactions, want 40 to about 400", addr, len(txs))
		}
		newest, oldest := txs[0].BlockTime, txs[len(txs)-1].BlockTime
		if newest.After(simNow) || oldest.Before(time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)) || newest.Sub(oldest) < 365*24*time.Hour {
			t.Fatalf("%s spans %s to %s", addr, oldest, newest)
		}
		for i := 1; i < len(txs); i++ {
			if txs[i].BlockHeight > txs[i-1].BlockHeight {
				t.Fatalf("%s: not newest first at %d", addr, i)
			}
		}
		recent := newest.After(yearAgo)
		if info.Dormant == recent {
			t.Fatalf("%s: dormant %v but newest transaction %s", addr, info.Dormant, newest)
		}
		if info.Dormant && (newest.After(info.LastActive) || info.MempoolTxs != 0) {
			t.Fatalf("%s: dormant until %s, newest %s, %d mempool", addr, info.LastActive, newest, info.MempoolTxs)
		}
	}
	for _, addr := range simDormantFixtures {
		if info, _ := SimInfo(addr); !info.Dormant {
			t.Fatalf("%s is documented as dormant in HISTORY.md", addr)
		}
	}
	for _, addr := range SimHubAddresses() {
		if info, _ := SimInfo(addr); info.Dormant || !info.Hub {
			t.Fatalf("hub %s: %+v", addr, info)
		}
	}
}

func TestSimStatsMatchListings(t *testing.T) {
	c, _ := simClient(t, simNow)
	ctx := context.Background()
	for _, addr := range simFixtures {
		st, err := c.AddressStats(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		txs := walkChain(t, c, addr)
		mem, err := c.MempoolTxs(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if st.Chain.TxCount != int64(len(txs)) || st.Mempool.TxCount != int64(len(mem)) {
			t.Fatalf("%s: stats count %d+%d, listings %d+%d", addr, st.Chain.TxCount, st.Mempool.TxCount, len(txs), len(mem))
		}
		var net int64
		for i := len(txs) - 1; i >= 0; i-- {
			net += txs[i].NetAmount(addr)
			if net < 0 {
				t.Fatalf("%s: balance below zero after %s", addr, txs[i].TxID)
			}
			if !txs[i].Involves(addr) {
				t.Fatalf("%s: listed %s does not involve it", addr, txs[i].TxID)
			}
		}
		if net != st.Chain.FundedTxoSum-st.Chain.SpentTxoSum {
			t.Fatalf("%s: net %d, stats %+v", addr, net, st.Chain)
		}
		for _, tx := range append(slices.Clone(txs), mem...) {
			var in, out int64
			for _, io := range tx.Inputs {
				in += io.Value
			}
			for _, io := range tx.Outputs {
				out += io.Value
				if _, err := ValidateBitcoinAddress(io.Address); err != nil {
					t.Fatalf("%s pays an invalid address %q", tx.TxID, io.Address)
				}
			}
			if in != out+tx.Fee {
				t.Fatalf("%s: inputs %d != outputs %d + fee %d", tx.TxID, in, out, tx.Fee)
			}
		}
	}
}

func TestSimEveryTxIDResolves(t *testing.T) {
	c, _ := simClient(t, simNow)
	ctx := context.Background()
	for _, addr := range simFixtures {
		mem, err := c.MempoolTxs(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range append(walkChain(t, c, addr), mem...) {
			got, err := c.Tx(ctx, want.TxID)
			if err != nil {
				t.Fatalf("%s: /tx/%s: %v", addr, want.TxID, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: /tx/%s differs from the listing:\n%+v\n%+v", addr, want.TxID, got, want)
			}
		}
	}
}

func TestSimTxIDsResolveInAFreshProcess(t *testing.T) {
	listed, _ := simClient(t, simNow)
	ctx := context.Background()
	for _, addr := range simFixtures {
		txs := walkChain(t, listed, addr)
		mem, _ := listed.MempoolTxs(ctx, addr)
		txs = append(txs, mem...)
		kind, _, _ := simAddressKey(addr)
		info, _ := SimInfo(addr)
		indexed := (kind == simAddrP2WSH || kind == simAddrP2TR) && !info.Hub

		fresh, _ := simClient(t, simNow)
		_, err := fresh.Tx(ctx, txs[0].TxID)
		if indexed {
			// A P2WSH/P2TR txid needs its address served once first.
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: fresh sim answered %v before serving the address", addr, err)
			}
			if _, err := fresh.AddressStats(ctx, addr); err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatalf("%s: a fresh sim cannot resolve %s: %v", addr, txs[0].TxID, err)
		}
		for _, want := range txs {
			got, err := fresh.Tx(ctx, want.TxID)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: fresh /tx/%s = %v, %v", addr, want.TxID, got, err)
			}
		}
	}
}

func TestSimSharedTransactions(t *testing.T) {
	c, _ := simClient(t, simNow)
	ctx := context.Background()
	genesis, binance := SimHubAddresses()[0], SimHubAddresses()[1]
	ids := func(addr string) map[string]Tx {
		m := map[string]Tx{}
		mem, err := c.MempoolTxs(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range append(walkChain(t, c, addr), mem...) {
			m[tx.TxID] = tx
		}
		return m
	}
	a, b := ids(genesis), ids(binance)
	shared, sharedRecent, sharedMempool := 0, 0, 0
	for id, tx := range a {
		other, ok := b[id]
		if !ok {
			continue
		}
		shared++
		if !reflect.DeepEqual(tx, other) {
			t.Fatalf("%s differs between the two listings", id)
		}
		addrs := tx.Addresses()
		if !slices.Contains(addrs, genesis) || !slices.Contains(addrs, binance) {
			t.Fatalf("shared %s involves %v", id, addrs)
		}
		if tx.NetAmount(genesis) <= 0 || tx.NetAmount(binance) <= 0 {
			t.Fatalf("shared %s pays nothing to a hub", id)
		}
		got, err := c.Tx(ctx, id)
		if err != nil || !reflect.DeepEqual(got, tx) {
			t.Fatalf("/tx/%s = %v, %v", id, got, err)
		}
		switch {
		case !tx.Confirmed:
			sharedMempool++
		case tx.BlockTime.After(simNow.AddDate(-1, 0, 0)):
			sharedRecent++
		}
	}
	// One first-half hub transaction a year since 2015 pays both, plus
	// the mempool hub transaction.
	if shared < simNow.Year()-simHubFirstYear+1 || sharedRecent == 0 || sharedMempool != 1 {
		t.Fatalf("shared %d (recent %d, mempool %d)", shared, sharedRecent, sharedMempool)
	}
	// Every hub shares something with at least one other hub.
	for _, h := range SimHubAddresses()[2:] {
		found := false
		for id := range ids(h) {
			if _, ok := a[id]; ok {
				found = true
				break
			}
			if _, ok := b[id]; ok {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("hub %s shares nothing", h)
		}
	}
}

func TestSimUnknownAndMalformed(t *testing.T) {
	h := NewSimHandler(fixedClock(simNow))
	c := NewHandlerClient(h, ClientOptions{})
	ctx := context.Background()
	txs := walkChain(t, c, simFixtures[4])
	real := txs[3].TxID

	tampered := []byte(real)
	tampered[10] = map[bool]byte{true: '0', false: '1'}[tampered[10] != '0']
	for _, id := range []string{strings.Repeat("0", 64), strings.Repeat("f", 64), string(tampered)} {
		if code, _ := simGet(t, h, "/tx/"+id); code != http.StatusNotFound {
			t.Fatalf("/tx/%s = %d, want 404", id, code)
		}
		if _, err := c.Tx(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Tx(%s) err = %v", id, err)
		}
	}
	if code, _ := simGet(t, h, "/tx/nothex"); code != http.StatusBadRequest {
		t.Fatalf("/tx/nothex = %d, want 400", code)
	}
	for _, bad := range []string{"mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "notanaddress", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb"} {
		for _, p := range []string{"/address/" + bad, "/address/" + bad + "/txs/chain", "/address/" + bad + "/txs/mempool"} {
			if code, body := simGet(t, h, p); code != http.StatusBadRequest || strings.Contains(body, "{") {
				t.Fatalf("%s = %d %q, want 400 text", p, code, body)
			}
		}
		if _, err := c.AddressStats(ctx, bad); !errors.Is(err, ErrUpstream) {
			t.Fatalf("AddressStats(%s) err = %v", bad, err)
		}
	}
	// A cursor that is not in the history gives an empty page, as electrs does.
	other := walkChain(t, c, simFixtures[0])[0].TxID
	page, err := c.ChainTxs(ctx, simFixtures[4], other)
	if err != nil || len(page) != 0 {
		t.Fatalf("foreign cursor: %d transactions, %v", len(page), err)
	}
	if code, _ := simGet(t, h, "/blocks/tip/height"); code != http.StatusNotFound {
		t.Fatalf("unknown route = %d", code)
	}
}

func TestSimHistoryGrowsWithTime(t *testing.T) {
	addr := simFixtures[0]
	before, _ := simClient(t, simNow)
	later := simNow.AddDate(0, 6, 0)
	after, _ := simClient(t, later)
	old, grown := walkChain(t, before, addr), walkChain(t, after, addr)
	if len(grown) <= len(old) {
		t.Fatalf("six months later %d transactions, before %d", len(grown), len(old))
	}
	if !reflect.DeepEqual(grown[len(grown)-len(old):], old) {
		t.Fatal("the older history changed as time went on")
	}
	// A transaction of the future is unknown in the past.
	if _, err := before.Tx(context.Background(), grown[0].TxID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("future transaction resolved early: %v", err)
	}
	for _, tx := range old[:5] {
		if _, err := after.Tx(context.Background(), tx.TxID); err != nil {
			t.Fatalf("old %s no longer resolves: %v", tx.TxID, err)
		}
	}
}

func TestSimCanonicalizesAddresses(t *testing.T) {
	c, _ := simClient(t, simNow)
	upper := strings.ToUpper(simFixtures[1])
	a, b := walkChain(t, c, upper), walkChain(t, c, simFixtures[1])
	if !reflect.DeepEqual(a, b) {
		t.Fatal("upper-case bech32 gives another history")
	}
}

func TestSimFaults(t *testing.T) {
	ctx := context.Background()
	addr := simFixtures[4]

	s := NewSim(fixedClock(simNow))
	c := NewHandlerClient(s, ClientOptions{BackoffBase: time.Millisecond, BackoffMax: 2 * time.Second})
	c.sleep = func(context.Context, time.Duration) error { return nil }

	s.SetFault(SimFault{Status: http.StatusTooManyRequests, RetryAfter: time.Second, Times: 1})
	before := s.Requests()
	if _, err := c.AddressStats(ctx, addr); err != nil {
		t.Fatalf("one 429 then success: %v", err)
	}
	if s.Requests()-before != 2 {
		t.Fatalf("requests %d, want 2", s.Requests()-before)
	}

	s.SetFault(SimFault{Status: http.StatusInternalServerError})
	var ue *UpstreamError
	if _, err := c.ChainTxs(ctx, addr, ""); !errors.As(err, &ue) || ue.Status != 500 || ue.Attempts != DefaultRetries+1 {
		t.Fatalf("persistent 500: %v", err)
	}

	s.SetFault(SimFault{Malformed: true})
	if _, err := c.MempoolTxs(ctx, addr); !errors.Is(err, ErrMalformed) {
		t.Fatalf("malformed: %v", err)
	}

	s.SetFault(SimFault{Delay: time.Minute})
	slow := NewHandlerClient(s, ClientOptions{Timeout: 30 * time.Millisecond})
	if _, err := slow.Tx(ctx, strings.Repeat("a", 64)); !errors.Is(err, ErrUpstream) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow: %v", err)
	}

	// The address failed twice in a row, so it cools down: asked again
	// at once, the client does not bother the upstream; once the cooldown
	// is over it does.
	s.SetFault(SimFault{})
	before = s.Requests()
	if _, err := c.AddressStats(ctx, addr); !errors.Is(err, ErrCoolingDown) || RetryAfter(err) <= 0 || s.Requests() != before {
		t.Fatalf("right after two failures: %v", err)
	}
	c.now = func() time.Time { return time.Now().Add(DefaultBreakerOpen) }
	if _, err := c.AddressStats(ctx, addr); err != nil {
		t.Fatalf("after clearing the fault: %v", err)
	}
}

func TestSimTxIDEncodingRoundTrips(t *testing.T) {
	for _, addr := range simFixtures {
		kind, key, ok := simAddressKey(addr)
		if !ok {
			t.Fatalf("%s has no key", addr)
		}
		for _, k := range []byte{simKindOwnConfirmed, simKindOwnMempool} {
			ref := simTxRef{kind: k, addrType: kind, number: 1999, key: key}
			id := encodeSimTxID(ref, addr)
			got, raw, ok := decodeSimTxID(id)
			if !ok || got != ref || !checkSimTxIDTag(raw, addr) || checkSimTxIDTag(raw, simFixtures[0]+"x") {
				t.Fatalf("%s: %s decodes to %+v", addr, id, got)
			}
		}
	}
}

func BenchmarkSimChainPage(b *testing.B) {
	s := NewSimHandler(fixedClock(simNow))
	req := httptest.NewRequest(http.MethodGet, "/address/"+simFixtures[0]+"/txs/chain", nil)
	for b.Loop() {
		s.ServeHTTP(httptest.NewRecorder(), req)
	}
}
