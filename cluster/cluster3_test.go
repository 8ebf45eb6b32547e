package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

// Three-node clusters in one process, over real loopback TCP transports:
// each node has its own registry, data dir and raft port.

// member is one node of a test cluster.
type member struct {
	id       string
	raftAddr string
	dir      string
	tls      *NodeTLS
	dial     DialFunc // nil: dial directly
	node     *Node
	accounts *registry.Registry

	// underVerifier is the member's Config.underVerifier (nil: none).
	underVerifier func(raft.LogStore) raft.LogStore
}

// stop closes the node and its registry; a stopped member stays stopped.
func (m *member) stop(t *testing.T) {
	t.Helper()
	if m.node == nil {
		return
	}
	if err := m.node.Close(); err != nil {
		t.Errorf("Close %s: %v", m.id, err)
	}
	m.accounts.Shutdown()
	m.node = nil
}

type testCluster struct {
	t       *testing.T
	opts    clusterOptions
	peers   []Peer // the bootstrap list every initial member was started with
	members []*member
}

// clusterOptions vary how a test cluster's nodes reach each other.
type clusterOptions struct {
	// certs is a directory for nodecert files (empty: one made for the
	// cluster): every member gets a certificate from its CA and talks
	// mutual TLS, as every node does.
	certs string
	// dial, when set, gives each member its Config.Dial.
	dial func(from *member) DialFunc
	// underVerifier, when set, gives each member its Config.underVerifier.
	underVerifier func(m *member) func(raft.LogStore) raft.LogStore
	// raftLog is every member's Config.RaftLog (empty: the default).
	raftLog persistence.LogStore
}

// logsUnderVerifier makes a clusterOptions.underVerifier that puts each
// member's log store inside the wrapper wrap makes, and a lookup of the
// wrapper by member ID.
func logsUnderVerifier[L raft.LogStore](wrap func(raft.LogStore) L) (func(m *member) func(raft.LogStore) raft.LogStore, func(id string) L) {
	var mu sync.Mutex
	byID := map[string]L{}
	under := func(m *member) func(raft.LogStore) raft.LogStore {
		return func(s raft.LogStore) raft.LogStore {
			l := wrap(s)
			mu.Lock()
			defer mu.Unlock()
			byID[m.id] = l
			return l
		}
	}
	lookup := func(id string) L {
		mu.Lock()
		defer mu.Unlock()
		return byID[id]
	}
	return under, lookup
}

func (c *testCluster) newMember(id string) *member {
	c.t.Helper()
	m := &member{id: id, raftAddr: freeRaftAddr(c.t), dir: c.t.TempDir()}
	if c.opts.certs == "" {
		c.opts.certs = certDir(c.t)
	}
	m.tls = issueNodeTLS(c.t, c.opts.certs, id)
	if c.opts.dial != nil {
		m.dial = c.opts.dial(m)
	}
	if c.opts.underVerifier != nil {
		m.underVerifier = c.opts.underVerifier(m)
	}
	return m
}

// open starts m with the given bootstrap peers.
func (c *testCluster) open(m *member, peers []Peer) {
	c.t.Helper()
	accounts := registry.New(discardLogger())
	n, err := Open(Config{NodeID: m.id, RaftAddr: m.raftAddr, DataDir: m.dir, Peers: peers, Logger: discardLogger(), TLS: m.tls, Dial: m.dial,
		RaftLog: c.opts.raftLog, underVerifier: m.underVerifier}, accounts)
	if err != nil {
		accounts.Shutdown()
		c.t.Fatalf("Open %s: %v", m.id, err)
	}
	m.node, m.accounts = n, accounts
}

// openJoining starts m in join mode: no bootstrap, waiting to be added.
func (c *testCluster) openJoining(m *member) {
	c.t.Helper()
	accounts := registry.New(discardLogger())
	n, err := Open(Config{NodeID: m.id, RaftAddr: m.raftAddr, DataDir: m.dir, Logger: discardLogger(), TLS: m.tls, Dial: m.dial, Join: true}, accounts)
	if err != nil {
		accounts.Shutdown()
		c.t.Fatalf("Open %s: %v", m.id, err)
	}
	m.node, m.accounts = n, accounts
}

