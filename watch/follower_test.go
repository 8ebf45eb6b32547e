package watch

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

var (
	system = actors.Principal{Kind: actors.PrincipalSystem}
	owner  = actors.Principal{Kind: actors.PrincipalOwner}
	addrA  = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
	addrB  = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
)

// testStore holds real accounts and applies the follower's observations
// with the rules, as the cluster does, without raft.
type testStore struct {
	mu       sync.Mutex
	accounts map[string]*actors.Account
	at       int64
	proposed []*actors.ObserveAddress
}

func newTestStore(t *testing.T, cards map[string][]string) *testStore {
	t.Helper()
	s := &testStore{accounts: map[string]*actors.Account{}}
	for id, addresses := range cards {
		s.apply(t, id, system, &actors.CreateAccount{Plan: actors.PlanExtended, PasswordHash: "x", FirstSpaceID: "sp-" + id})
		for i, a := range addresses {
			s.apply(t, id, owner, &actors.CreatePortfolioCard{CardID: fmt.Sprintf("c%d", i), Address: a})
		}
	}
	return s
}

func (s *testStore) apply(t *testing.T, account string, p actors.Principal, payload actors.Payload) {
	t.Helper()
	s.at++
	a, res := actors.Apply(s.accounts[account], &actors.Command{Account: account, At: s.at, Principal: p, Payload: payload})
	if _, err := res.Outcome(); err != nil {
		t.Fatalf("%T: %v", payload, err)
	}
	s.accounts[account] = a
}

func (s *testStore) Leading() bool { return true }

func (s *testStore) Watched(context.Context) ([]Target, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Target
	for id, a := range s.accounts {
		targets, err := actors.Answer[[]actors.WatchTarget](actors.RunQuery(a, actors.Credential{Kind: actors.CredentialSystem, AccountID: id}, actors.WatchTargetsQuery{}).Outcome())
		if err != nil {
			return nil, err
		}
		for _, t := range targets {
			out = append(out, Target{Account: id, Address: t.Address, Recorded: t.Recorded})
		}
	}
	return out, nil
}

func (s *testStore) Observe(_ context.Context, account string, obs *actors.ObserveAddress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at++
	a, res := actors.Apply(s.accounts[account], &actors.Command{Account: account, At: s.at, Principal: system, Payload: obs})
	if _, err := res.Outcome(); err != nil {
		return err
	}
	s.accounts[account], s.proposed = a, append(s.proposed, obs)
	return nil
}

// tx is the account's record of txid at address.
func (s *testStore) tx(account, address, txid string) *actors.WatchedTx {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.accounts[account].Watched {
		if w.Address != address {
			continue
		}
		for _, t := range w.Txs {
			if t.TxID == txid {
				return t
			}
		}
	}
	return nil
}

func sweep(t *testing.T, f *Follower, c *testChain) {
	t.Helper()
	if err := f.Sweep(context.Background(), c.tip()); err != nil {
		t.Fatal(err)
	}
}

// A payment is seen in the mempool, then confirmed in its block; sweeping
// again proposes nothing, so it is new once.
func TestAPaymentIsSeenThenConfirmedOnce(t *testing.T) {
	c, s := newTestChain(), newTestStore(t, map[string][]string{"acct": {addrA}})
	f := New(c, s, Options{})
	pay := c.pay(addrA, 20_000, hashOf("prev")+":0")
	sweep(t, f, c)
	if got := s.tx("acct", addrA, pay.TxID); got == nil || got.State != actors.TxMempool || got.ReceivedSat != 20_000 {
		t.Fatalf("after the mempool sweep: %+v", got)
	}
	c.mine()
	sweep(t, f, c)
	got := s.tx("acct", addrA, pay.TxID)
	if got == nil || got.State != actors.TxConfirmed || got.Height != 1 || got.BlockHash != c.tip().Hash {
		t.Fatalf("after its block: %+v", got)
	}
	w := s.accounts["acct"].Watched[0]
	if w.Confirmed.FundedSat != 20_000 || w.Mempool.TxCount != 0 || w.TipHeight != 1 {
		t.Errorf("totals %+v at %d", w.Confirmed, w.TipHeight)
	}
	before := len(s.proposed)
	sweep(t, f, c)
	if len(s.proposed) != before {
		t.Errorf("a sweep with nothing new proposed %d observations", len(s.proposed)-before)
	}
}

