package actors

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// observeChain applies an ObserveChain of txs for address at a tip of
// height tip, as the system.
func (ta *testAccount) observeChain(address string, tip int64, txs ...TxObservation) ObservedView {
	ta.t.Helper()
	res := ta.mustOK(systemP, &ObserveChain{ObserveAddress: ObserveAddress{Address: address, TipHeight: tip, TipHash: tipHash(tip),
		Confirmed: AddressTotals{FundedSat: 50_000, TxCount: 1}, Txs: txs}})
	return res.Body.(ObservedView)
}

// observeTipOnly tells address of a new tip alone.
func (ta *testAccount) observeTipOnly(address string, tip int64) ObservedView {
	ta.t.Helper()
	res := ta.mustOK(systemP, &ObserveChain{ObserveAddress: ObserveAddress{Address: address, TipHeight: tip, TipHash: tipHash(tip)}, TipOnly: true})
	return res.Body.(ObservedView)
}

func tipHash(height int64) string { return fmt.Sprintf("%064x", height) }

// eventsAfter are the account's chain events numbered after seq.
func (ta *testAccount) eventsAfter(seq uint64) []ChainEvent {
	var out []ChainEvent
	for _, e := range ta.a.ChainEvents {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	return out
}

// kindsOf lists the events' kinds, in order.
func kindsOf(events []ChainEvent) []ChainEventKind {
	return each(events, func(e ChainEvent) ChainEventKind { return e.Kind })
}

// expectKinds checks that the events since seq are exactly want, in
// order, and returns them.
func (ta *testAccount) expectKinds(what string, seq uint64, want ...ChainEventKind) []ChainEvent {
	ta.t.Helper()
	got := ta.eventsAfter(seq)
	if !slices.Equal(kindsOf(got), want) {
		ta.t.Fatalf("%s: events %v, want %v", what, kindsOf(got), want)
	}
	return got
}

// Each kind of change is its event, with the fields that kind names: a
// payment seen in the mempool, confirmed, then deep when the tip is
// TxDeepConfirmations past its block; a payment replaced, one dropped;
// the amount is the card's net change.
func TestChainEventsOfEachKind(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	card := ta.createCard(ta.owner, addrs[0])
	ta.observeChain(addrs[0], 900) // the address's first sight: nothing yet

	seq := ta.a.ChainEventSeq
	paid := mempoolTx("a1", 5000, hashN("c0")+":0")
	paid.SentSat = 1200
	if v := ta.observeChain(addrs[0], 900, paid); v.Events != 1 {
		t.Errorf("seen: %+v, want one event", v)
	}
	seen := ta.expectKinds("in the mempool", seq, ChainTxSeen)[0]
	if seen.CardID != card.ID || seen.SpaceID != "" || seen.Address != addrs[0] || seen.TxID != hashN("a1") || seen.AmountSat != 3800 ||
		seen.Height != 0 || seen.BlockHash != "" || seen.Confirmations != 0 || seen.At != ta.at {
		t.Errorf("tx_seen %+v", seen)
	}

	seq = ta.a.ChainEventSeq
	confirmed := confirmedTx("a1", 901, "b1", 5000)
	confirmed.SentSat = 1200
	ta.observeChain(addrs[0], 902, confirmed)
	got := ta.expectKinds("in a block", seq, ChainTxConfirmed)[0]
	if got.Height != 901 || got.BlockHash != hashN("b1") || got.Confirmations != 2 || got.AmountSat != 3800 {
		t.Errorf("tx_confirmed %+v", got)
	}

	// One block short of deep, then deep.
	seq = ta.a.ChainEventSeq
	ta.observeTipOnly(addrs[0], 901+TxDeepConfirmations-2)
	ta.expectKinds("a block short of deep", seq)
	ta.observeTipOnly(addrs[0], 901+TxDeepConfirmations-1)
	deep := ta.expectKinds("deep", seq, ChainTxDeep)[0]
	if deep.Height != 901 || deep.BlockHash != hashN("b1") || deep.Confirmations != TxDeepConfirmations {
		t.Errorf("tx_deep %+v", deep)
	}
	ta.observeTipOnly(addrs[0], 950)
	ta.expectKinds("deeper still", seq, ChainTxDeep)

	// Replaced, and dropped.
	ta.observeChain(addrs[0], 950, mempoolTx("a2", 700, hashN("c1")+":1"), mempoolTx("a3", 800, hashN("c2")+":0"))
	seq = ta.a.ChainEventSeq
	replaced, dropped := mempoolTx("a2", 700), mempoolTx("a3", 800)
	replaced.State, replaced.ReplacedBy = TxReplaced, hashN("a4")
	dropped.State = TxDropped
	ta.observeChain(addrs[0], 950, replaced, dropped)
	events := ta.expectKinds("replaced and dropped", seq, ChainTxReplaced, ChainTxDropped)
	if events[0].ReplacedBy != hashN("a4") || events[0].AmountSat != 700 || events[1].ReplacedBy != "" || events[1].AmountSat != 800 {
		t.Errorf("replaced %+v, dropped %+v", events[0], events[1])
	}

	// Back in the mempool after it was dropped: seen again, a new fact.
	seq = ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 950, mempoolTx("a3", 800))
	again := ta.expectKinds("rebroadcast", seq, ChainTxSeen)[0]
	if again.Occurrence != 2 || again.ID() == ChainEventID(card.ID, hashN("a3"), ChainTxSeen, 1) {
		t.Errorf("seen again: occurrence %d, ID %s", again.Occurrence, again.ID())
	}
}

