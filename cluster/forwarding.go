package cluster

import (
	"net"
	"time"
)

// Forwarded requests. A follower passes a request it cannot serve to the
// leader over a node connection, and the leader serves it from these
// listeners. Only nodes reach them, which is all that makes a request
// forwarded: nothing in a request, and nothing in the replicated state,
// can claim it.

// ForwardedListener returns the listener of requests other nodes forward
// to this one: admin API requests when admin is set, public API requests
// otherwise. Close closes it for good.
func (n *Node) ForwardedListener(admin bool) net.Listener {
	if admin {
		return n.nodes.streams[streamAdmin]
	}
	return n.nodes.streams[streamPublic]
}

// DialForward opens a node connection to the node at addr (the leader's
// raft address, from Leader) for forwarded admin requests when admin is
// set, public ones otherwise. An error means nothing was sent.
func (n *Node) DialForward(addr string, admin bool, timeout time.Duration) (net.Conn, error) {
	s := streamPublic
	if admin {
		s = streamAdmin
	}
	return n.dialer.open(addr, s, timeout)
}
