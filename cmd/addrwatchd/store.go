package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/httpd"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// nodeStore adapts a cluster node to the httpd interfaces, translating the
// node's errors into the ones httpd understands.
type nodeStore struct{ node *cluster.Node }

func (s nodeStore) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	res, err := s.node.Propose(ctx, cmd)
	return res, translate(err)
}

func (s nodeStore) Query(ctx context.Context, cred actors.Credential, q actors.Query, rc httpd.ReadConsistency) (actors.Result, error) {
	return query(s.node, ctx, cred, q, rc)
}

// reader is what both backends read with: a node, or a sharded node's
// groups.
type reader interface {
	Query(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error)
	QueryLinearizable(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error)
}

// query runs q on r as fresh as rc asks.
func query(r reader, ctx context.Context, cred actors.Credential, q actors.Query, rc httpd.ReadConsistency) (actors.Result, error) {
	run := r.Query
	if rc == httpd.ReadLinearizable {
		run = r.QueryLinearizable
	}
	res, err := run(ctx, cred, q)
	return res, translate(err)
}

func (s nodeStore) AccountForLogin(login string) (string, bool) {
	return s.node.AccountForLogin(login)
}

func (s nodeStore) Status() (any, error) { return s.node.Status() }
func (s nodeStore) Snapshot() error      { return translate(s.node.Snapshot()) }
func (s nodeStore) AddNode(id, raftAddr string) (any, error) {
	added, err := s.node.AddNode(id, raftAddr)
	return added, translate(err)
}
func (s nodeStore) RemoveServer(id string) error { return translate(s.node.RemoveServer(id)) }
func (s nodeStore) Ready() bool                  { return s.node.Ready() }
func (s nodeStore) Backup(w io.Writer) error     { return translate(s.node.Backup(w)) }
func (s nodeStore) Restore(path string) error    { return translate(s.node.RestoreFile(path)) }
func (s nodeStore) TransferLeadership(id string) error {
	return translate(s.node.TransferLeadership(id))
}

func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrNotLeader), errors.Is(err, cluster.ErrNoDirectory):
		// A sharded node that has no slot directory yet has no leader
		// to send anything to; nothing entered a log.
		return fmt.Errorf("%w: %v", httpd.ErrNotLeader, err)
	case errors.Is(err, cluster.ErrUnknownServer):
		return actors.Errorf(actors.CodeNotFound, "%v", err)
	case errors.Is(err, cluster.ErrInvalidMember):
		return actors.Errorf(actors.CodeValidation, "%v", err)
	case errors.Is(err, cluster.ErrMemberConflict), errors.Is(err, cluster.ErrNoQuorum):
		return actors.Errorf(actors.CodeConflict, "%v", err)
	case errors.Is(err, cluster.ErrOutcomeUnknown), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %v", httpd.ErrOutcomeUnknown, err)
	}
	return err
}

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
	httpd.Operator
	forward.Cluster
	// forwarded is the listener of the traffic of kind f other nodes
	// forward to this one.
	forwarded(f cluster.Forward) net.Listener
	registerMetrics(reg prometheus.Registerer)
}
