package forward

import (
	"net"
	"time"
)

// Cluster is what forwarding needs from the node.
type Cluster interface {
	Leadership
	// DialNode opens a node connection to addr for stream. Only nodes can
	// open one (mutual TLS with the cluster CA). An error means nothing
	// was sent.
	DialNode(addr string, stream NodeStream, timeout time.Duration) (net.Conn, error)
}

// Leadership is where one raft group's leader is, as this node sees it.
type Leadership interface {
	// Serving reports whether this node answers requests itself.
	Serving() bool
	// Leading reports whether this node leads, serving or not yet (a new
	// leader first applies the log of earlier terms).
	Leading() bool
	// Leader returns the node address of the leader, or false while none
	// is known or this node leads.
	Leader() (addr string, known bool)
}

// ShardedCluster is a Cluster whose accounts live in several raft groups
// (cluster.Groups), each with a leader of its own: a request goes to the
// leader of its account's group.
type ShardedCluster interface {
	Cluster
	// For is the group of account. The empty account is a request that
	// names none (creating an account, say); it gets a group picked at
	// random each time, so that such requests, and the accounts they
	// create (httpd.AccountPlacement), spread evenly over the groups.
	For(account string) Leadership
}

// NodeStream is the kind of node connection a follower opens to forward.
type NodeStream uint8

const (
	// StreamPublic carries one public request at a time, as HTTP.
	StreamPublic NodeStream = iota + 1
	// StreamAdmin carries one admin request at a time, as HTTP.
	StreamAdmin
	// StreamFrames carries many public requests at once, in frames
	// (frames.go).
	StreamFrames
)
