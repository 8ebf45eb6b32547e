package main

import (
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

const (
	txA    = "aa00000000000000000000000000000000000000000000000000000000000000"
	txB    = "bb00000000000000000000000000000000000000000000000000000000000000"
	blockX = "0100000000000000000000000000000000000000000000000000000000000000"
	blockY = "0200000000000000000000000000000000000000000000000000000000000000"
)

func truthOf(txid string, st regtest.TxStatus, sawConfirmed, sawMempool bool) paidTruth {
	return paidTruth{&paidTx{payment: payment{address: "addr", txid: txid}, sats: 25_000, sawConfirmed: sawConfirmed, sawMempool: sawMempool}, st}
}

func confirmedIn(block string) regtest.TxStatus { return regtest.TxStatus{Block: block, Height: 500} }

// The audit counts each way a record can disagree with btcd under its
// own name, and a record that agrees as nothing.
func TestAuditAddress(t *testing.T) {
	t.Parallel()
	agrees := recordAddress{Address: "addr", Observed: true, Confirmed: recordTotals{FundedSat: 25_000, TxCount: 1},
		Transactions: []recordTx{{TxID: txA, State: "confirmed", BlockHash: blockX, ReceivedSat: 25_000}, {TxID: txB, State: "reorged", ReceivedSat: 25_000}}}
	for _, c := range []struct {
		name string
		rec  recordAddress
		pays []paidTruth
		want auditCounts // Problems aside
	}{
		{"agrees: one confirmed, one reorged out for good", agrees,
			[]paidTruth{truthOf(txA, confirmedIn(blockX), true, false), truthOf(txB, regtest.TxStatus{}, true, false)},
			auditCounts{Payments: 2, Confirmed: 1, NotOnChain: 1}},
		{"confirmed in another block than recorded", agrees,
			[]paidTruth{truthOf(txA, confirmedIn(blockY), true, false), truthOf(txB, regtest.TxStatus{}, true, false)},
			auditCounts{Payments: 2, Confirmed: 1, NotOnChain: 1, Missed: 1}},
		{"confirmed and not recorded: missed, and the totals lack it",
			recordAddress{Address: "addr", Observed: true, Transactions: []recordTx{}},
			[]paidTruth{truthOf(txA, confirmedIn(blockX), false, false)},
			auditCounts{Payments: 1, Confirmed: 1, Missed: 1, Doubled: 1}},
		{"listed twice", recordAddress{Address: "addr", Observed: true, Confirmed: recordTotals{FundedSat: 50_000, TxCount: 2},
			Transactions: []recordTx{{TxID: txA, State: "confirmed", BlockHash: blockX, ReceivedSat: 25_000}, {TxID: txA, State: "confirmed", BlockHash: blockX, ReceivedSat: 25_000}}},
			[]paidTruth{truthOf(txA, confirmedIn(blockX), true, false)},
			auditCounts{Payments: 1, Confirmed: 1, Doubled: 2}}, // the listing and the totals
		{"totals above the recorded transactions", recordAddress{Address: "addr", Observed: true, Confirmed: recordTotals{FundedSat: 50_000, TxCount: 2},
			Transactions: []recordTx{{TxID: txA, State: "confirmed", BlockHash: blockX, ReceivedSat: 25_000}}},
			[]paidTruth{truthOf(txA, confirmedIn(blockX), true, false)},
			auditCounts{Payments: 1, Confirmed: 1, Doubled: 1}},
		{"still confirmed in a block that left the chain", recordAddress{Address: "addr", Observed: true, Confirmed: recordTotals{FundedSat: 25_000, TxCount: 1},
			Transactions: []recordTx{{TxID: txB, State: "confirmed", BlockHash: blockX, ReceivedSat: 25_000}}},
			[]paidTruth{truthOf(txB, regtest.TxStatus{}, true, false)},
			auditCounts{Payments: 1, NotOnChain: 1, Phantom: 1, Doubled: 1}},
		{"reorged out for good but called dropped", recordAddress{Address: "addr", Observed: true, Transactions: []recordTx{{TxID: txB, State: "dropped", ReceivedSat: 25_000}}},
			[]paidTruth{truthOf(txB, regtest.TxStatus{}, true, false)},
			auditCounts{Payments: 1, NotOnChain: 1, WrongState: 1}},
		{"dropped from the mempool", recordAddress{Address: "addr", Observed: true, Transactions: []recordTx{{TxID: txB, State: "dropped", ReceivedSat: 25_000}}},
			[]paidTruth{truthOf(txB, regtest.TxStatus{}, false, true)},
			auditCounts{Payments: 1, NotOnChain: 1}},
		{"back in the mempool after a reorg", recordAddress{Address: "addr", Observed: true, Mempool: recordTotals{FundedSat: 25_000, TxCount: 1},
			Transactions: []recordTx{{TxID: txB, State: "reorged", ReceivedSat: 25_000}}},
			[]paidTruth{truthOf(txB, regtest.TxStatus{Mempool: true}, true, false)},
			auditCounts{Payments: 1}},
		{"never observed", recordAddress{Address: "addr"},
			[]paidTruth{truthOf(txA, confirmedIn(blockX), false, false), truthOf(txB, regtest.TxStatus{}, false, false)},
			auditCounts{Payments: 2, Confirmed: 1, NotOnChain: 1, Missed: 1}},
	} {
		var got auditCounts
		auditAddress(c.rec, c.pays, &got)
		problems := got.Problems
		got.Problems = nil
		if got.Payments != c.want.Payments || got.Confirmed != c.want.Confirmed || got.NotOnChain != c.want.NotOnChain ||
			got.Missed != c.want.Missed || got.Doubled != c.want.Doubled || got.Phantom != c.want.Phantom || got.WrongState != c.want.WrongState {
			t.Errorf("%s: got %+v, want %+v (%s)", c.name, got, c.want, strings.Join(problems, "; "))
		}
		if len(problems) != got.faults() {
			t.Errorf("%s: %d faults but %d problems said: %q", c.name, got.faults(), len(problems), problems)
		}
	}
}

// n faults over the blocks fall on n different blocks, evenly apart,
// and two kinds of fault at their phases on different blocks where
// there is room.
func TestFaultAt(t *testing.T) {
	t.Parallel()
	count := func(at []bool) (n int) {
		for _, f := range at {
			if f {
				n++
			}
		}
		return n
	}
	for _, c := range []struct{ blocks, n int }{{40, 20}, {40, 5}, {6, 6}, {3, 0}, {1, 1}, {7, 3}} {
		if got := count(faultAt(c.blocks, c.n, killPhase)); got != c.n {
			t.Errorf("faultAt(%d, %d) placed %d", c.blocks, c.n, got)
		}
	}
	kills, reorgs := faultAt(40, 5, killPhase), faultAt(40, 20, reorgPhase)
	for b := range 40 {
		if kills[b] && reorgs[b] {
			t.Errorf("a kill and a reorg both on block %d", b)
		}
	}
	if at := faultAt(10, 2, 0.5); !at[2] || !at[7] {
		t.Errorf("two faults over ten blocks at phase 0.5: %v", at)
	}
}
