package watch

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

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
	proposed []*actors.ObserveChain
	copied   int // records handed to the follower
}

func newTestStore(t *testing.T, cards map[string][]string) *testStore {
	t.Helper()
	return newTestStoreOn(t, "", cards)
}

// newTestStoreOn is newTestStore with accounts whose addresses are of
// network.
func newTestStoreOn(t *testing.T, network chain.Network, cards map[string][]string) *testStore {
	t.Helper()
	s := &testStore{accounts: map[string]*actors.Account{}}
	for id, addresses := range cards {
		s.apply(t, id, system, &actors.CreateAccount{Plan: actors.PlanExtended, PasswordHash: "x", FirstSpaceID: "sp-" + id, Network: network})
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

func (s *testStore) Watched(_ context.Context, recordsOf func(string) bool) ([]Target, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Target
	for id, a := range s.accounts {
		targets, err := actors.Answer[[]actors.WatchTarget](actors.RunQuery(a, actors.Credential{Kind: actors.CredentialSystem, AccountID: id}, actors.WatchTargetsQuery{RecordsOf: recordsOf}).Outcome())
		if err != nil {
			return nil, err
		}
		for _, t := range targets {
			out = append(out, Target{Account: id, Address: t.Address, Recorded: t.Recorded})
			if t.Recorded != nil {
				s.copied++
			}
		}
	}
	return out, nil
}

func (s *testStore) Deepening(context.Context) ([]Target, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Target
	for id, a := range s.accounts {
		targets, err := actors.Answer[[]actors.WatchTarget](actors.RunQuery(a, actors.Credential{Kind: actors.CredentialSystem, AccountID: id}, actors.DeepeningQuery{}).Outcome())
		if err != nil {
			return nil, err
		}
		for _, t := range targets {
			out = append(out, Target{Account: id, Address: t.Address, DeepFrom: t.DeepFrom, DeepAt: t.DeepAt})
		}
	}
	return out, nil
}

func (s *testStore) Observe(_ context.Context, account string, obs *actors.ObserveChain) error {
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

// tx is a copy of the account's record of txid at address.
func (s *testStore) tx(account, address, txid string) *actors.WatchedTx {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.accounts[account].Watched {
		if w.Address != address {
			continue
		}
		for _, t := range w.Txs {
			if t.TxID == txid {
				c := *t // a copy: the follower goes on changing the record
				return &c
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

// A sweep that finds several changes of an address at once (a follower
// catching up, a new leader's first sweep) proposes them in the order
// they happened, which is the order of their chain events, the order a
// card's receivers hear them in: a block that left the chain before what
// the branch that replaced it confirmed, an older block before a newer,
// a block's payments in the block's order, and the mempool's news after
// every block (a replaced payment before its replacement).
func TestASweepTellsWhatHappenedInOrder(t *testing.T) {
	c, s := newTestChain(), newTestStore(t, map[string][]string{"acct": {addrA}})
	f := New(c, s, Options{})
	left := c.pay(addrA, 1_000, hashOf("p0")+":0")
	c.mine()
	replaced := c.pay(addrA, 2_000, hashOf("p4")+":0")
	sweep(t, f, c)
	c.reorg(1, func(chain.Tx) bool { return false }) // left is on no chain now
	c.drop(replaced.TxID)
	older := c.pay(addrA, 20_000, hashOf("p1")+":0")
	sameBlock := c.pay(addrA, 21_000, hashOf("p2")+":0")
	c.mine()
	newer := c.pay(addrA, 30_000, hashOf("p3")+":0")
	c.mine()
	replacement := c.pay(addrA, 1_900, hashOf("p4")+":0")
	fresh := c.pay(addrA, 5_000, hashOf("p5")+":0")
	before := len(s.accounts["acct"].ChainEvents)
	sweep(t, f, c)
	name := map[string]string{left.TxID: "left", replaced.TxID: "replaced", older.TxID: "older", sameBlock.TxID: "sameBlock",
		newer.TxID: "newer", replacement.TxID: "replacement", fresh.TxID: "fresh"}
	var got []string
	for _, e := range s.accounts["acct"].ChainEvents[before:] {
		got = append(got, string(e.Kind)+" "+name[e.TxID])
	}
	want := []string{"tx_reorged left", "tx_confirmed older", "tx_confirmed sameBlock", "tx_confirmed newer",
		"tx_replaced replaced", "tx_seen replacement", "tx_seen fresh"}
	if !slices.Equal(got, want) {
		t.Errorf("one sweep told\n%q\nwant\n%q", got, want)
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
	// The three reads of an address go at once, so the failing one's
	// three are all asked.
	if st := f.Stats(); st.Requests != 3+3 || st.Failures != 1 || st.Observations != 2 {
		t.Errorf("stats %+v: want three reads of the shared address, three of the failing one, one failure, two observations", st)
	}
}

// notifyingChain is a testChain that tells of changes (chain.Notifier):
// the test sends them.
type notifyingChain struct {
	*testChain
	changes chan chain.Change
	mu      sync.Mutex
	watched []string
}

func (n *notifyingChain) Notify(context.Context) (<-chan chain.Change, error) { return n.changes, nil }

func (n *notifyingChain) Watch(_ context.Context, addresses []string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.watched = addresses
	return nil
}

// waitFor polls cond until it holds, failing the test after a generous
// bound (this asserts that something happens, not how fast).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runNotified runs a follower of a notifying chain, whose changes the
// test sends, for an account watching addrA and addrB, until the test
// ends.
func runNotified(t *testing.T) (*notifyingChain, *testStore, *Follower) {
	c := &notifyingChain{testChain: newTestChain(), changes: make(chan chain.Change)}
	s := newTestStore(t, map[string][]string{"acct": {addrA, addrB}})
	f := New(c, s, Options{Poll: 10 * time.Millisecond, FullEvery: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, s, f
}

// With a source that notifies, the follower sweeps everything once, tells
// the source what to watch, then reads only the addresses a change
// names; a card added later is read and watched too.
func TestANotifiedFollowerReadsOnlyWhatChanged(t *testing.T) {
	c, s, f := runNotified(t)
	waitFor(t, "the first sweep", func() bool { return f.Stats().Addresses == 2 })
	c.mu.Lock()
	watched := slices.Clone(c.watched)
	c.mu.Unlock()
	if !slices.Equal(watched, []string{addrB, addrA}) && !slices.Equal(watched, []string{addrA, addrB}) {
		t.Fatalf("the source watches %v", watched)
	}
	pay := c.pay(addrA, 3_000, hashOf("p")+":0")
	c.changes <- chain.Change{Addresses: []string{addrA}}
	// A sweep's addresses count once it ends, after its observations.
	waitFor(t, "the payment recorded", func() bool { return s.tx("acct", addrA, pay.TxID) != nil && f.Stats().Addresses > 2 })
	if got := f.Stats().Addresses; got != 3 {
		t.Errorf("%d addresses read after one change naming one, want 3", got)
	}
	// Asking every poll whether a card brought a new address copies no
	// record of the addresses already watched.
	s.mu.Lock()
	copied := s.copied
	s.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	s.mu.Lock()
	if s.copied != copied {
		t.Errorf("polls with no new address copied %d records", s.copied-copied)
	}
	s.mu.Unlock()

	addrC := "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
	s.mu.Lock()
	s.apply(t, "acct", owner, &actors.CreatePortfolioCard{CardID: "c9", Address: addrC})
	s.mu.Unlock()
	waitFor(t, "the new card's address read", func() bool { return f.Stats().Addresses >= 4 })
	c.mu.Lock()
	watching := slices.Contains(c.watched, addrC)
	c.mu.Unlock()
	if !watching {
		t.Error("the new card's address is not watched")
	}
	time.Sleep(50 * time.Millisecond) // a few more polls, with nothing new to read
	if got := f.Stats().Addresses; got != 4 {
		t.Errorf("%d addresses read after a card was added, want 4 (only the new one read)", got)
	}
}

// gatedChain is a notifyingChain that records the order in which
// addresses are read and holds the read of one address until released.
type gatedChain struct {
	*notifyingChain
	hold    string
	held    chan struct{} // closed when the held read starts
	release chan struct{}
	mu      sync.Mutex
	order   []string
}

func (g *gatedChain) AddressStats(ctx context.Context, address string) (chain.AddressStats, error) {
	g.mu.Lock()
	g.order = append(g.order, address)
	g.mu.Unlock()
	if address == g.hold {
		close(g.held)
		<-g.release
	}
	return g.notifyingChain.AddressStats(ctx, address)
}

func (g *gatedChain) read() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.order)
}

// A re-read of every address goes a chunk at a time, and a change told
// meanwhile is read before the next chunk: a block does not wait for a
// whole re-read, which takes minutes at 100,000 addresses.
func TestAChangeGoesBeforeTheRestOfARereadOfEverything(t *testing.T) {
	addrC := "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
	c := &gatedChain{notifyingChain: &notifyingChain{testChain: newTestChain(), changes: make(chan chain.Change, 1)},
		hold: addrB, held: make(chan struct{}), release: make(chan struct{})}
	s := newTestStore(t, map[string][]string{"acct": {addrA, addrB, addrC}})
	f := New(c, s, Options{Poll: time.Hour, FullEvery: time.Hour, RereadChunk: 1, Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	<-c.held // the re-read, in address order (addrB, addrC, addrA), holds at addrB
	c.changes <- chain.Change{Addresses: []string{addrA}}
	close(c.release)
	waitFor(t, "every address read and the change taken", func() bool { return len(c.read()) == 4 })
	// Read as one sweep, the change would come last: B, C, A, A.
	if got, want := c.read(), []string{addrB, addrA, addrC, addrA}; !slices.Equal(got, want) {
		t.Fatalf("reads in order %v, want %v: the change told while %s was read goes before the rest of the re-read", got, want, addrB)
	}
}

// events are the account's chain events so far, as kind@address.
func (s *testStore) events(account string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.accounts[account].ChainEvents {
		out = append(out, string(e.Kind)+"@"+e.Address)
	}
	return out
}

// tipOnly counts the tip-only observations proposed so far.
func (s *testStore) tipOnly() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.proposed {
		if o.TipOnly {
			n++
		}
	}
	return n
}

// A notified follower reads only the addresses a block names, so a
// payment confirmed in an earlier block would never be read again at the
// tip that makes it deep. At each new tip the follower tells the
// addresses whose records hold a confirmed transaction that tip makes
// deep, and only those, of the tip alone; apply gives tx_deep.
func TestANotifiedFollowerTellsOfTheTipThatMakesAPaymentDeep(t *testing.T) {
	c, s, f := runNotified(t)
	waitFor(t, "the first sweep", func() bool { return f.Stats().Addresses == 2 })

	pay := c.pay(addrA, 3_000, hashOf("p")+":0")
	c.changes <- chain.Change{Addresses: []string{addrA}}
	waitFor(t, "the payment seen", func() bool { return slices.Equal(s.events("acct"), []string{"tx_seen@" + addrA}) })
	c.mine()
	c.changes <- chain.Change{Tip: c.tip(), Addresses: []string{addrA}}
	waitFor(t, "the payment confirmed", func() bool { return len(s.events("acct")) == 2 })
	if got := s.tx("acct", addrA, pay.TxID); got.State != actors.TxConfirmed {
		t.Fatalf("the payment: %+v", got)
	}

	// Blocks that touch no watched address: the payment's depth grows
	// with each, and only the one that makes it deep is told.
	for range actors.TxDeepConfirmations - 1 {
		if s.tipOnly() != 0 {
			t.Fatalf("a tip-only observation before the payment was deep")
		}
		c.mine()
		c.changes <- chain.Change{Tip: c.tip()}
	}
	waitFor(t, "the payment deep", func() bool { return len(s.events("acct")) == 3 })
	if got := s.events("acct"); got[2] != "tx_deep@"+addrA {
		t.Errorf("events %v, want tx_deep last", got)
	}
	c.mine()
	c.changes <- chain.Change{Tip: c.tip()}
	c.changes <- chain.Change{Addresses: []string{addrB}} // taken once the tip's change is
	waitFor(t, "the last change taken", func() bool { return f.Stats().Addresses == 2+3 })
	if n, st := s.tipOnly(), f.Stats(); n != 1 || st.TipOnly != 1 {
		t.Errorf("%d tip-only observations proposed (stats: %d), want one: for the one address, at the one tip", n, st.TipOnly)
	}
}
