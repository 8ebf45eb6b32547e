package cluster

import (
	"fmt"
	"net"
	"time"
)

// Forwarded requests. A follower passes a request it cannot serve to the
// leader over a node connection, and the leader serves it from these
// listeners. Only nodes reach them, which is all that makes a request
// forwarded: nothing in a request, and nothing in the replicated state,
// can claim it.

// Forward names a kind of forwarded traffic.
type Forward uint8

const (
	// ForwardPublic is one public API request per connection at a time.
	ForwardPublic Forward = iota + 1
	// ForwardAdmin is one admin API request per connection at a time.
	ForwardAdmin
	// ForwardFrames is many public API requests at once on one
	// connection, each in a frame of its own.
	ForwardFrames
)

func (f Forward) stream() (stream, error) {
	switch f {
	case ForwardPublic:
		return streamPublic, nil
	case ForwardAdmin:
		return streamAdmin, nil
	case ForwardFrames:
		return streamFrames, nil
	}
	return 0, fmt.Errorf("cluster: unknown kind of forwarded traffic %d", f)
}

// ForwardedListener returns the listener of the traffic of kind f other
// nodes forward to this one. Close closes it for good.
func (n *Node) ForwardedListener(f Forward) net.Listener {
	s, err := f.stream()
	if err != nil {
		panic(err)
	}
	return n.nodes.streams[s]
}

// DialForward opens a node connection to the node at addr (the leader's
// raft address, from Leader) for forwarded traffic of kind f. An error
// means nothing was sent.
func (n *Node) DialForward(addr string, f Forward, timeout time.Duration) (net.Conn, error) {
	s, err := f.stream()
	if err != nil {
		return nil, err
	}
	return n.dialer.open(addr, s, timeout)
}

// ForwardedListener is Node.ForwardedListener of a sharded node: one
// listener serves the forwarded traffic of every group.
func (g *Groups) ForwardedListener(f Forward) net.Listener {
	s, err := f.stream()
	if err != nil {
		panic(err)
	}
	return g.conns.mux.streams[s]
}

// DialForward is Node.DialForward of a sharded node.
func (g *Groups) DialForward(addr string, f Forward, timeout time.Duration) (net.Conn, error) {
	s, err := f.stream()
	if err != nil {
		return nil, err
	}
	return g.conns.dialer.open(addr, s, timeout)
}
