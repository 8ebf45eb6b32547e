package cluster

import (
	"errors"
	"slices"
	"testing"

	"github.com/addrwatch/addrwatch/persistence"
)

// TestRecoverAloneAfterLosingTheQuorum loses two of three nodes for good:
// the survivor cannot commit and no membership change can help. Recover on
// its stopped data dir makes it the only voter, and it starts and serves
// with every acknowledged write.
func TestRecoverAloneAfterLosingTheQuorum(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	cards := populateLeader(t, leader, "acct-1", addresses, t0)
	for _, m := range without(c.members, leader) {
		m.stop(t)
	}
	if _, err := Recover(RecoverConfig{DataDir: leader.dir, NodeID: leader.id, Logger: discardLogger()}); !errors.Is(err, persistence.ErrInUse) {
		t.Fatalf("Recover on a running node: %v, want ErrInUse", err)
	}
	leader.stop(t)

	report, err := Recover(RecoverConfig{DataDir: leader.dir, NodeID: leader.id, Logger: discardLogger()})
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if len(report.Before) != 3 || len(report.After) != 1 || report.After[0].ID != leader.id || report.After[0].RaftAddr != leader.raftAddr ||
		report.After[0].Suffrage != "voter" || report.Accounts != 1 || report.Index == 0 {
		t.Fatalf("report %+v", report)
	}

	c.open(leader, nil)
	if got := c.leader(leader); got != leader {
		t.Fatalf("%s leads", got.id)
	}
	if got := cardsOf(t, leader.accounts, "acct-1"); !slices.Equal(got, cards) {
		t.Fatalf("after recovery acct-1 lists %v, want %v", got, cards)
	}
	mustSucceed(t, leader.propose(t, createAccount("acct-2")), 201)
	if nodes := leader.status(t).Nodes; len(nodes) != 1 || nodes[0].ID != leader.id {
		t.Fatalf("after recovery the cluster is %+v", nodes)
	}
}

// TestRecoverWithPeers recovers two survivors of three with the same peer
// list: they elect a leader between them and keep the data.
func TestRecoverWithPeers(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	cards := populateLeader(t, leader, "acct-1", addresses[:3], t0)
	c.converge(leader, without(c.members, leader))
	for _, m := range c.members {
		m.stop(t)
	}
	survivors := c.members[:2]
	peers := []Peer{{ID: survivors[0].id, RaftAddr: survivors[0].raftAddr}, {ID: survivors[1].id, RaftAddr: survivors[1].raftAddr}}
	for _, m := range survivors {
		if _, err := Recover(RecoverConfig{DataDir: m.dir, NodeID: m.id, Peers: peers, Logger: discardLogger()}); err != nil {
			t.Fatalf("Recover %s: %v", m.id, err)
		}
	}
	for _, m := range survivors {
		c.open(m, nil)
	}
	now := c.leader(survivors...)
	if got := cardsOf(t, now.accounts, "acct-1"); !slices.Equal(got, cards) {
		t.Fatalf("after recovery acct-1 lists %v, want %v", got, cards)
	}
	mustSucceed(t, now.propose(t, createAccount("acct-2")), 201)
	c.converge(now, without(survivors, now))
	if nodes := now.status(t).Nodes; len(nodes) != 2 {
		t.Fatalf("after recovery the cluster is %+v", nodes)
	}
}

func TestRecoverRefuses(t *testing.T) {
	if _, err := Recover(RecoverConfig{DataDir: t.TempDir(), NodeID: "node1", Logger: discardLogger()}); !errors.Is(err, ErrNothingToRecover) {
		t.Fatalf("Recover of an empty data dir: %v, want ErrNothingToRecover", err)
	}
	dir := t.TempDir()
	tn := startNode(t, dir, freeRaftAddr(t))
	populate(t, tn)
	tn.close()
	cases := []RecoverConfig{
		{NodeID: "n7"}, // not in the configuration, and no address given
		{NodeID: "node1", Peers: []Peer{{ID: "n2", RaftAddr: "127.0.0.1:7002"}}}, // peers without this node
		{NodeID: "node 1"},
		{NodeID: "node1", RaftAddr: "not-an-addr"},
	}
	for _, rc := range cases {
		rc.DataDir, rc.Logger = dir, discardLogger()
		if _, err := Recover(rc); !errors.Is(err, ErrInvalidMember) {
			t.Errorf("Recover(%+v): %v, want ErrInvalidMember", rc, err)
		}
	}
	// Nothing was changed: the node starts as it was.
	startNode(t, dir, tn.addr)
}