// A mempool payment replaced by another that spends the same output is
// recorded as replaced, naming its replacement; one that leaves the
// mempool without a replacement is dropped.
func TestReplacedAndDroppedPayments(t *testing.T) {
	c, s := newTestChain(), newTestStore(t, map[string][]string{"acct": {addrA}})
	f := New(c, s, Options{})
	spent := hashOf("prev") + ":0"
	first := c.pay(addrA, 20_000, spent)
	lost := c.pay(addrA, 5_000, hashOf("other")+":3")
	sweep(t, f, c)
	c.drop(first.TxID)
	c.drop(lost.TxID)
	bumped := c.pay(addrA, 19_000, spent) // a higher fee, paid from the same output
	sweep(t, f, c)
	if got := s.tx("acct", addrA, first.TxID); got == nil || got.State != actors.TxReplaced || got.ReplacedBy != bumped.TxID {
		t.Errorf("the replaced payment: %+v", got)
	}
	if got := s.tx("acct", addrA, lost.TxID); got == nil || got.State != actors.TxDropped {
		t.Errorf("the dropped payment: %+v", got)
	}
	if got := s.tx("acct", addrA, bumped.TxID); got == nil || got.State != actors.TxMempool {
		t.Errorf("the replacement: %+v", got)
	}
}

// A block that leaves the chain takes its payment out (reorged), and the
// payment confirmed again in the new chain's block is recorded there; a
// payment the new chain never confirms stays reorged.
func TestAReorgTakesAPaymentOutAndBack(t *testing.T) {
	c, s := newTestChain(), newTestStore(t, map[string][]string{"acct": {addrA, addrB}})
	f := New(c, s, Options{})
	back := c.pay(addrA, 20_000, hashOf("p1")+":0")
	never := c.pay(addrB, 7_000, hashOf("p2")+":0")
	c.mine()
	sweep(t, f, c)
	oldHash := c.tip().Hash
	c.reorg(1, func(tx chain.Tx) bool { return tx.TxID == back.TxID })
	sweep(t, f, c)
	for _, id := range []string{back.TxID, never.TxID} {
		got := s.tx("acct", map[string]string{back.TxID: addrA, never.TxID: addrB}[id], id)
		if got == nil || got.State != actors.TxReorged || got.BlockHash != oldHash {
			t.Errorf("right after the reorg: %+v", got)
		}
	}
	c.mine()
	c.mine()
	sweep(t, f, c)
	if got := s.tx("acct", addrA, back.TxID); got == nil || got.State != actors.TxConfirmed || got.BlockHash == oldHash || got.Height != 1 {
		t.Errorf("confirmed again: %+v (old block %s)", got, oldHash)
	}
	if got := s.tx("acct", addrB, never.TxID); got == nil || got.State != actors.TxReorged {
		t.Errorf("never confirmed again: %+v", got)
	}
	if w := s.accounts["acct"].Watched; w[0].Confirmed.FundedSat+w[1].Confirmed.FundedSat != 20_000 {
		t.Errorf("confirmed totals after the reorg: %+v, %+v", w[0].Confirmed, w[1].Confirmed)
	}
}

// An address is read once however many accounts watch it, and each
// account records it; an address whose reads fail holds back no other.
func TestAddressesAreReadOnceAndFailAlone(t *testing.T) {
	c := newTestChain()
	s := newTestStore(t, map[string][]string{"a1": {addrA}, "a2": {addrA, addrB}})
	f := New(c, s, Options{})
	pay := c.pay(addrA, 1_000, hashOf("p")+":0")
	c.failing[addrB] = true
	sweep(t, f, c)
	for _, account := range []string{"a1", "a2"} {
		if got := s.tx(account, addrA, pay.TxID); got == nil {
			t.Errorf("%s did not record the payment", account)
		}
	}
	if st := f.Stats(); st.Requests != 3+1 || st.Failures != 1 || st.Observations != 2 {
		t.Errorf("stats %+v: want three reads of the shared address, one of the failing one, one failure, two observations", st)
	}
}
