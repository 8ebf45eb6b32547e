package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

func TestValidateNodeID(t *testing.T) {
	for _, id := range []string{"n1", "node1", "N-9", "db1.eu_west", "1", strings.Repeat("a", 64)} {
		if err := ValidateNodeID(id); err != nil {
			t.Errorf("ValidateNodeID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "-n1", ".n1", "_n1", "n 1", "n/1", "n%2F1", "n1\n", "é", "..", strings.Repeat("a", 65)} {
		if err := ValidateNodeID(id); !errors.Is(err, ErrInvalidMember) {
			t.Errorf("ValidateNodeID(%q) = %v, want ErrInvalidMember", id, err)
		}
	}
}

func TestValidateRaftAddr(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:7000", "10.0.0.8:1", "[::1]:7004", "[fe80::1%eth0]:7000", "localhost:65535", "n1.cluster.example:7000", "n1.example.:7000"} {
		if err := ValidateRaftAddr(addr); err != nil {
			t.Errorf("ValidateRaftAddr(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"not-an-addr", "", ":7000", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:http",
		"127.0.0.1:+80", "127.0.0.1:0080", "0.0.0.0:7000", "[::]:7000", "::1:7000", "999.1.1.1:7000", "-host:7000", "host-:7000",
		"ho_st:7000", "a..b:7000", "http://h:7000", strings.Repeat("a", 64) + ":7000"} {
		if err := ValidateRaftAddr(addr); !errors.Is(err, ErrInvalidMember) {
			t.Errorf("ValidateRaftAddr(%q) = %v, want ErrInvalidMember", addr, err)
		}
	}
}

func TestParsePeersRefusesWhatAClusterCannotUse(t *testing.T) {
	for _, in := range []string{"n1=not-an-addr", "n 1=127.0.0.1:7000", "n1=127.0.0.1:7000,n1=127.0.0.1:7001", "n1=127.0.0.1:7000,n2=127.0.0.1:7000", "n1=0.0.0.0:7000"} {
		if got, err := ParsePeers(in); err == nil {
			t.Errorf("ParsePeers(%q) = %v, want an error", in, got)
		}
	}
}

func TestCheckQuorum(t *testing.T) {
	voter := func(id string) raft.Server { return raft.Server{ID: raft.ServerID(id), Suffrage: raft.Voter} }
	nonvoter := func(id string) raft.Server { return raft.Server{ID: raft.ServerID(id), Suffrage: raft.Nonvoter} }
	upSet := func(ids ...string) func(raft.ServerID) bool {
		return func(id raft.ServerID) bool {
			for _, up := range ids {
				if string(id) == up {
					return true
				}
			}
			return false
		}
	}
	cases := []struct {
		name    string
		servers []raft.Server
		up      func(raft.ServerID) bool
		ok      bool
	}{
		{"one voter, up", []raft.Server{voter("n1")}, upSet("n1"), true},
		{"two voters, one down", []raft.Server{voter("n1"), voter("n9")}, upSet("n1"), false},
		{"two voters, both up", []raft.Server{voter("n1"), voter("n2")}, upSet("n1", "n2"), true},
		{"three voters, one down", []raft.Server{voter("n1"), voter("n2"), voter("n3")}, upSet("n1", "n2"), true},
		{"three voters, two down", []raft.Server{voter("n1"), voter("n2"), voter("n3")}, upSet("n1"), false},
		{"non-voters do not count", []raft.Server{voter("n1"), voter("n2"), nonvoter("n3"), nonvoter("n4")}, upSet("n1", "n3", "n4"), false},
		{"a down non-voter does not matter", []raft.Server{voter("n1"), nonvoter("n9")}, upSet("n1"), true},
		{"four voters need three", []raft.Server{voter("n1"), voter("n2"), voter("n3"), voter("n4")}, upSet("n1", "n2"), false},
		{"no voter left", []raft.Server{nonvoter("n2")}, upSet("n2"), false},
		{"nothing left", nil, upSet(), false},
	}
	for _, tc := range cases {
		err := checkQuorum("the change", tc.servers, tc.up)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrNoQuorum)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	err := checkQuorum("removing n2", []raft.Server{voter("n1"), voter("n3")}, upSet("n1"))
	for _, want := range []string{"removing n2", "2 voters (n1, n3)", "1 answer the leader (n1; not answering: n3)", "a quorum needs 2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}

// TestAddNodeCannotLoseTheQuorum is the typo that stopped a one-node
// cluster for good: {"id":"n9","raft_addr":"not-an-addr"} was added as a
// voter, and with one of two voters unreachable nothing could commit
// again, not even the removal of n9. Now the address is refused, a node
// joins as a non-voter that costs the quorum nothing, and promoting one
// that does not answer is refused.
func TestAddNodeCannotLoseTheQuorum(t *testing.T) {
	tn := startNode(t, t.TempDir(), freeRaftAddr(t))
	n := tn.node
	if _, err := n.AddNode("n9", "not-an-addr"); !errors.Is(err, ErrInvalidMember) {
		t.Fatalf("AddNode with a bad address: %v, want ErrInvalidMember", err)
	}
	if _, err := n.AddNode("n 9", "127.0.0.1:7009"); !errors.Is(err, ErrInvalidMember) {
		t.Fatalf("AddNode with a bad id: %v, want ErrInvalidMember", err)
	}
	if nodes := tn.status().Nodes; len(nodes) != 1 {
		t.Fatalf("a refused add changed the configuration: %+v", nodes)
	}

	// Nothing listens at port 1: the node never answers.
	added, err := n.AddNode("n9", "127.0.0.1:1")
	if err != nil {
		t.Fatalf("AddNode: %v", err)
	}
	if added.Suffrage != "nonvoter" || added.ID != "n9" || added.RaftAddr != "127.0.0.1:1" {
		t.Fatalf("AddNode = %+v, want a non-voter", added)
	}
	mustSucceed(t, tn.propose(createAccount("acct-after-add")), 201)

	if err := n.Promote("n9"); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Promote of a node that never answered: %v, want ErrNoQuorum", err)
	}
	if err := n.Promote("node1"); !errors.Is(err, ErrMemberConflict) {
		t.Fatalf("Promote of a voter: %v, want ErrMemberConflict", err)
	}
	if err := n.Promote("n8"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("Promote of an unknown node: %v, want ErrUnknownServer", err)
	}
	if again, err := n.AddNode("n9", "127.0.0.1:1"); err != nil || again.Suffrage != "nonvoter" {
		t.Fatalf("adding n9 again at the same address: %+v, %v; want the same non-voter", again, err)
	}
	if _, err := n.AddNode("n9", "127.0.0.1:2"); !errors.Is(err, ErrMemberConflict) {
		t.Fatalf("AddNode of n9 at another address: %v, want ErrMemberConflict", err)
	}
	if _, err := n.AddNode("n7", tn.addr); !errors.Is(err, ErrMemberConflict) {
		t.Fatalf("AddNode of n7 at node1's address: %v, want ErrMemberConflict", err)
	}
	if err := n.RemoveServer("node1"); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("removing the only voter: %v, want ErrNoQuorum", err)
	}
	if err := n.RemoveServer("n9"); err != nil {
		t.Fatalf("RemoveServer n9: %v", err)
	}
	if err := n.RemoveServer("n9"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("removing n9 twice: %v, want ErrUnknownServer", err)
	}
	mustSucceed(t, tn.propose(createAccount("acct-after-remove")), 201)
}

// TestThreeNodeMembershipKeepsTheQuorum stops one follower of three and
// asks to remove the other. Before, the removal went through: two voters
// were left, one of them down, and the cluster could commit nothing. Now
// it is refused, while removing the stopped node is allowed.
func TestThreeNodeMembershipKeepsTheQuorum(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	followers := without(c.members, leader)
	up, down := followers[0], followers[1]
	populateLeader(t, leader, "acct-1", addresses[:2], t0)

	if err := up.node.RemoveServer(down.id); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("RemoveServer on a follower: %v, want ErrNotLeader", err)
	}
	if err := up.node.Promote(down.id); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Promote on a follower: %v, want ErrNotLeader", err)
	}
	down.stop(t)
	eventually(t, "the leader to see "+down.id+" down", func() (bool, string) {
		return !leader.node.contacts.up(raft.ServerID(down.id)), ""
	})
	if !leader.node.contacts.up(raft.ServerID(up.id)) {
		t.Fatalf("the leader does not see %s, which runs, as up", up.id)
	}
	err := leader.node.RemoveServer(up.id)
	if !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), "not answering: "+down.id) {
		t.Fatalf("removing %s while %s is down: %v, want ErrNoQuorum naming %s", up.id, down.id, err, down.id)
	}
	mustSucceed(t, leader.propose(t, createAccount("acct-2")), 201)

	if err := leader.node.RemoveServer(down.id); err != nil {
		t.Fatalf("removing the stopped %s: %v", down.id, err)
	}
	mustSucceed(t, leader.propose(t, createAccount("acct-3")), 201)
	if nodes := leader.status(t).Nodes; len(nodes) != 2 {
		t.Fatalf("after removing %s: %+v", down.id, nodes)
	}
}

