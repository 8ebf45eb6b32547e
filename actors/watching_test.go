package actors

import (
	"strings"
	"testing"
)

func hashN(b string) string { return strings.Repeat(b, 32) }

// observe applies an ObserveAddress of txs for address as the system.
func (ta *testAccount) observe(address string, txs ...TxObservation) ObservedView {
	ta.t.Helper()
	res := ta.mustOK(systemP, &ObserveAddress{Address: address, TipHeight: 900, TipHash: hashN("0f"),
		Confirmed: AddressTotals{FundedSat: 50_000, TxCount: 1}, Txs: txs})
	return res.Body.(ObservedView)
}

func mempoolTx(id string, received int64, spends ...string) TxObservation {
	return TxObservation{TxID: hashN(id), State: TxMempool, ReceivedSat: received, Spends: spends}
}

func confirmedTx(id string, height int64, block string, received int64) TxObservation {
	return TxObservation{TxID: hashN(id), State: TxConfirmed, Height: height, BlockHash: hashN(block), BlockTime: 1_790_000_000 + height, ReceivedSat: received}
}

// A transaction is new once: the same fact again changes nothing, a new
// state of it is a change, and the account records the source's totals
// at the tip it was observed at.
func TestAnObservedTransactionIsNewOnce(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	if v := ta.observe(addrs[0], mempoolTx("a1", 5000, hashN("c0")+":0")); v != (ObservedView{New: 1}) {
		t.Fatalf("first sight: %+v", v)
	}
	if v := ta.observe(addrs[0], mempoolTx("a1", 5000, hashN("c0")+":0")); v != (ObservedView{}) {
		t.Errorf("the same fact again: %+v, want nothing new", v)
	}
	if v := ta.observe(addrs[0], confirmedTx("a1", 901, "b1", 5000)); v != (ObservedView{Changed: 1}) {
		t.Errorf("confirmed: %+v, want one change", v)
	}
	w := ta.a.watched(addrs[0])
	if w == nil || w.TipHeight != 900 || w.TipHash != hashN("0f") || w.Confirmed.FundedSat != 50_000 || len(w.Txs) != 1 {
		t.Fatalf("recorded %+v", w)
	}
	tx := w.Txs[0]
	if tx.State != TxConfirmed || tx.Height != 901 || tx.Spends != nil || tx.FirstSeenAt >= tx.ChangedAt {
		t.Errorf("the transaction: %+v (spends are kept only while in the mempool; first seen before it changed)", tx)
	}
}

// A block that leaves the best chain takes its transaction out (reorged),
// and the same transaction confirmed again, in another block, is a change,
// not a new transaction; a mempool transaction replaced by another names
// it.
func TestReorgedAndReplacedTransactions(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.observe(addrs[0], confirmedTx("a1", 901, "b1", 5000), mempoolTx("a2", 700, hashN("c0")+":1"))
	reorged := confirmedTx("a1", 901, "b1", 5000)
	reorged.State = TxReorged
	replaced := mempoolTx("a2", 700)
	replaced.State, replaced.ReplacedBy = TxReplaced, hashN("a3")
	if v := ta.observe(addrs[0], reorged, replaced, mempoolTx("a3", 650, hashN("c0")+":1")); v != (ObservedView{New: 1, Changed: 2}) {
		t.Errorf("a reorg, a replacement and its replacing transaction: %+v", v)
	}
	if v := ta.observe(addrs[0], confirmedTx("a1", 902, "b2", 5000)); v != (ObservedView{Changed: 1}) {
		t.Errorf("confirmed again in another block: %+v", v)
	}
	got := map[string]TxState{}
	for _, tx := range ta.a.watched(addrs[0]).Txs {
		got[tx.TxID[:2]] = tx.State
	}
	if got["a1"] != TxConfirmed || got["a2"] != TxReplaced || got["a3"] != TxMempool {
		t.Errorf("states %v", got)
	}
}

