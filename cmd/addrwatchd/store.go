package main

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/httpd"
	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// accountStore is what both backends serve accounts with: a node, or a
// sharded node's groups. Their errors go to the edge as they are: a
// rule's refusal is an *actors.Error, a cluster condition one of
// package clustererr's, and the edge's one table says what each means to
// a client (httpd/errors.go).
type accountStore interface {
	Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error)
	Query(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error)
	QueryLinearizable(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error)
	AccountForLogin(login string) (string, bool)
}

// accounts adapts an accountStore to httpd.Store.
type accounts struct{ of accountStore }

func (s accounts) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	return s.of.Propose(ctx, cmd)
}

// Query runs q as fresh as rc asks.
func (s accounts) Query(ctx context.Context, cred actors.Credential, q actors.Query, rc httpd.ReadConsistency) (actors.Result, error) {
	if rc == httpd.ReadLinearizable {
		return s.of.QueryLinearizable(ctx, cred, q)
	}
	return s.of.Query(ctx, cred, q)
}

func (s accounts) AccountForLogin(login string) (string, bool) { return s.of.AccountForLogin(login) }

// nodeStore adapts a cluster node to the httpd interfaces.
type nodeStore struct {
	accounts
	node *cluster.Node
}

func newNodeStore(n *cluster.Node) nodeStore { return nodeStore{accounts{n}, n} }

func (s nodeStore) Status() (any, error) { return s.node.Status() }
func (s nodeStore) Snapshot() error      { return s.node.Snapshot() }
func (s nodeStore) AddNode(id, raftAddr string) (any, error) {
	return s.node.AddNode(id, raftAddr)
}
func (s nodeStore) RemoveServer(id string) error       { return s.node.RemoveServer(id) }
func (s nodeStore) Ready() bool                        { return s.node.Ready() }
func (s nodeStore) Backup(w io.Writer) error           { return s.node.Backup(w) }
func (s nodeStore) Restore(path string) error          { return s.node.RestoreFile(path) }
func (s nodeStore) TransferLeadership(id string) error { return s.node.TransferLeadership(id) }

func (s nodeStore) Serving() bool                     { return s.node.Serving() }
func (s nodeStore) Leading() bool                     { return s.node.IsLeader() }
func (s nodeStore) Leader() (addr string, known bool) { return s.node.Leader() }

func (s nodeStore) DialNode(addr string, stream forward.NodeStream, timeout time.Duration) (net.Conn, error) {
	return s.node.DialForward(addr, forwardOf(stream), timeout)
}

func (s nodeStore) forwarded(f cluster.Forward) net.Listener { return s.node.ForwardedListener(f) }

func (s nodeStore) registerMetrics(reg prometheus.Registerer) {
	reg.MustRegister(s.node.Collectors()...)
}

// forwardOf is the node connection stream of a kind of forwarded traffic.
func forwardOf(stream forward.NodeStream) cluster.Forward {
	switch stream {
	case forward.StreamAdmin:
		return cluster.ForwardAdmin
	case forward.StreamFrames:
		return cluster.ForwardFrames
	}
	return cluster.ForwardPublic
}

// backend is the node behind the API: one raft group (nodeStore) or a
// sharded node's groups (groupsStore).
type backend interface {
	httpd.Store
	admin.Operator
	forward.Cluster
	// forwarded is the listener of the traffic of kind f other nodes
	// forward to this one.
	forwarded(f cluster.Forward) net.Listener
	registerMetrics(reg prometheus.Registerer)
}
