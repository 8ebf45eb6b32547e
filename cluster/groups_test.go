package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

// Sharded clusters in one process: each member runs the meta group and
// every data group over one loopback listener, as a node of its own would.

type shardedMember struct {
	id, raftAddr, dir string
	groups            *Groups
}

type shardedCluster struct {
	t       testing.TB
	count   int
	peers   []Peer
	members []*shardedMember
	certs   string // the directory of the cluster's CA
}

// tls is node id's TLS, with a certificate of the cluster's CA made on
// first use and kept for restarts.
func (c *shardedCluster) tls(id string) *NodeTLS {
	c.t.Helper()
	if c.certs == "" {
		c.certs = certDir(c.t)
	}
	return issueNodeTLS(c.t, c.certs, id)
}

// startSharded opens three nodes that run count data groups.
func startSharded(t testing.TB, count int) *shardedCluster {
	t.Helper()
	c := &shardedCluster{t: t, count: count}
	for i := 1; i <= 3; i++ {
		m := &shardedMember{id: fmt.Sprintf("n%d", i), raftAddr: freeRaftAddr(t), dir: t.TempDir()}
		c.members = append(c.members, m)
		c.peers = append(c.peers, Peer{ID: m.id, RaftAddr: m.raftAddr})
	}
	t.Cleanup(func() {
		for _, m := range c.members {
			c.stop(m)
		}
	})
	for _, m := range c.members {
		c.open(m)
	}
	c.awaitDirectory()
	for g := range count {
		c.awaitLeader(g)
	}
	return c
}

func (c *shardedCluster) open(m *shardedMember) {
	c.t.Helper()
	g, err := OpenGroups(Config{NodeID: m.id, RaftAddr: m.raftAddr, DataDir: m.dir, Peers: c.peers, Logger: discardLogger(), TLS: c.tls(m.id)}, c.count)
	if err != nil {
		c.t.Fatalf("OpenGroups %s: %v", m.id, err)
	}
	m.groups = g
}

func (c *shardedCluster) stop(m *shardedMember) {
	if m.groups == nil {
		return
	}
	if err := m.groups.Close(); err != nil {
		c.t.Errorf("Close %s: %v", m.id, err)
	}
	m.groups = nil
}

func (c *shardedCluster) running() []*shardedMember {
	var up []*shardedMember
	for _, m := range c.members {
		if m.groups != nil {
			up = append(up, m)
		}
	}
	return up
}