// Only the system records observations, only of an address a card holds
// (an Account card or a bitcoin Space's card), and an address no card
// holds any more is forgotten; observing changes no card's version.
func TestObservationsAreTheSystemsOfWatchedAddresses(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	card := ta.createCard(ta.owner, addrs[0])
	ta.mustFail(CodeUnauthorized, ta.owner, &ObserveAddress{Address: addrs[0]})
	ta.mustFail(CodeNotFound, systemP, &ObserveAddress{Address: addrs[1]})
	space := ta.a.Spaces[0]
	ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b1", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: addrs[1]})
	seq, version := ta.a.Seq, ta.card(card.ID).Version
	ta.observe(addrs[0], mempoolTx("a1", 1))
	ta.observe(addrs[1], mempoolTx("a2", 1))
	if ta.a.Seq != seq || ta.card(card.ID).Version != version {
		t.Errorf("observing moved the account's versions: seq %d → %d, card %d → %d", seq, ta.a.Seq, version, ta.card(card.ID).Version)
	}
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: versionString(ta.card(card.ID).Version)})
	ta.observe(addrs[1], mempoolTx("a2", 1))
	if ta.a.watched(addrs[0]) != nil || ta.a.watched(addrs[1]) == nil {
		t.Errorf("after the card went, watched %v", ta.a.Watched)
	}
}

// A fact that makes no sense is refused whole: nothing of it is recorded.
func TestObservationsAreValidated(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	unconfirmedBlock := confirmedTx("a1", 901, "b1", 1)
	unconfirmedBlock.BlockHash = ""
	replacedByNone := mempoolTx("a1", 1)
	replacedByNone.State = TxReplaced
	notReplaced := mempoolTx("a1", 1)
	notReplaced.ReplacedBy = hashN("a2")
	tooMuch := mempoolTx("a1", satoshisMax+1)
	upper := mempoolTx("A1", 1)
	many := make([]TxObservation, observeTxsMax+1)
	for i := range many {
		many[i] = mempoolTx("a1", 1)
	}
	for name, p := range map[string]*ObserveAddress{
		"a confirmed transaction without its block": {Address: addrs[0], Txs: []TxObservation{unconfirmedBlock}},
		"replaced by nothing":                       {Address: addrs[0], Txs: []TxObservation{replacedByNone}},
		"in the mempool, replaced by something":     {Address: addrs[0], Txs: []TxObservation{notReplaced}},
		"more than all the bitcoin":                 {Address: addrs[0], Txs: []TxObservation{tooMuch}},
		"an upper-case txid":                        {Address: addrs[0], Txs: []TxObservation{upper}},
		"an unknown state":                          {Address: addrs[0], Txs: []TxObservation{{TxID: hashN("a1"), State: "pending"}}},
		"the same transaction twice":                {Address: addrs[0], Txs: []TxObservation{mempoolTx("a1", 1), mempoolTx("a1", 1)}},
		"too many transactions":                     {Address: addrs[0], Txs: many},
		"negative totals":                           {Address: addrs[0], Confirmed: AddressTotals{SpentSat: -1}},
		"a tip that is no block":                    {Address: addrs[0], TipHash: "tip"},
	} {
		ta.mustFail(CodeValidation, systemP, p)
		if ta.a.Watched != nil {
			t.Fatalf("%s: recorded %v", name, ta.a.Watched)
		}
	}
}

// An address keeps at most watchedTxsMax transactions: its mempool ones
// always, then those that changed last.
func TestAWatchedAddressKeepsItsNewestTransactions(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.observe(addrs[0], mempoolTx("ff", 1))
	for i := range watchedTxsMax {
		id := strings.Repeat("0", 60) + string("0123456789abcdef"[i/16]) + string("0123456789abcdef"[i%16]) + "00"
		ta.observe(addrs[0], TxObservation{TxID: id, State: TxConfirmed, Height: int64(1000 + i), BlockHash: hashN("b1"), BlockTime: 1, ReceivedSat: 1})
	}
	txs := ta.a.watched(addrs[0]).Txs
	if len(txs) != watchedTxsMax {
		t.Fatalf("%d kept", len(txs))
	}
	var mempool bool
	for _, tx := range txs {
		mempool = mempool || tx.TxID == hashN("ff")
		if tx.Height == 1000 {
			t.Error("the oldest confirmed transaction is still kept")
		}
	}
	if !mempool {
		t.Error("the mempool transaction was dropped")
	}
}

// The records are in address order, whatever order the follower observed
// the addresses in, so a snapshot's bytes do not depend on it.
func TestWatchedAddressesAreInAddressOrder(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	for _, a := range addrs[:3] {
		ta.createCard(ta.owner, a)
	}
	for _, i := range []int{2, 0, 1} {
		ta.observe(addrs[i], mempoolTx("a1", 1))
	}
	for i := 1; i < len(ta.a.Watched); i++ {
		if ta.a.Watched[i-1].Address >= ta.a.Watched[i].Address {
			t.Fatalf("watched out of order: %s before %s", ta.a.Watched[i-1].Address, ta.a.Watched[i].Address)
		}
	}
}

