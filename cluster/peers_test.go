package cluster

import (
	"net"
	"testing"
)

// TestIsPeerKnowsTheOtherNodes checks the connection cap's exemption: the
// other nodes' raft hosts are peers, this node's own and any other
// address are not.
func TestIsPeerKnowsTheOtherNodes(t *testing.T) {
	loopback, elsewhere := net.ParseIP("127.0.0.1"), net.ParseIP("192.0.2.1")
	alone := startNode(t, t.TempDir(), freeRaftAddr(t))
	if alone.node.IsPeer(loopback) {
		t.Error("a one-node cluster takes its own address for a peer's")
	}
	c := startCluster(t)
	for _, m := range c.members {
		if !m.node.IsPeer(loopback) || !m.node.IsPeer(net.ParseIP("::ffff:127.0.0.1")) {
			t.Errorf("%s does not know its peers on 127.0.0.1", m.id)
		}
		if m.node.IsPeer(elsewhere) {
			t.Errorf("%s takes %s for a peer", m.id, elsewhere)
		}
	}
}
