package cluster

import (
	"net"
	"net/netip"

	"github.com/hashicorp/raft"
)

// IsPeer reports whether ip is the host of another node's raft address in
// the latest configuration: the address a follower forwards its clients'
// requests from. A host given by name is not resolved (this runs as a
// connection is accepted, which must not wait on DNS); such nodes are
// told apart by --trusted-proxies instead.
func (n *Node) IsPeer(ip net.IP) bool {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	addr = addr.Unmap()
	future := n.raft.GetConfiguration() // answered from memory, without the raft loop
	if future.Error() != nil {
		return false
	}
	for _, srv := range future.Configuration().Servers {
		if srv.ID == raft.ServerID(n.cfg.NodeID) {
			continue
		}
		host, _, err := net.SplitHostPort(string(srv.Address))
		if err != nil {
			continue
		}
		if peer, err := netip.ParseAddr(host); err == nil && peer.Unmap() == addr {
			return true
		}
	}
	return false
}