// TestLeaderPromotesACaughtUpNode adds a fourth node that catches up and
// a fifth that never answers: the leader promotes the first by itself,
// and leaves the second a non-voter that costs the quorum nothing.
func TestLeaderPromotesACaughtUpNode(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	populateLeader(t, leader, "acct-1", addresses[:2], t0)
	joiner := c.add("n4")
	c.openJoining(joiner)
	if _, err := leader.node.AddNode("n9", "127.0.0.1:1"); err != nil { // nothing listens at port 1
		t.Fatalf("AddNode n9: %v", err)
	}
	added, err := leader.node.AddNode(joiner.id, joiner.raftAddr)
	if err != nil {
		t.Fatalf("AddNode: %v", err)
	}
	if added.Suffrage != "nonvoter" {
		t.Fatalf("AddNode = %+v, want a non-voter until it has caught up", added)
	}
	eventually(t, joiner.id+" to be promoted", func() (bool, string) {
		got := serverOf(t, leader, joiner.id)
		return got.Suffrage == "voter", fmt.Sprintf("%+v", got)
	})
	if got := serverOf(t, leader, "n9"); got.Suffrage != "nonvoter" {
		t.Fatalf("a node that never answered was promoted: %+v", got)
	}
	if err := leader.node.Promote(joiner.id); !errors.Is(err, ErrMemberConflict) {
		t.Fatalf("promoting a voter again: %v, want ErrMemberConflict", err)
	}
	mustSucceed(t, leader.propose(t, createAccount("acct-2")), 201)
	c.converge(leader, without(c.members, leader))
}