// add creates a member that is not part of the initial cluster; the caller
// opens it.
func (c *testCluster) add(id string) *member {
	c.t.Helper()
	m := c.newMember(id)
	c.members = append(c.members, m)
	return m
}

// startCluster opens three nodes bootstrapped from the same peer list.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	return startClusterWith(t, clusterOptions{})
}

func startClusterWith(t *testing.T, opts clusterOptions) *testCluster {
	t.Helper()
	c := &testCluster{t: t, opts: opts}
	for i := 1; i <= 3; i++ {
		m := c.newMember(fmt.Sprintf("n%d", i))
		c.members = append(c.members, m)
		c.peers = append(c.peers, Peer{ID: m.id, RaftAddr: m.raftAddr})
	}
	t.Cleanup(func() {
		for _, m := range c.members {
			m.stop(t)
		}
	})
	for _, m := range c.members {
		c.open(m, c.peers)
		if !m.node.Bootstrapped {
			t.Fatalf("%s: a new data dir was not bootstrapped", m.id)
		}
	}
	return c
}

// live returns the members that are running.
func (c *testCluster) live() []*member {
	var live []*member
	for _, m := range c.members {
		if m.node != nil {
			live = append(live, m)
		}
	}
	return live
}

// eventually polls cond until it holds or testTimeout passes; detail
// describes the last failed check.
func eventually(t *testing.T, what string, cond func() (ok bool, detail string)) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v still waiting for %s: %s", testTimeout, what, detail)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leader waits until exactly one of among serves, and returns it.
func (c *testCluster) leader(among ...*member) *member {
	c.t.Helper()
	if len(among) == 0 {
		among = c.live()
	}
	var leader *member
	eventually(c.t, "one serving leader", func() (bool, string) {
		var serving []string
		for _, m := range among {
			if m.node.Serving() {
				leader = m
				serving = append(serving, m.id)
			}
		}
		return len(serving) == 1, fmt.Sprintf("serving: %v", serving)
	})
	return leader
}

func without(members []*member, gone ...*member) []*member {
	var rest []*member
	for _, m := range members {
		if !slices.Contains(gone, m) {
			rest = append(rest, m)
		}
	}
	return rest
}

func (m *member) propose(t *testing.T, cmd *actors.Command) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := answerOf(m.node.Propose(ctx, cmd))
	if err != nil {
		t.Fatalf("Propose %T on %s: %v", cmd.Payload, m.id, err)
	}
	return res
}

func (m *member) status(t *testing.T) Status {
	t.Helper()
	s, err := m.node.Status()
	if err != nil {
		t.Fatalf("Status %s: %v", m.id, err)
	}
	return s
}

// stateOf encodes every account of reg in account-ID order, each inside its
// own actor: two replicas with the same state give the same bytes.
func stateOf(t *testing.T, reg *registry.Registry) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		b, err := persistence.EncodeAccount(a)
		if err != nil {
			return a, err
		}
		buf.Write(b)
		buf.WriteByte('\n')
		return a, nil
	}, testTimeout)
	if err != nil {
		t.Fatalf("Visit: %v", err)
	}
	return buf.Bytes()
}

// accountIDs lists the accounts of reg.
func accountIDs(t *testing.T, reg *registry.Registry) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	var mu sync.Mutex
	err := reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		mu.Lock()
		ids[a.ID] = true
		mu.Unlock()
		return a, nil
	}, testTimeout)
	if err != nil {
		t.Fatalf("Visit: %v", err)
	}
	return ids
}

// cardsOf lists the card IDs of account as reg's actor answers them. Any
// replica's registry answers: Registry.Query does not check leadership.
func cardsOf(t *testing.T, reg *registry.Registry, account string) []string {
	t.Helper()
	res := reg.Query(context.Background(), ownerCred(account), actors.ListPortfolioQuery{}, testTimeout)
	mustSucceed(t, mustAnswer(t)(answerOf(res.Outcome())), 200)
	list, isList := res.Body.(actors.PortfolioListView)
	if !isList {
		t.Fatalf("list body = %#v", res.Body)
	}
	var ids []string
	for _, c := range list.Cards {
		ids = append(ids, c.ID)
	}
	return ids
}