// A transaction the follower first sees already in a block is confirmed,
// never seen; on the address's first sight that is so too, unless it is
// already deep: that is history, taken in without a word.
func TestATransactionFirstSeenConfirmedIsConfirmed(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 1))
	seq := ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 901, confirmedTx("a2", 901, "b1", 5000))
	ta.expectKinds("first seen in a block", seq, ChainTxConfirmed)

	// Far enough behind the tip, it is confirmed and deep at once.
	seq = ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 920, confirmedTx("a3", 901, "b1", 5000))
	ta.expectKinds("first seen deep", seq, ChainTxConfirmed, ChainTxDeep, ChainTxDeep)

	// A new address's first sight: its recent payment is news, its old
	// ones are not, and they never turn deep later.
	ta.createCard(ta.owner, addrs[1])
	seq = ta.a.ChainEventSeq
	ta.observeChain(addrs[1], 1000, confirmedTx("a4", 999, "b9", 1), confirmedTx("a5", 500, "b5", 1), confirmedTx("a6", 995, "b8", 1))
	if got := ta.expectKinds("a new address", seq, ChainTxConfirmed); got[0].TxID != hashN("a4") {
		t.Errorf("told %s, want the recent payment", got[0].TxID)
	}
	seq = ta.a.ChainEventSeq
	ta.observeTipOnly(addrs[1], 1010)
	if got := ta.expectKinds("past the recent one's depth", seq, ChainTxDeep); got[0].TxID != hashN("a4") {
		t.Errorf("deep %s, want the recent payment", got[0].TxID)
	}
}