// eventually retries check until it passes or the test's patience ends.
func (c *shardedCluster) eventually(what string, check func() error) {
	c.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitDirectory waits until every running member has applied the
// directory.
func (c *shardedCluster) awaitDirectory() {
	c.t.Helper()
	c.eventually("the directory", func() error {
		for _, m := range c.running() {
			if d, known := m.groups.Directory(); !known || d.Groups != c.count {
				return fmt.Errorf("%s has directory %v (known %v)", m.id, d.Groups, known)
			}
		}
		return nil
	})
}

// awaitLeader waits until a running member serves group g and returns it.
func (c *shardedCluster) awaitLeader(g int) *shardedMember {
	c.t.Helper()
	var leader *shardedMember
	c.eventually(fmt.Sprintf("a leader of group %d", g), func() error {
		for _, m := range c.running() {
			if m.groups.Group(g).Serving() {
				leader = m
				return nil
			}
		}
		return errors.New("none serves")
	})
	return leader
}

// metaLeader waits for a running member to lead the meta group and
// returns it.
func (c *shardedCluster) metaLeader() *shardedMember {
	c.t.Helper()
	var meta *shardedMember
	c.eventually("a meta leader", func() error {
		for _, m := range c.running() {
			if leads, _, _ := m.groups.MetaLeader(); leads {
				meta = m
				return nil
			}
		}
		return errors.New("none")
	})
	return meta
}

// onMetaLeader calls do with each running member in turn until one is
// not refused with ErrNotLeader, so a meta election between finding the
// leader and asking it is only a retry; it returns that member and its
// answer.
func (c *shardedCluster) onMetaLeader(what string, do func(m *shardedMember) error) (*shardedMember, error) {
	c.t.Helper()
	var leader *shardedMember
	var answer error
	c.eventually(what+" on the meta leader", func() error {
		for _, m := range c.running() {
			if err := do(m); !errors.Is(err, ErrNotLeader) {
				leader, answer = m, err
				return nil
			}
		}
		return ErrNotLeader
	})
	return leader, answer
}

// spreadLeaders moves the leadership of group g to member g mod 3.
func (c *shardedCluster) spreadLeaders() {
	c.t.Helper()
	for g := range c.count {
		target := c.members[g%len(c.members)]
		c.eventually(fmt.Sprintf("group %d led by %s", g, target.id), func() error {
			if target.groups.Group(g).Serving() {
				return nil
			}
			leader := c.awaitLeader(g)
			return fmt.Errorf("transfer: %v", leader.groups.Group(g).TransferLeadership(target.id))
		})
	}
}

// spreadLeaderTerms spreads the leaders as spreadLeaders does and returns
// each group's term under the leader it was given. Balancing or an
// election may move a group again before the terms are read, so they are
// read only while every group is still led by its member, and the spread
// is made again otherwise.
func (c *shardedCluster) spreadLeaderTerms() []uint64 {
	c.t.Helper()
	terms := make([]uint64, c.count)
	c.eventually("every group led by its member while its term is read", func() error {
		c.spreadLeaders()
		for g := range c.count {
			n := c.members[g%len(c.members)].groups.Group(g)
			terms[g] = n.raft.CurrentTerm()
			if !n.Serving() {
				return fmt.Errorf("group %d moved off %s again", g, c.members[g%len(c.members)].id)
			}
		}
		return nil
	})
	return terms
}

// propose sends cmd to whichever running member leads its account's group.
func (c *shardedCluster) propose(cmd *actors.Command) answer {
	c.t.Helper()
	var res answer
	mayHaveApplied := false
	c.eventually(fmt.Sprintf("propose %T for %s", cmd.Payload, cmd.Account), func() error {
		for _, m := range c.running() {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			r, err := answerOf(m.groups.Propose(ctx, cmd))
			cancel()
			if err == nil {
				res = r
				return nil
			}
			if !errors.Is(err, ErrNotLeader) {
				mayHaveApplied = true
				return err
			}
		}
		return ErrNotLeader
	})
	// A create tried again after an attempt whose outcome was unknown (a
	// leader lost on a loaded machine) finds the account its first
	// attempt made: that is the create's success, as a client re-reading
	// would conclude.
	if _, isCreate := cmd.Payload.(*actors.CreateAccount); isCreate && mayHaveApplied && res.refusal != nil && res.refusal.Code == actors.CodeConflict {
		c.t.Logf("create %s: an attempt's outcome was unknown and it had applied (%v)", cmd.Account, res.refusal)
		res = answer{Result: actors.Result{Status: 201}}
	}
	return res
}

// query reads account's portfolio from whichever member leads its group.
func (c *shardedCluster) query(account string) answer {
	c.t.Helper()
	var res answer
	c.eventually("query "+account, func() error {
		for _, m := range c.running() {
			r, err := answerOf(m.groups.Query(context.Background(), ownerCred(account), actors.ListPortfolioQuery{}))
			if err == nil {
				res = r
				return nil
			}
		}
		return ErrNotLeader
	})
	return res
}

func (c *shardedCluster) createAccounts(n int) []string {
	c.t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("acct-%03d", i)
		mustSucceed(c.t, c.propose(createAccount(id)), 201)
		ids = append(ids, id)
	}
	return ids
}