// The follower reads every Bitcoin address the cards hold, once each,
// with a copy of its record; nobody but the system reads it.
func TestWatchTargets(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	space := ta.a.Spaces[0]
	ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b1", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: addrs[0]})
	space = ta.a.Spaces[0]
	ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b2", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: addrs[1]})
	ta.observe(addrs[0], mempoolTx("a1", 1, hashN("c0")+":0"))
	system := Credential{Kind: CredentialSystem, AccountID: ta.id, Now: ta.at}
	targets, err := Answer[[]WatchTarget](RunQuery(ta.a, system, WatchTargetsQuery{}).Outcome())
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].Address != addrs[0] || targets[1].Address != addrs[1] || targets[0].Recorded == nil || targets[1].Recorded != nil {
		t.Fatalf("targets %+v", targets)
	}
	targets[0].Recorded.Txs[0].Spends[0] = "changed"
	if ta.a.watched(addrs[0]).Txs[0].Spends[0] == "changed" {
		t.Error("the follower's copy shares the account's record")
	}
	if _, err := Answer[[]WatchTarget](RunQuery(ta.a, ta.ownerCred(), WatchTargetsQuery{}).Outcome()); err == nil {
		t.Error("the owner read the follower's targets")
	}

	// Asked for only some records, it still lists every address.
	ta.observe(addrs[1], mempoolTx("a2", 1, hashN("c1")+":0"))
	picked, err := Answer[[]WatchTarget](RunQuery(ta.a, system, WatchTargetsQuery{RecordsOf: func(a string) bool { return a == addrs[1] }}).Outcome())
	if err != nil {
		t.Fatal(err)
	}
	if len(picked) != 2 || picked[0].Address != addrs[0] || picked[0].Recorded != nil || picked[1].Address != addrs[1] || picked[1].Recorded == nil {
		t.Fatalf("with only %s's record picked: %+v", addrs[1], picked)
	}
}

// The edge reads an address's recorded totals and its newest confirmed
// transaction's time for its balance; nothing recorded says so.
func TestAddressRecord(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	system := Credential{Kind: CredentialSystem, AccountID: ta.id, Now: ta.at}
	read := func() AddressRecordView {
		t.Helper()
		v, err := Answer[AddressRecordView](RunQuery(ta.a, system, AddressRecordQuery{Address: addrs[0]}).Outcome())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := read(); v.Observed {
		t.Errorf("before any observation: %+v", v)
	}
	ta.observe(addrs[0], confirmedTx("a1", 5, "b1", 1), confirmedTx("a2", 7, "b2", 1), mempoolTx("a3", 1))
	v := read()
	if !v.Observed || v.Confirmed.FundedSat != 50_000 || v.LastConfirmedAt != 1_790_000_007 {
		t.Errorf("after: %+v", v)
	}
	if _, err := Answer[AddressRecordView](RunQuery(ta.a, ta.ownerCred(), AddressRecordQuery{Address: addrs[0]}).Outcome()); err == nil {
		t.Error("the owner read the record the edge reads")
	}
}

// The owner reads every watched address, observed or not, with its
// transactions newest change first and no spends; an agent cannot.
func TestTheOwnerReadsTheFollowersRecord(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[1])
	ta.createCard(ta.owner, addrs[0])
	ta.observe(addrs[0], mempoolTx("a1", 1, hashN("c0")+":0"))
	ta.observe(addrs[0], confirmedTx("a2", 7, "b2", 5))
	v, err := Answer[WatchedView](RunQuery(ta.a, ta.ownerCred(), WatchedQuery{}).Outcome())
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Addresses) != 2 || v.Addresses[0].Address > v.Addresses[1].Address {
		t.Fatalf("addresses %+v", v.Addresses)
	}
	var seen, unseen WatchedAddressView
	for _, a := range v.Addresses {
		if a.Address == addrs[0] {
			seen = a
		} else {
			unseen = a
		}
	}
	if unseen.Observed || unseen.ObservedAt != nil || len(unseen.Transactions) != 0 {
		t.Errorf("the address not observed: %+v", unseen)
	}
	if !seen.Observed || len(seen.Transactions) != 2 || seen.Transactions[0].TxID != hashN("a2") || seen.Transactions[1].Spends != nil {
		t.Errorf("the observed address: %+v", seen)
	}
	agent := ta.addKey(LevelRead)
	if _, err := Answer[WatchedView](RunQuery(ta.a, ta.keyCred(agent), WatchedQuery{}).Outcome()); err == nil {
		t.Error("an API key read the follower's record")
	}
}