// An event's ID is derived from (card, txid, kind, occurrence): the same
// fact observed again gives no event at all, and a second confirmation
// after a reorg is a new fact with a new ID. Leaving a block undoes the
// confirmation (tx_reorged), whether the transaction fell back to the
// mempool or went straight into another block.
func TestChainEventIDsAreStable(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	card := ta.createCard(ta.owner, addrs[0])
	ta.observeChain(addrs[0], 900)
	seq := ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 901, confirmedTx("a1", 901, "b1", 5000))
	if v := ta.observeChain(addrs[0], 901, confirmedTx("a1", 901, "b1", 5000)); v.Events != 0 {
		t.Errorf("the same fact again gave %d events", v.Events)
	}
	first := ta.expectKinds("confirmed, twice", seq, ChainTxConfirmed)[0]
	if first.ID() != ChainEventID(card.ID, hashN("a1"), ChainTxConfirmed, 1) || len(first.ID()) != len("ce_")+32 {
		t.Errorf("the first confirmation's ID %s", first.ID())
	}

	// Its block leaves the chain: reorged, naming the block it left.
	seq = ta.a.ChainEventSeq
	reorged := confirmedTx("a1", 901, "b1", 5000)
	reorged.State = TxReorged
	ta.observeChain(addrs[0], 901, reorged)
	ta.observeChain(addrs[0], 901, reorged)
	if out := ta.expectKinds("reorged, twice", seq, ChainTxReorged)[0]; out.BlockHash != hashN("b1") || out.Height != 901 || out.Confirmations != 0 {
		t.Errorf("tx_reorged %+v", out)
	}

	// Confirmed again, in the longer branch: a new fact, a new ID.
	seq = ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 902, confirmedTx("a1", 902, "b2", 5000))
	second := ta.expectKinds("confirmed again", seq, ChainTxConfirmed)[0]
	if second.Occurrence != 2 || second.ID() == first.ID() || second.ID() != ChainEventID(card.ID, hashN("a1"), ChainTxConfirmed, 2) {
		t.Errorf("the second confirmation: occurrence %d, ID %s (the first %s)", second.Occurrence, second.ID(), first.ID())
	}

	// Straight into a third block: the second confirmation is undone
	// and a third made.
	seq = ta.a.ChainEventSeq
	ta.observeChain(addrs[0], 903, confirmedTx("a1", 903, "b3", 5000))
	moved := ta.expectKinds("moved to another block", seq, ChainTxReorged, ChainTxConfirmed)
	if moved[0].BlockHash != hashN("b2") || moved[0].Occurrence != 2 || moved[1].BlockHash != hashN("b3") || moved[1].Occurrence != 3 {
		t.Errorf("reorged %+v, then confirmed %+v", moved[0], moved[1])
	}

	// Deep in the third block; a reorg as deep undoes that too, and the
	// block it came back in is deep again in time: a second tx_deep.
	seq = ta.a.ChainEventSeq
	ta.observeTipOnly(addrs[0], 903+TxDeepConfirmations-1)
	reorged = confirmedTx("a1", 903, "b3", 5000)
	reorged.State = TxReorged
	ta.observeChain(addrs[0], 903+TxDeepConfirmations-1, reorged)
	ta.observeChain(addrs[0], 903+TxDeepConfirmations, confirmedTx("a1", 903, "b3", 5000))
	ta.observeTipOnly(addrs[0], 903+TxDeepConfirmations+5)
	events := ta.expectKinds("deep, reorged, back", seq, ChainTxDeep, ChainTxReorged, ChainTxConfirmed, ChainTxDeep)
	if events[0].ID() == events[3].ID() || events[3].Occurrence != 2 {
		t.Errorf("the second tx_deep: occurrence %d, ID %s (the first %s)", events[3].Occurrence, events[3].ID(), events[0].ID())
	}
}

// A Portfolio card and a bitcoin Space's card holding the same address
// each get every event, under IDs of their own.
func TestTwoCardsOnOneAddressGetAnEventEach(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	card := ta.createCard(ta.owner, addrs[0])
	space := ta.a.Spaces[0]
	ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b1", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: addrs[0]})
	ta.observeChain(addrs[0], 900)
	seq := ta.a.ChainEventSeq
	if v := ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000)); v.Events != 2 {
		t.Errorf("%d events, want one per card", v.Events)
	}
	events := ta.expectKinds("two cards", seq, ChainTxSeen, ChainTxSeen)
	if events[0].CardID != card.ID || events[0].SpaceID != "" || events[1].CardID != "b1" || events[1].SpaceID != space.ID {
		t.Errorf("the events' cards: %+v", events)
	}
	if events[0].ID() == events[1].ID() || events[0].Occurrence != 1 || events[1].Occurrence != 1 || events[0].Seq+1 != events[1].Seq {
		t.Errorf("the two cards' events share an ID or are not in order: %+v", events)
	}
}

