package balances

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// pages is a Pager of made-up listings: per address, its counters, its
// mempool count and its listing (mempool first, then newest first).
type pages struct {
	mu    sync.Mutex
	addrs map[string]chain.HistoryPage
	fail  map[string]error
	asked []string // "address offset limit", in order
}

func (p *pages) Page(_ context.Context, addr string, offset, limit int, _ bool) (chain.HistoryPage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, fmt.Sprintf("%s %d %d", addr, offset, limit))
	if err := p.fail[addr]; err != nil {
		return chain.HistoryPage{}, err
	}
	all := p.addrs[addr]
	page := all
	page.Offset, page.Txs = offset, all.Txs[min(offset, len(all.Txs)):min(offset+limit, len(all.Txs))]
	return page, nil
}

var (
	t1 = time.Date(2026, 4, 2, 10, 30, 0, 0, time.UTC)
	t0 = t1.Add(-48 * time.Hour)
)

func listing(mempool int, confirmed ...time.Time) chain.HistoryPage {
	p := chain.HistoryPage{MempoolCount: mempool}
	for i := range mempool {
		p.Txs = append(p.Txs, chain.Tx{TxID: fmt.Sprint("m", i)})
	}
	for i, at := range confirmed {
		p.Txs = append(p.Txs, chain.Tx{TxID: fmt.Sprint("c", i), Confirmed: true, BlockTime: at, BlockHeight: int64(900_000 - i)})
	}
	p.Stats = chain.AddressStats{Chain: chain.TxoStats{TxCount: int64(len(confirmed)), FundedTxoSum: 90_000, SpentTxoSum: 15_000},
		Mempool: chain.TxoStats{TxCount: int64(mempool), FundedTxoSum: 2_000 * int64(mempool)}}
	return p
}

func TestFromHistoryTakesTheNewestConfirmedTransactionsTime(t *testing.T) {
	p := &pages{addrs: map[string]chain.HistoryPage{
		"quiet":   listing(0, t1, t0),
		"pending": listing(2, t1, t0), // two unconfirmed on top of the listing
		"mempool": listing(1),         // never confirmed
		"empty":   {},
	}}
	src := FromHistory(p)
	for addr, want := range map[string]chain.Balance{
		"quiet":   {ConfirmedSat: 75_000, ReceivedSat: 90_000, SentSat: 15_000, TxCount: 2, LastTxAt: t1},
		"pending": {ConfirmedSat: 75_000, UnconfirmedSat: 4_000, ReceivedSat: 94_000, SentSat: 15_000, TxCount: 4, UnconfirmedTxCount: 2, LastTxAt: t1},
		"mempool": {ConfirmedSat: 75_000, UnconfirmedSat: 2_000, ReceivedSat: 92_000, SentSat: 15_000, TxCount: 1, UnconfirmedTxCount: 1},
		"empty":   {},
	} {
		got, err := src.Balance(context.Background(), addr)
		if err != nil || got != want {
			t.Errorf("%s: %+v (%v), want %+v", addr, got, err, want)
		}
	}
	// The newest confirmed transaction of "pending" is read right after
	// its two unconfirmed ones, not at the top of the listing.
	if !strings.Contains(strings.Join(p.asked, ","), "pending 2 1") {
		t.Fatalf("pages asked: %v", p.asked)
	}
}

func TestFromHistoryFailsWithTheUpstream(t *testing.T) {
	if FromHistory(nil) != nil {
		t.Fatal("a Source over no History")
	}
	down := fmt.Errorf("explorer: %w", chain.ErrUpstream)
	p := &pages{addrs: map[string]chain.HistoryPage{"a": listing(0, t1)}, fail: map[string]error{"a": down}}
	if _, err := FromHistory(p).Balance(context.Background(), "a"); !errors.Is(err, chain.ErrUpstream) {
		t.Fatalf("balance of a failing address: %v", err)
	}
	// Counters no address can have: unknown, not a wrong figure.
	bad := listing(0, t1)
	bad.Stats.Chain.SpentTxoSum = bad.Stats.Chain.FundedTxoSum + 1
	p = &pages{addrs: map[string]chain.HistoryPage{"a": bad}}
	if _, err := FromHistory(p).Balance(context.Background(), "a"); !errors.Is(err, chain.ErrBalanceOutOfRange) {
		t.Fatalf("balance of impossible counters: %v", err)
	}
}

// source is a Source of fixed answers that counts the calls in flight.
type source struct {
	answers  map[string]chain.Balance
	inFlight atomic.Int32
	most     atomic.Int32
}

func (s *source) Balance(ctx context.Context, addr string) (chain.Balance, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(time.Millisecond) // let the others pile up
	b, known := s.answers[addr]
	if !known {
		return chain.Balance{}, fmt.Errorf("no answer for %s: %w", addr, chain.ErrUpstream)
	}
	return b, ctx.Err()
}