// TestPromotionWaitsForACaughtUpSteadyNode drives the promoter's rule: a
// non-voter is ready once it has held, for promoteSteadyChecks checks in
// a row, everything committed at the check before; a lapse starts the
// count again, and voters and departed nodes are never named.
func TestPromotionWaitsForACaughtUpSteadyNode(t *testing.T) {
	servers := []raft.Server{
		{ID: "n1", Suffrage: raft.Voter},
		{ID: "n4", Suffrage: raft.Nonvoter},
	}
	lastLog, answering := uint64(0), true
	progress := func(id raft.ServerID) (uint64, bool) {
		if id != "n4" {
			return 100, true
		}
		return lastLog, answering
	}
	var p promotion
	p.steady = map[raft.ServerID]int{}
	check := func(committed uint64) []raft.ServerID { return p.check(servers, progress, committed) }

	if got := check(100); got != nil {
		t.Fatalf("first check (nothing to compare with yet): %v", got)
	}
	lastLog = 50 // behind what was committed at the last check
	if got := check(100); got != nil {
		t.Fatalf("a node behind the commit index: %v", got)
	}
	lastLog = 100
	for i := 1; i < promoteSteadyChecks; i++ {
		if got := check(100); got != nil {
			t.Fatalf("check %d of %d in a row: %v, want to wait", i, promoteSteadyChecks, got)
		}
	}
	answering = false // a lapse starts the count again
	if got := check(100); got != nil {
		t.Fatalf("a node that does not answer: %v", got)
	}
	answering = true
	for i := 1; i < promoteSteadyChecks; i++ {
		if got := check(100); got != nil {
			t.Fatalf("after the lapse, check %d: %v, want to wait", i, got)
		}
	}
	if got := check(100); len(got) != 1 || got[0] != "n4" {
		t.Fatalf("after %d steady checks: %v, want [n4]", promoteSteadyChecks, got)
	}

	p.steady["gone"] = 2
	servers = servers[:1]
	if got := check(100); got != nil || len(p.steady) != 0 {
		t.Fatalf("with no non-voter left: ready %v, remembered %v", got, p.steady)
	}
}

func serverOf(t *testing.T, m *member, id string) ServerStatus {
	t.Helper()
	for _, s := range m.status(t).Nodes {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("%s does not list %s", m.id, id)
	return ServerStatus{}
}