// The account keeps its newest chainEventsMax events, none older than
// chainEventsAgeMax, numbered on without a gap.
func TestChainEventsAreBounded(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.observeChain(addrs[0], 900)
	for i := range chainEventsMax/observeTxsMax + 1 {
		txs := make([]TxObservation, observeTxsMax)
		for j := range txs {
			txs[j] = TxObservation{TxID: fmt.Sprintf("%060x%04x", i, j), State: TxMempool, ReceivedSat: 1}
		}
		ta.observeChain(addrs[0], 900, txs...)
	}
	total := uint64((chainEventsMax/observeTxsMax + 1) * observeTxsMax)
	if len(ta.a.ChainEvents) != chainEventsMax || ta.a.ChainEventSeq != total {
		t.Fatalf("%d events kept of %d", len(ta.a.ChainEvents), ta.a.ChainEventSeq)
	}
	for i, e := range ta.a.ChainEvents {
		if e.Seq != total-chainEventsMax+uint64(i)+1 {
			t.Fatalf("event %d has seq %d: the newest are not the ones kept", i, e.Seq)
		}
	}

	// A week later, the next event is all that is kept.
	ta.at += int64(chainEventsAgeMax + time.Second)
	ta.observeChain(addrs[0], 900, mempoolTx("ab", 1))
	if len(ta.a.ChainEvents) != 1 || ta.a.ChainEvents[0].Seq != total+1 {
		t.Fatalf("after a week: %d events", len(ta.a.ChainEvents))
	}
}

// ObserveAddress, the previous release's kind, derives no events and
// keeps no occurrences (a node of that release applies it so); the first
// ObserveChain after it takes what is already deep in the record as it
// stands, and tells what changes from then on.
func TestObserveAddressDerivesNoEvents(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.observe(addrs[0], mempoolTx("a1", 1), confirmedTx("a2", 850, "b1", 1), confirmedTx("a3", 898, "b2", 1))
	w := ta.a.watched(addrs[0])
	if len(ta.a.ChainEvents) != 0 || ta.a.ChainEventSeq != 0 || w.ChainEvents {
		t.Fatalf("ObserveAddress derived events: %+v", ta.a.ChainEvents)
	}
	for _, tx := range w.Txs {
		if tx.Entered != (TxOccurrences{}) || tx.DeepIn != "" {
			t.Fatalf("ObserveAddress kept chain-event state: %+v", tx)
		}
	}
	if w.DeepFrom() != 850 {
		t.Errorf("DeepFrom %d, want the old confirmed one's height", w.DeepFrom())
	}
	ta.observeTipOnly(addrs[0], 900)
	ta.expectKinds("taken in", 0)
	if w.DeepFrom() != 898 {
		t.Errorf("DeepFrom %d after the old one was taken in", w.DeepFrom())
	}
	ta.observeTipOnly(addrs[0], 898+TxDeepConfirmations-1)
	ta.expectKinds("the recent one deep", 0, ChainTxDeep)
	if w.DeepFrom() != 0 {
		t.Errorf("DeepFrom %d with nothing left to deepen", w.DeepFrom())
	}
}