func TestReadKeepsOneFailureToItsCard(t *testing.T) {
	src := &source{answers: map[string]chain.Balance{}}
	var addresses []string
	for i := range 40 {
		a := fmt.Sprint("addr", i)
		addresses = append(addresses, a)
		if i != 7 {
			src.answers[a] = chain.Balance{ConfirmedSat: int64(i), ReceivedSat: int64(i), TxCount: 1}
		}
	}
	results := Read(context.Background(), src, "acct", addresses)
	for i, r := range results {
		switch {
		case i == 7 && r.Err == nil:
			t.Fatalf("the failing address has a balance: %+v", r)
		case i != 7 && (r.Err != nil || r.Balance.ConfirmedSat != int64(i)):
			t.Fatalf("address %d: %+v", i, r)
		}
	}
	if most := src.most.Load(); most > readersMax || most < 2 {
		t.Fatalf("%d balances asked at once, want 2 to %d", most, readersMax)
	}
	for _, r := range Read(context.Background(), nil, "acct", addresses[:3]) {
		if r.Err == nil {
			t.Fatalf("a balance without a source: %+v", r)
		}
	}
	if got := Read(context.Background(), src, "acct", nil); len(got) != 0 {
		t.Fatalf("no addresses: %v", got)
	}
}

func TestSummarizeLeavesAnUnknownBalanceOutOfTheTotal(t *testing.T) {
	results := []Result{
		{Balance: chain.Balance{ConfirmedSat: 1_500_000, UnconfirmedSat: -500, ReceivedSat: 2_000_000, SentSat: 500_500, TxCount: 4, UnconfirmedTxCount: 1, LastTxAt: t0}},
		{Err: chain.ErrUpstream},
		{Balance: chain.Balance{ConfirmedSat: 10, ReceivedSat: 10, TxCount: 1, LastTxAt: t1}},
	}
	each, total := Summarize(results)
	body, err := json.Marshal(map[string]any{"each": each, "total": total})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"each":[` +
		`{"confirmed_sat":1500000,"unconfirmed_sat":-500,"received_sat":2000000,"sent_sat":500500,"tx_count":4,"unconfirmed_tx_count":1,"last_tx_at":"2026-03-31T10:30:00Z","degraded":false},` +
		`{"confirmed_sat":null,"unconfirmed_sat":null,"received_sat":null,"sent_sat":null,"tx_count":null,"unconfirmed_tx_count":null,"last_tx_at":null,"degraded":true},` +
		`{"confirmed_sat":10,"unconfirmed_sat":0,"received_sat":10,"sent_sat":0,"tx_count":1,"unconfirmed_tx_count":0,"last_tx_at":"2026-04-02T10:30:00Z","degraded":false}],` +
		`"total":{"confirmed_sat":1500010,"unconfirmed_sat":-500,"received_sat":2000010,"sent_sat":500500,"tx_count":5,"unconfirmed_tx_count":1,"last_tx_at":"2026-04-02T10:30:00Z","card_count":2,"complete":false}}`
	if string(body) != want {
		t.Fatalf("summary\n got %s\nwant %s", body, want)
	}

	// A balance outside the bounds (made by some other source) is unknown
	// too, not summed.
	each, total = Summarize([]Result{{Balance: chain.Balance{ConfirmedSat: chain.SupplySatMax + 1, ReceivedSat: chain.SupplySatMax + 1}}})
	if !each[0].Degraded || each[0].ConfirmedSat != nil || total.Complete || total.CardCount != 0 || total.ConfirmedSat != 0 {
		t.Fatalf("an impossible balance: %+v, total %+v", each[0], total)
	}
	// Nothing to sum is a complete total of nothing.
	if _, total := Summarize(nil); !total.Complete || total.CardCount != 0 || total.LastTxAt != nil {
		t.Fatalf("empty total %+v", total)
	}
}

// recordedIn is a Recorded of fixed records, by account and address.
type recordedIn map[[2]string]chain.AddressStats

func (r recordedIn) Recorded(_ context.Context, account, address string) (chain.AddressStats, time.Time, bool, error) {
	s, found := r[[2]string{account, address}]
	return s, t1, found, nil
}

// A balance comes from what the follower recorded in the account that
// reads it; an address it has not observed yet from the fallback, until
// it has; without a fallback, it is unknown.
func TestObservedBalancesComeFromTheAccountsRecord(t *testing.T) {
	rec := recordedIn{{"acct", "seen"}: {Chain: chain.TxoStats{TxCount: 2, FundedTxoSum: 9_000, SpentTxoSum: 1_000}}}
	fallback := FromHistory(&pages{addrs: map[string]chain.HistoryPage{"new": listing(0, t0), "seen": listing(0, t0)}})
	got := Read(context.Background(), Observed(rec, fallback), "acct", []string{"seen", "new"})
	if got[0].Err != nil || got[0].Balance != (chain.Balance{ConfirmedSat: 8_000, ReceivedSat: 9_000, SentSat: 1_000, TxCount: 2, LastTxAt: t1}) {
		t.Errorf("the observed address: %+v", got[0])
	}
	if got[1].Err != nil || got[1].Balance.ConfirmedSat != 75_000 {
		t.Errorf("the address not observed yet, from the fallback: %+v", got[1])
	}
	other := Read(context.Background(), Observed(rec, nil), "other-acct", []string{"seen"})
	if other[0].Err == nil {
		t.Errorf("another account's record was read: %+v", other[0])
	}
}