// converge waits until every member of among has applied as far as leader
// and holds exactly the leader's accounts, byte for byte.
func (c *testCluster) converge(leader *member, among []*member) {
	c.t.Helper()
	eventually(c.t, "replicas to converge on "+leader.id+"'s state", func() (bool, string) {
		want := leader.status(c.t).AppliedIndex
		wantState := stateOf(c.t, leader.accounts)
		for _, m := range among {
			if got := m.status(c.t).AppliedIndex; got != want {
				return false, fmt.Sprintf("%s applied index %d, leader %s %d", m.id, got, leader.id, want)
			}
			if m.accounts.Len() != leader.accounts.Len() {
				return false, fmt.Sprintf("%s holds %d accounts, leader %d", m.id, m.accounts.Len(), leader.accounts.Len())
			}
			if got := stateOf(c.t, m.accounts); !bytes.Equal(got, wantState) {
				return false, fmt.Sprintf("%s state differs from the leader's:\n got %s\nwant %s", m.id, got, wantState)
			}
		}
		return true, ""
	})
}

// populateLeader creates account with one card per address and returns the
// card IDs, all acknowledged.
func populateLeader(t *testing.T, leader *member, account string, addrs []string, at int64) []string {
	t.Helper()
	mustSucceed(t, leader.propose(t, createAccount(account)), 201)
	return addCards(t, leader, account, "card", addrs, at)
}

func addCards(t *testing.T, leader *member, account, prefix string, addrs []string, at int64) []string {
	t.Helper()
	var ids []string
	for i, addr := range addrs {
		id := fmt.Sprintf("%s-%d", prefix, i)
		mustSucceed(t, leader.propose(t, createCard(account, id, addr, at+int64(i+1)*int64(time.Second))), 201)
		ids = append(ids, id)
	}
	return ids
}

func TestThreeNodeReplication(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	followers := without(c.members, leader)

	cards := populateLeader(t, leader, "acct-1", addresses, t0)
	if got := cardsOf(t, leader.accounts, "acct-1"); !slices.Equal(got, cards) {
		t.Fatalf("leader lists cards %v, want %v", got, cards)
	}

	for _, f := range followers {
		if f.node.Serving() {
			t.Fatalf("follower %s serves", f.id)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		_, err := f.node.Propose(ctx, createCard("acct-1", "card-follower", concurrentAddress(0), t0+int64(time.Hour)))
		cancel()
		if !errors.Is(err, ErrNotLeader) {
			t.Fatalf("Propose on follower %s: %v, want ErrNotLeader", f.id, err)
		}
		if _, err := f.node.Query(context.Background(), ownerCred("acct-1"), actors.MeQuery{}); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("Query on follower %s: %v, want ErrNotLeader", f.id, err)
		}
	}

	c.converge(leader, followers)
	want := stateOf(t, leader.accounts)
	if !bytes.Contains(want, []byte(`"id":"acct-1"`)) {
		t.Fatalf("leader state does not hold acct-1: %s", want)
	}
	for _, m := range c.members {
		if m.accounts.Len() != 1 {
			t.Fatalf("%s holds %d accounts, want 1", m.id, m.accounts.Len())
		}
		// The refused proposal never entered the log anywhere.
		if got := cardsOf(t, m.accounts, "acct-1"); !slices.Equal(got, cards) {
			t.Fatalf("%s lists cards %v, want %v", m.id, got, cards)
		}
		s := m.status(t)
		if s.Leader != leader.id || len(s.Nodes) != 3 || s.Accounts != 1 {
			t.Fatalf("%s status %+v", m.id, s)
		}
		for _, srv := range s.Nodes {
			if srv.Suffrage != "voter" {
				t.Fatalf("%s sees %+v", m.id, srv)
			}
		}
	}
}

// TestThreeNodeFollowersKnowTheLeader: followers learn the leader's raft
// address from raft itself, which is where they forward requests to.
func TestThreeNodeFollowersKnowTheLeader(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	for _, m := range c.members {
		knowsLeader(t, m, leader)
	}
}