// A tip-only observation carries a tip and nothing else, keeps the
// recorded totals, never moves the tip back, and of an address with no
// record does nothing.
func TestTipOnlyObservations(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.createCard(ta.owner, addrs[1])
	if v := ta.observeTipOnly(addrs[1], 900); v != (ObservedView{}) || ta.a.watched(addrs[1]) != nil {
		t.Errorf("a tip-only observation of an address not observed: %+v, recorded %v", v, ta.a.watched(addrs[1]))
	}
	ta.observeChain(addrs[0], 900, confirmedTx("a1", 899, "b1", 5000))
	w := ta.a.watched(addrs[0])
	ta.observeTipOnly(addrs[0], 901)
	if w.TipHeight != 901 || w.TipHash != tipHash(901) || w.Confirmed.FundedSat != 50_000 || w.Confirmed.TxCount != 1 {
		t.Errorf("after a new tip: %+v", w)
	}
	ta.observeTipOnly(addrs[0], 890)
	if w.TipHeight != 901 {
		t.Errorf("a stale tip moved the record back to %d", w.TipHeight)
	}
	for name, p := range map[string]*ObserveChain{
		"with transactions": {ObserveAddress: ObserveAddress{Address: addrs[0], TipHeight: 905, TipHash: tipHash(905), Txs: []TxObservation{mempoolTx("a2", 1)}}, TipOnly: true},
		"with totals":       {ObserveAddress: ObserveAddress{Address: addrs[0], TipHeight: 905, TipHash: tipHash(905), Mempool: AddressTotals{TxCount: 1}}, TipOnly: true},
		"without a tip":     {ObserveAddress: ObserveAddress{Address: addrs[0]}, TipOnly: true},
	} {
		if err := ta.mustFail(CodeValidation, systemP, p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ta.mustFail(CodeUnauthorized, ta.owner, &ObserveChain{ObserveAddress: ObserveAddress{Address: addrs[0], TipHeight: 905, TipHash: tipHash(905)}, TipOnly: true})
}

// The transitions, one by one, as the pure rule has them.
func TestTxChanges(t *testing.T) {
	in := func(s TxState, block string) *TxObservation {
		o := TxObservation{TxID: hashN("a1"), State: s}
		if block != "" {
			o.Height, o.BlockHash = 5, hashN(block)
		}
		if s == TxReplaced {
			o.ReplacedBy = hashN(block)
		}
		return &o
	}
	cases := []struct {
		before *TxObservation
		now    *TxObservation
		want   []ChainEventKind
	}{
		{nil, in(TxMempool, ""), []ChainEventKind{ChainTxSeen}},
		{nil, in(TxConfirmed, "b1"), []ChainEventKind{ChainTxConfirmed}},
		{in(TxMempool, ""), in(TxConfirmed, "b1"), []ChainEventKind{ChainTxConfirmed}},
		{in(TxMempool, ""), in(TxReplaced, "c1"), []ChainEventKind{ChainTxReplaced}},
		{in(TxReplaced, "c1"), in(TxReplaced, "c2"), []ChainEventKind{ChainTxReplaced}},
		{in(TxMempool, ""), in(TxDropped, ""), []ChainEventKind{ChainTxDropped}},
		{in(TxDropped, ""), in(TxMempool, ""), []ChainEventKind{ChainTxSeen}},
		{in(TxReplaced, "c1"), in(TxMempool, ""), []ChainEventKind{ChainTxSeen}},
		{in(TxDropped, ""), in(TxConfirmed, "b1"), []ChainEventKind{ChainTxConfirmed}},
		{in(TxConfirmed, "b1"), in(TxReorged, "b1"), []ChainEventKind{ChainTxReorged}},
		{in(TxConfirmed, "b1"), in(TxMempool, ""), []ChainEventKind{ChainTxReorged}},
		{in(TxConfirmed, "b1"), in(TxConfirmed, "b2"), []ChainEventKind{ChainTxReorged, ChainTxConfirmed}},
		{in(TxReorged, "b1"), in(TxConfirmed, "b1"), []ChainEventKind{ChainTxConfirmed}},
		{in(TxReorged, "b1"), in(TxMempool, ""), nil},
		{in(TxMempool, ""), in(TxMempool, ""), nil},
		{in(TxConfirmed, "b1"), in(TxConfirmed, "b1"), nil},
		{nil, in(TxReorged, "b1"), nil},
	}
	for _, tc := range cases {
		var got []ChainEventKind
		for _, c := range txChanges(tc.before, *tc.now) {
			got = append(got, c.kind)
		}
		if !slices.Equal(got, tc.want) {
			from := "nothing"
			if tc.before != nil {
				from = string(tc.before.State)
			}
			t.Errorf("%s → %s: %v, want %v", from, tc.now.State, got, tc.want)
		}
	}
}
