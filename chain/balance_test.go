package chain

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"
)

func TestBalanceOfSplitsConfirmedAndUnconfirmed(t *testing.T) {
	last := time.Date(2026, 3, 14, 15, 9, 26, 0, time.FixedZone("CET", 3600))
	stats := AddressStats{
		Chain:   TxoStats{TxCount: 5, FundedTxoSum: 300_000, SpentTxoSum: 100_000},
		Mempool: TxoStats{TxCount: 2, FundedTxoSum: 50_000, SpentTxoSum: 20_000},
	}
	b, err := BalanceOf(stats, last)
	if err != nil {
		t.Fatal(err)
	}
	want := Balance{ConfirmedSat: 200_000, UnconfirmedSat: 30_000, ReceivedSat: 350_000, SentSat: 120_000,
		TxCount: 7, UnconfirmedTxCount: 2, LastTxAt: last.UTC()}
	if b != want {
		t.Fatalf("balance %+v, want %+v", b, want)
	}
	if b.LastTxAt.Location() != time.UTC {
		t.Fatalf("last transaction time in %v, want UTC", b.LastTxAt.Location())
	}
	if b.ConfirmedSat+b.UnconfirmedSat != stats.Balance() {
		t.Fatalf("confirmed plus unconfirmed %d, the stats' balance %d", b.ConfirmedSat+b.UnconfirmedSat, stats.Balance())
	}
}