// knowsLeader waits until m names leader's raft address as the leader's
// (the leader itself names none: it forwards nowhere).
func knowsLeader(t *testing.T, m, leader *member) {
	t.Helper()
	eventually(t, m.id+" to know the leader", func() (bool, string) {
		addr, known := m.node.Leader()
		if m == leader {
			return !known, fmt.Sprintf("the leader names %q as the leader", addr)
		}
		return known && addr == leader.raftAddr, fmt.Sprintf("Leader() = %q, %v; want %q", addr, known, leader.raftAddr)
	})
}

// shrinkLog makes the leader keep no log behind its snapshots, so that a
// node joining after a snapshot can only catch up by installing it (the
// default keeps 10240 entries, more than these tests write).
func shrinkLog(t *testing.T, m *member) {
	t.Helper()
	rc := m.node.raft.ReloadableConfig()
	rc.TrailingLogs = 0
	if err := m.node.raft.ReloadConfig(rc); err != nil {
		t.Fatalf("ReloadConfig: %v", err)
	}
}

// TestThreeNodeJoinCatchesUpFromSnapshot adds a fourth, empty node. Open
// bootstraps every new data dir, and no configuration works for a joiner
// as such: with no peers it bootstraps a cluster of its own (see
// TestThreeNodeJoinWithoutPeers), and with the cluster's own list, which
// does not name it, raft refuses to bootstrap ("node is not a voter"). So
// the joiner is started with the cluster's list plus itself: its entry 1
// (four voters, term 1) differs from the others' (three voters, term 1),
// but raft's pre-vote keeps it from disturbing anyone (the others refuse a
// server outside their configuration, so its term stays 1), and the
// leader's configuration entries and snapshot supersede it once added.
func TestThreeNodeJoinCatchesUpFromSnapshot(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	cards := populateLeader(t, leader, "acct-1", addresses, t0)
	for i := range 20 {
		mustSucceed(t, leader.propose(t, createAccount(fmt.Sprintf("acct-s%02d", i))), 201)
	}
	shrinkLog(t, leader)
	if err := leader.node.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	var entry raft.Log
	if err := leader.node.stores.Log.GetLog(1, &entry); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("the leader still holds log entry 1 after the snapshot: %v", err)
	}
	// Writes after the snapshot reach the joiner through the log.
	cards = append(cards, addCards(t, leader, "acct-1", "late", concurrentAddresses(2), t0+int64(time.Hour))...)
	mustSucceed(t, leader.propose(t, createAccount("acct-2")), 201)
	proposed := 1 + len(cards) + 20 + 1

	joiner := c.add("n4")
	c.open(joiner, append(slices.Clone(c.peers), Peer{ID: joiner.id, RaftAddr: joiner.raftAddr}))
	time.Sleep(2 * time.Second) // several election timeouts
	if s := joiner.status(t); s.State == "leader" || s.Term != 1 || joiner.node.Serving() {
		t.Fatalf("the joiner did not wait to be added: %+v", s)
	}
	for _, m := range c.members[:3] {
		if s := m.status(t); s.Term != leader.status(t).Term || s.Leader != leader.id {
			t.Fatalf("the waiting joiner disturbed %s: %+v", m.id, s)
		}
	}
	if _, err := leader.node.AddNode(joiner.id, joiner.raftAddr); err != nil {
		t.Fatalf("AddNode: %v", err)
	}
	c.converge(leader, without(c.members, leader))
	if err := leader.node.Promote(joiner.id); err != nil {
		t.Fatalf("Promote: %v", err)
	}

	snaps, err := joiner.node.stores.Snapshot.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 {
		t.Fatal("the joiner caught up without installing the leader's snapshot")
	}
	if got := joiner.status(t).Writes.CommandsApplied; got >= uint64(proposed) {
		t.Fatalf("the joiner replayed %d commands of %d: its state did not come from the snapshot", got, proposed)
	}
	if got := cardsOf(t, joiner.accounts, "acct-1"); !slices.Equal(got, cards) {
		t.Fatalf("joiner lists %v, want %v", got, cards)
	}
	knowsLeader(t, joiner, leader)
	s := leader.status(t)
	if len(s.Nodes) != 4 {
		t.Fatalf("leader sees %+v, want 4 voters", s.Nodes)
	}
	for _, srv := range s.Nodes {
		if srv.Suffrage != "voter" {
			t.Fatalf("leader sees %+v", srv)
		}
	}

	// The joiner takes part in later writes.
	mustSucceed(t, leader.propose(t, createAccount("acct-3")), 201)
	c.converge(leader, without(c.members, leader))
}