// perGroup counts ids by the group the directory gives them.
func perGroup(t *testing.T, g *Groups, ids []string) []int {
	t.Helper()
	counts := make([]int, g.Count())
	for _, id := range ids {
		n, err := g.GroupOf(id)
		if err != nil {
			t.Fatal(err)
		}
		counts[n]++
	}
	return counts
}

// TestShardedClusterSpreadsAccountsOverGroups: three nodes, three groups.
// Accounts land in the group the directory gives their slot, on every
// node, and nowhere else; each group keeps its stores apart, and a node
// restarted from its data dir has every group's accounts back.
func TestShardedClusterSpreadsAccountsOverGroups(t *testing.T) {
	c := startSharded(t, 3)
	ids := c.createAccounts(60)
	want := perGroup(t, c.members[0].groups, ids)
	for g, n := range want {
		if n == 0 {
			t.Fatalf("no account of 60 in group %d: %v", g, want)
		}
	}
	sameCounts := func() error {
		for _, m := range c.running() {
			for g, n := range want {
				if got := m.groups.Accounts(g).Len(); got != n {
					return fmt.Errorf("%s group %d holds %d accounts, want %d", m.id, g, got, n)
				}
			}
		}
		return nil
	}
	c.eventually("every node's groups", sameCounts)
	for _, id := range ids {
		mustSucceed(t, c.query(id), 200)
	}

	// A follower's status names each group's leader as raft knows it,
	// which an election leaves unknown for a moment.
	c.eventually("n2's status of every group", func() error {
		st, err := c.members[1].groups.Status()
		if err != nil {
			return err
		}
		if st.Meta.Groups != 3 || len(st.Groups) != 3 {
			return fmt.Errorf("status: %+v", st)
		}
		for g, gs := range st.Groups {
			if gs.Group != g || gs.Slots < SlotCount/3 || gs.Accounts != want[g] || len(gs.Nodes) != 3 || gs.Leader == "" {
				return fmt.Errorf("status of group %d: group %d, %d slots, %d accounts, %d nodes, leader %q", g, gs.Group, gs.Slots, gs.Accounts, len(gs.Nodes), gs.Leader)
			}
		}
		return nil
	})

	m := c.members[2]
	for _, sub := range []string{"groups/meta", "groups/1", "groups/2"} {
		if _, err := os.Stat(filepath.Join(m.dir, sub, "snapshots")); err != nil {
			t.Errorf("group stores: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(m.dir, "groups", "0")); !os.IsNotExist(err) {
		t.Errorf("group 0 must keep the data dir's own stores: %v", err)
	}
	c.stop(m)
	c.open(m)
	c.awaitDirectory()
	c.eventually("the restarted node's groups", sameCounts)
}

// TestShardedGroupsFailOverOnTheirOwn: with each group led by a different
// node, killing one node fails over only the group it led. The others keep
// their leader and term, every group takes writes afterwards, and nothing
// acknowledged before is lost.
func TestShardedGroupsFailOverOnTheirOwn(t *testing.T) {
	c := startSharded(t, 3)
	ids := c.createAccounts(30)
	terms := c.spreadLeaderTerms()

	c.stop(c.members[0])
	newLeader := c.awaitLeader(0)
	if newLeader == c.members[0] {
		t.Fatal("the stopped node still leads group 0")
	}
	for g := 1; g < c.count; g++ {
		n := c.members[g].groups.Group(g)
		if !n.Serving() || n.raft.CurrentTerm() != terms[g] {
			t.Errorf("group %d: serving %v, term %d, was %d: it was disturbed by another group's failover", g, n.Serving(), n.raft.CurrentTerm(), terms[g])
		}
	}
	if got := newLeader.groups.Group(0).raft.CurrentTerm(); got <= terms[0] {
		t.Errorf("group 0's term %d after failover, was %d", got, terms[0])
	}
	for _, id := range ids {
		mustSucceed(t, c.query(id), 200)
	}
	more := make([]string, 0, 30)
	for i := range 30 {
		id := fmt.Sprintf("after-%03d", i)
		mustSucceed(t, c.propose(createAccount(id)), 201)
		more = append(more, id)
	}
	if counts := perGroup(t, newLeader.groups, more); counts[0] == 0 || counts[1] == 0 || counts[2] == 0 {
		t.Fatalf("the writes after failover did not reach every group: %v", counts)
	}
}

// TestShardingIsForNewDataDirs: a data dir of one group cannot become a
// sharded node's, nor a sharded node's be opened as one group: either way
// accounts would be looked for in a group that does not hold them.
func TestShardingIsForNewDataDirs(t *testing.T) {
	plain := startNode(t, t.TempDir(), freeRaftAddr(t))
	populate(t, plain)
	plain.close()
	_, err := OpenGroups(withTestTLS(t, Config{NodeID: "node1", RaftAddr: freeRaftAddr(t), DataDir: plain.dir, Logger: discardLogger()}), 3)
	if err == nil || !strings.Contains(err.Error(), "new cluster only") {
		t.Fatalf("OpenGroups on a one-group data dir: %v", err)
	}

	dir := t.TempDir()
	g, err := OpenGroups(withTestTLS(t, Config{NodeID: "node1", RaftAddr: freeRaftAddr(t), DataDir: dir, Logger: discardLogger()}), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	accounts := registry.New(discardLogger())
	defer accounts.Shutdown()
	if n, err := Open(withTestTLS(t, Config{NodeID: "node1", RaftAddr: freeRaftAddr(t), DataDir: dir, Logger: discardLogger()}), accounts); err == nil {
		n.Close()
		t.Fatal("a sharded node's data dir opened as one group")
	} else if !strings.Contains(err.Error(), "--groups") {
		t.Fatalf("the refusal does not say what to do: %v", err)
	}
}

// TestShardedLeadersSpreadOverTheNodes: when one node leads every group
// (say, the others restarted), the nodes hand groups over until each
// leads one, so no node carries every group's writes.
func TestShardedLeadersSpreadOverTheNodes(t *testing.T) {
	c := startSharded(t, 3)
	n1 := c.members[0]
	n1.groups.holdLeaders.Store(true)
	for g := range c.count {
		c.eventually(fmt.Sprintf("group %d led by n1", g), func() error {
			if n1.groups.Group(g).Serving() {
				return nil
			}
			leader := c.awaitLeader(g)
			return fmt.Errorf("transfer: %v", leader.groups.Group(g).TransferLeadership(n1.id))
		})
	}
	for g := range c.count {
		if !n1.groups.Group(g).Serving() {
			t.Fatalf("n1 no longer leads group %d while it holds its leaders", g)
		}
	}
	n1.groups.holdLeaders.Store(false)
	c.eventually("one group led by each node", func() error {
		led := map[string]int{}
		for g := range c.count {
			led[c.awaitLeader(g).id]++
		}
		if len(led) != 3 {
			return fmt.Errorf("leaders per node: %v", led)
		}
		return nil
	})
}

// TestShardedBalancingWaitsForAHandoverUnderWay: while a node is handing
// one group over (an operator's transfer), its balancing hands over no
// other. The group still counts as the node's until the transfer ends,
// so the node would seem to lead one too many and give away a second
// group as well. In TestShardedGroupsFailOverOnTheirOwn, that would move
// group 0 off n1 while the test moved group 1 from n1 to n2, and the test
// would then stop a node that led nothing, which CI once reported as
// "group 0's term 5 after failover, was 5". Once the handover is over,
// balancing goes on.
func TestShardedBalancingWaitsForAHandoverUnderWay(t *testing.T) {
	c := startSharded(t, 3)
	for _, m := range c.members {
		m.groups.holdLeaders.Store(true)
	}
	n1, n2, n3 := c.members[0], c.members[1], c.members[2]
	for g, target := range []*shardedMember{n1, n1, n2} {
		c.eventually(fmt.Sprintf("group %d led by %s", g, target.id), func() error {
			if target.groups.Group(g).Serving() {
				return nil
			}
			leader := c.awaitLeader(g)
			return fmt.Errorf("transfer: %v", leader.groups.Group(g).TransferLeadership(target.id))
		})
	}

	// n1 leads groups 0 and 1 and n3 none: n1 should hand one over, and
	// it is handing group 1 over already.
	handing := n1.groups.Group(1)
	handing.transfers.Add(1)
	n1.groups.holdLeaders.Store(false)
	n1.groups.balanceOnce()
	if !n1.groups.Group(0).Serving() {
		t.Fatalf("n1 handed group 0 over while it was handing group 1 over")
	}
	handing.transfers.Add(-1)
	c.eventually("n1 hands a group to n3", func() error {
		led := map[string]int{}
		for g := range c.count {
			led[c.awaitLeader(g).id]++
		}
		if led[n1.id] != 1 || led[n2.id] != 1 || led[n3.id] != 1 {
			return fmt.Errorf("leaders per node: %v", led)
		}
		return nil
	})
}

// TestShardedBackupRestoresIntoOneGroup: a sharded node's backup holds
// every account of every group once, a moved slot's included, and
// restores into a new cluster of one group; while a slot moves it is
// refused.
func TestShardedBackupRestoresIntoOneGroup(t *testing.T) {
	c := startSharded(t, 2)
	ids := c.createAccounts(20)
	moving := accountsInSlot(SlotOf("mover-0"), 2)
	for _, id := range moving {
		mustSucceed(t, c.propose(createAccount(id)), 201)
		mustSucceed(t, c.propose(createCard(id, "card", addresses[0], t0)), 201)
	}
	ids = append(ids, moving...)
	from, _ := c.members[0].groups.GroupOf(moving[0])
	moveTo := func(to int) *shardedMember {
		meta, err := c.onMetaLeader(fmt.Sprintf("move the slot to group %d", to), func(m *shardedMember) error {
			_, err := m.groups.MoveSlot(SlotOf(moving[0]), to)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return meta
	}
	moveTo(1 - from)
	c.eventually("the move ends and the source drops the slot", func() error {
		for _, m := range c.running() {
			if d, _ := m.groups.Directory(); len(d.Moves) != 0 || m.groups.Group(from).fsm.slots.droppedBy(SlotOf(moving[0])) == 0 {
				return fmt.Errorf("%s: moves %v", m.id, d.Moves)
			}
		}
		return nil
	})

	var backup bytes.Buffer
	if err := c.members[2].groups.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	accounts, err := persistence.ReadSnapshot(bytes.NewReader(backup.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range accounts {
		got = append(got, a.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("the backup holds %v, want %v", got, ids)
	}

	path := filepath.Join(t.TempDir(), "backup.snap")
	if err := os.WriteFile(path, backup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := startNode(t, t.TempDir(), freeRaftAddr(t))
	if err := fresh.node.RestoreFile(path); err != nil {
		t.Fatal(err)
	}
	for _, id := range moving {
		if list := listJSON(t, fresh, id); !strings.Contains(list, `"id":"card"`) {
			t.Fatalf("restored %s: %s", id, list)
		}
	}
	if n := fresh.accounts.Len(); n != len(ids) {
		t.Fatalf("%d accounts restored, want %d", n, len(ids))
	}

	// While a slot moves, the backup is refused (by the meta leader, which
	// has applied the move when MoveSlot returns).
	meta := moveTo(from)
	if err := meta.groups.Backup(io.Discard); !errors.Is(err, ErrSlotMoving) {
		t.Errorf("a backup during a move: %v", err)
	}
}

// TestShardedDrainMovesEveryLeadershipOff: a draining node hands over
// every group it leads and is handed none, through balancing passes,
// until the drain ends; then it gets its share back.
func TestShardedDrainMovesEveryLeadershipOff(t *testing.T) {
	c := startSharded(t, 3)
	c.spreadLeaders() // n1 leads group 0
	drain := func(id string, on bool) error {
		_, err := c.onMetaLeader(fmt.Sprintf("drain %s (%v)", id, on), func(m *shardedMember) error { return m.groups.Drain(id, on) })
		return err
	}
	if err := drain("nobody", true); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("draining an unknown node: %v", err)
	}
	if err := drain("n1", true); err != nil {
		t.Fatal(err)
	}
	ledBy := func(id string) int {
		n := 0
		for g := range c.count {
			if c.awaitLeader(g).id == id {
				n++
			}
		}
		return n
	}
	c.eventually("n1 leads nothing", func() error {
		if n := ledBy("n1"); n != 0 {
			return fmt.Errorf("n1 leads %d groups", n)
		}
		return nil
	})
	time.Sleep(2*balanceEvery + balanceEvery/2) // two balancing passes
	if n := ledBy("n1"); n != 0 {
		t.Fatalf("a draining node was handed %d groups back", n)
	}
	c.eventually("n2's directory names n1 draining", func() error {
		if d, _ := c.members[1].groups.Directory(); !slices.Equal(d.Draining, []string{"n1"}) {
			return fmt.Errorf("the directory's draining nodes: %v", d.Draining)
		}
		return nil
	})
	if err := drain("n1", false); err != nil {
		t.Fatal(err)
	}
	c.eventually("n1 leads again", func() error {
		if n := ledBy("n1"); n == 0 {
			return errors.New("n1 leads nothing")
		}
		return nil
	})
}

// TestShardedRestoreFromAOneGroupBackup: a one-group cluster's backup
// restores into a sharded one: each account lands in the group the
// directory gives it, on every node, the logins table follows the
// accounts', and what the sharded cluster held before is replaced.
func TestShardedRestoreFromAOneGroupBackup(t *testing.T) {
	one := startNode(t, t.TempDir(), freeRaftAddr(t))
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("restored-%02d", i)
		cmd := createAccount(id)
		if i == 0 {
			cmd.Payload.(*actors.CreateAccount).Login = "restored.owner"
		}
		mustSucceed(t, one.propose(cmd), 201)
		ids = append(ids, id)
	}
	var backup bytes.Buffer
	if err := one.node.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "backup.snap")
	if err := os.WriteFile(path, backup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	c := startSharded(t, 2)
	c.spreadLeaders() // so the meta leader leads at most one group: the other's part goes over a node connection
	mustSucceed(t, c.propose(withLogin("before-restore", "old.owner")), 201)
	meta, err := c.onMetaLeader("the restore", func(m *shardedMember) error { return m.groups.RestoreFile(path) })
	if err != nil {
		t.Fatal(err)
	}
	c.eventually("every node holds the restored accounts where the directory puts them", func() error {
		for _, m := range c.running() {
			for _, id := range ids {
				g, _ := m.groups.GroupOf(id)
				if !m.groups.Accounts(g).Has(id) || m.groups.Accounts(1-g).Has(id) {
					return fmt.Errorf("%s: %s not (only) in group %d", m.id, id, g)
				}
			}
			if g, _ := m.groups.GroupOf("before-restore"); m.groups.Accounts(g).Has("before-restore") {
				return fmt.Errorf("%s still holds an account the restore replaced", m.id)
			}
		}
		return nil
	})
	for _, id := range ids {
		mustSucceed(t, c.query(id), 200)
	}
	if id, found := meta.groups.AccountForLogin("RESTORED.owner"); !found || id != ids[0] {
		t.Fatalf("the restored login names %q %v", id, found)
	}
	mustSucceed(t, c.propose(withLogin("after-restore", "old.owner")), 201) // the replaced account's login is free
}