func TestBalanceOfAMempoolSpend(t *testing.T) {
	// An unconfirmed transaction spending confirmed coins: the
	// unconfirmed part is negative, the total what is left.
	b, err := BalanceOf(AddressStats{Chain: TxoStats{TxCount: 1, FundedTxoSum: 1_000_000}, Mempool: TxoStats{TxCount: 1, SpentTxoSum: 400_000}}, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if b.ConfirmedSat != 1_000_000 || b.UnconfirmedSat != -400_000 || b.ReceivedSat != 1_000_000 || b.SentSat != 400_000 || b.UnconfirmedTxCount != 1 {
		t.Fatalf("balance %+v", b)
	}
}

func TestBalanceOfHasNoTimeWithoutAConfirmedTransaction(t *testing.T) {
	for name, stats := range map[string]AddressStats{
		"nothing":      {},
		"mempool only": {Mempool: TxoStats{TxCount: 1, FundedTxoSum: 5_000}},
	} {
		b, err := BalanceOf(stats, time.Unix(1_700_000_000, 0))
		if err != nil || !b.LastTxAt.IsZero() {
			t.Fatalf("%s: last transaction at %v (%v), want none", name, b.LastTxAt, err)
		}
	}
	b, err := BalanceOf(AddressStats{Chain: TxoStats{TxCount: 1, FundedTxoSum: 5_000}}, time.Time{})
	if err != nil || !b.LastTxAt.IsZero() {
		t.Fatalf("no time given: %v (%v)", b.LastTxAt, err)
	}
}

func TestBalanceOfRefusesImpossibleCounters(t *testing.T) {
	for name, stats := range map[string]AddressStats{
		// Without the bound, 2^63-1 minus a negative wraps around.
		"huge funded":          {Chain: TxoStats{TxCount: 1, FundedTxoSum: math.MaxInt64, SpentTxoSum: 0}},
		"huge spent":           {Chain: TxoStats{TxCount: 1, FundedTxoSum: 0, SpentTxoSum: math.MaxInt64}},
		"negative counter":     {Chain: TxoStats{TxCount: 1, FundedTxoSum: -1}},
		"negative count":       {Mempool: TxoStats{TxCount: -1}},
		"more than the supply": {Chain: TxoStats{TxCount: 1, FundedTxoSum: SupplySatMax + 1}},
		"spent more than paid": {Chain: TxoStats{TxCount: 2, FundedTxoSum: 10, SpentTxoSum: 11}},
		"mempool overspends":   {Chain: TxoStats{TxCount: 1, FundedTxoSum: 10}, Mempool: TxoStats{TxCount: 1, SpentTxoSum: 11}},
		"lifetime past 2^53": {Chain: TxoStats{TxCount: 1, FundedTxoSum: LifetimeSatMax, SpentTxoSum: LifetimeSatMax - 1},
			Mempool: TxoStats{TxCount: 1, FundedTxoSum: 1}},
	} {
		if b, err := BalanceOf(stats, time.Time{}); !errors.Is(err, ErrBalanceOutOfRange) {
			t.Errorf("%s: %+v, %v; want ErrBalanceOutOfRange", name, b, err)
		}
	}
	// The largest possible balance is fine.
	if _, err := BalanceOf(AddressStats{Chain: TxoStats{TxCount: 1, FundedTxoSum: SupplySatMax}}, time.Time{}); err != nil {
		t.Fatalf("21 million BTC: %v", err)
	}
}

func TestBalanceSumAddsEveryFigureAndKeepsTheLatestTime(t *testing.T) {
	early, late := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var s BalanceSum
	for _, b := range []Balance{
		{ConfirmedSat: 7, UnconfirmedSat: 5, ReceivedSat: 12, SentSat: 0, TxCount: 2, UnconfirmedTxCount: 1, LastTxAt: early},
		{ConfirmedSat: 100, UnconfirmedSat: -40, ReceivedSat: 160, SentSat: 100, TxCount: 3, UnconfirmedTxCount: 1, LastTxAt: late},
		{}, // an address that never saw a transaction
	} {
		if !s.Add(b) {
			t.Fatalf("Add(%+v) refused", b)
		}
	}
	want := BalanceSum{Balance: Balance{ConfirmedSat: 107, UnconfirmedSat: -35, ReceivedSat: 172, SentSat: 100, TxCount: 5, UnconfirmedTxCount: 2, LastTxAt: late}, Cards: 3}
	if s != want {
		t.Fatalf("sum %+v, want %+v", s, want)
	}
}

func TestBalanceSumCannotOverflow(t *testing.T) {
	// The most every figure can be, BalanceSumCardsMax times: the exact
	// sum, with nothing wrapped.
	most := Balance{ConfirmedSat: SupplySatMax, ReceivedSat: LifetimeSatMax, SentSat: LifetimeSatMax - SupplySatMax, TxCount: LifetimeSatMax, UnconfirmedTxCount: LifetimeSatMax}
	if err := most.check(); err != nil {
		t.Fatalf("the largest balance is refused: %v", err)
	}
	var s BalanceSum
	for range BalanceSumCardsMax {
		if !s.Add(most) {
			t.Fatalf("Add refused at %d", s.Cards)
		}
	}
	exact := new(big.Int).Mul(big.NewInt(LifetimeSatMax), big.NewInt(BalanceSumCardsMax))
	if !exact.IsInt64() || s.ReceivedSat != exact.Int64() || s.TxCount != exact.Int64() || s.ConfirmedSat != SupplySatMax*BalanceSumCardsMax {
		t.Fatalf("sum %+v, want %v received", s, exact)
	}
	if s.Add(Balance{}) || s.Cards != BalanceSumCardsMax {
		t.Fatalf("a balance past BalanceSumCardsMax was added: %d", s.Cards)
	}

	// A balance made by hand outside the bounds is refused too.
	var t2 BalanceSum
	for _, b := range []Balance{
		{ReceivedSat: math.MaxInt64, SentSat: math.MaxInt64},
		{ConfirmedSat: SupplySatMax + 1, ReceivedSat: SupplySatMax + 1},
		{UnconfirmedSat: -1, SentSat: 1},
		{ConfirmedSat: 5, ReceivedSat: 9}, // received less sent is not the balance
		{TxCount: 1, UnconfirmedTxCount: 2},
	} {
		if t2.Add(b) {
			t.Errorf("Add(%+v) took an impossible balance", b)
		}
	}
	if t2 != (BalanceSum{}) {
		t.Fatalf("a refused balance changed the sum: %+v", t2)
	}
}