// TestThreeNodeJoin starts a fourth node in join mode: it must not
// bootstrap a cluster of its own, and once added it shares the cluster's
// log and follows its leader.
func TestThreeNodeJoin(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	populateLeader(t, leader, "acct-1", addresses[:2], t0)

	joiner := c.add("n4")
	c.openJoining(joiner)
	time.Sleep(2 * time.Second) // several election timeouts
	if s := joiner.status(t); s.State != "follower" || joiner.node.Serving() {
		t.Errorf("before AddNode the joiner is %s (term %d, serving %v): it bootstrapped a cluster of its own",
			s.State, s.Term, joiner.node.Serving())
	}
	if _, err := leader.node.AddNode(joiner.id, joiner.raftAddr); err != nil {
		t.Fatalf("AddNode: %v", err)
	}
	c.converge(leader, without(c.members, leader))
	knowsLeader(t, joiner, leader)
}

// concurrentAddresses returns n addresses that differ from addresses.
func concurrentAddresses(n int) []string {
	var out []string
	for i := range n {
		out = append(out, concurrentAddress(2*i))
	}
	return out
}

func TestThreeNodeRemoveServer(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	cards := populateLeader(t, leader, "acct-1", addresses[:2], t0)
	c.converge(leader, without(c.members, leader))

	removed := without(c.members, leader)[0]
	if err := removed.node.RemoveServer(leader.id); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("RemoveServer on a follower: %v, want ErrNotLeader", err)
	}
	if err := leader.node.RemoveServer(removed.id); err != nil {
		t.Fatalf("RemoveServer: %v", err)
	}
	rest := without(c.members, removed)
	for _, m := range rest {
		eventually(t, m.id+" to drop "+removed.id, func() (bool, string) {
			s := m.status(t)
			var ids []string
			for _, srv := range s.Nodes {
				ids = append(ids, srv.ID)
			}
			return len(ids) == 2 && !slices.Contains(ids, removed.id), fmt.Sprintf("nodes %v", ids)
		})
	}
	// The removed node is gone for good: the other two commit alone.
	removed.stop(t)
	cards = append(cards, addCards(t, leader, "acct-1", "after", addresses[2:], t0+int64(time.Hour))...)
	mustSucceed(t, leader.propose(t, createAccount("acct-2")), 201)
	c.converge(leader, without(rest, leader))
	for _, m := range rest {
		if got := cardsOf(t, m.accounts, "acct-1"); !slices.Equal(got, cards) {
			t.Fatalf("%s lists %v, want %v", m.id, got, cards)
		}
	}
	if !leader.node.Serving() {
		t.Fatal("the leader stopped serving after removing a follower")
	}
}

func TestThreeNodeTransferLeadership(t *testing.T) {
	c := startCluster(t)
	old := c.leader()
	populateLeader(t, old, "acct-1", addresses[:2], t0)
	target := without(c.members, old)[1]

	if err := target.node.TransferLeadership(old.id); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("TransferLeadership on a follower: %v, want ErrNotLeader", err)
	}
	if err := old.node.TransferLeadership("n9"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("TransferLeadership to an unknown server: %v, want ErrUnknownServer", err)
	}
	if err := old.node.TransferLeadership(target.id); err != nil {
		t.Fatalf("TransferLeadership to %s: %v", target.id, err)
	}
	if got := c.leader(); got != target {
		t.Fatalf("%s leads after a transfer to %s", got.id, target.id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := old.node.Propose(ctx, createAccount("acct-old")); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Propose on the old leader: %v, want ErrNotLeader", err)
	}
	if _, err := old.node.Query(ctx, ownerCred("acct-1"), actors.MeQuery{}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Query on the old leader: %v, want ErrNotLeader", err)
	}
	mustSucceed(t, target.propose(t, createCard("acct-1", "card-new", addresses[2], t0+int64(time.Hour))), 201)
	res, err := answerOf(target.node.Query(ctx, ownerCred("acct-1"), actors.ListPortfolioQuery{}))
	if err != nil {
		t.Fatalf("Query on the new leader: %v", err)
	}
	mustSucceed(t, res, 200)
	c.converge(target, without(c.members, target))
	for _, m := range c.members {
		knowsLeader(t, m, target)
	}
}

func TestThreeNodeLeaderFailure(t *testing.T) {
	c := startCluster(t)
	old := c.leader()
	cards := populateLeader(t, old, "acct-1", addresses, t0)

	// A writer creates accounts through whichever node serves, before,
	// during and after the failure. Only acknowledged writes must survive;
	// one whose outcome is unknown may or may not have applied.
	nodes := make([]*Node, len(c.members))
	for i, m := range c.members {
		nodes[i] = m.node
	}
	var (
		stop     atomic.Bool
		acked    atomic.Int64
		mu       sync.Mutex
		ackedIDs []string
		unknown  []string
		refused  []string
		wg       sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		retry := false
		for i := 0; !stop.Load(); {
			id := fmt.Sprintf("acct-w%04d", i)
			var target *Node
			for _, n := range nodes {
				if n.Serving() {
					target = n
					break
				}
			}
			if target == nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			res, err := answerOf(target.Propose(ctx, createAccount(id)))
			cancel()
			switch {
			case errors.Is(err, ErrNotLeader):
				// It never entered the log: retry the same account, which
				// must not exist yet.
				retry = true
				continue
			case err != nil:
				mu.Lock()
				unknown = append(unknown, id)
				mu.Unlock()
			case res.refusal != nil || res.Status != 201:
				mu.Lock()
				why := ""
				if retry {
					why = " (a retry after ErrNotLeader: the first attempt had applied)"
				}
				refused = append(refused, fmt.Sprintf("%s%s: %+v", id, why, res))
				mu.Unlock()
			default:
				mu.Lock()
				ackedIDs = append(ackedIDs, id)
				mu.Unlock()
				acked.Add(1)
			}
			i++
			retry = false
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	waitAcked := func(n int64) {
		eventually(t, fmt.Sprintf("%d acknowledged writes", n), func() (bool, string) {
			return acked.Load() >= n, fmt.Sprintf("%d acknowledged", acked.Load())
		})
	}
	waitAcked(20)

	oldNode := old.node
	old.stop(t)
	failed := acked.Load()
	rest := without(c.members, old)
	leader := c.leader(rest...)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := oldNode.Propose(ctx, createAccount("acct-dead")); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Propose on the closed leader: %v, want ErrNotLeader", err)
	}
	waitAcked(failed + 20)
	stop.Store(true)
	wg.Wait()

	cards = append(cards, addCards(t, leader, "acct-1", "after", concurrentAddresses(4), t0+int64(time.Hour))...)
	if got := cardsOf(t, leader.accounts, "acct-1"); !slices.Equal(got, cards) {
		t.Fatalf("new leader %s lists %v, want %v", leader.id, got, cards)
	}
	ids := accountIDs(t, leader.accounts)
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 {
		t.Fatalf("account creations refused: %v", refused)
	}
	for _, id := range ackedIDs {
		if !ids[id] {
			t.Fatalf("acknowledged account %s is missing on the new leader %s", id, leader.id)
		}
	}
	if want := 1 + len(ackedIDs); len(ids) < want || len(ids) > want+len(unknown) {
		t.Fatalf("%d accounts on the new leader, want %d acknowledged plus at most %d unknown", len(ids), want, len(unknown))
	}
	t.Logf("%d writes acknowledged (%d before the failure), %d with unknown outcome: %s", len(ackedIDs), failed, len(unknown), strings.Join(unknown, ","))
	c.converge(leader, without(rest, leader))
	s := leader.status(t)
	if len(s.Nodes) != 3 || s.Leader != leader.id {
		t.Fatalf("status after the failure %+v", s)
	}
}
