package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/httpd"
	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// groupsStore adapts a sharded node (--groups, cluster.Groups) to the
// httpd interfaces: every account's requests go to its group, and the
// edge forwards each request to the leader of its account's group
// (forward.ShardedCluster).
type groupsStore struct {
	accounts
	groups *cluster.Groups
}

func newGroupsStore(g *cluster.Groups) groupsStore { return groupsStore{accounts{g}, g} }

var (
	_ httpd.Store            = groupsStore{}
	_ admin.Operator         = groupsStore{}
	_ forward.ShardedCluster = groupsStore{}
	_ httpd.AccountPlacement = groupsStore{}
	_ admin.SlotMover        = groupsStore{}
	_ admin.GroupTransferer  = groupsStore{}
	_ admin.Drainer          = groupsStore{}
)

func (s groupsStore) Status() (any, error) { return s.groups.Status() }
func (s groupsStore) Snapshot() error      { return s.groups.Snapshot() }
func (s groupsStore) Ready() bool          { return s.groups.Ready() }

// AddNode adds a node to every group (the edge forwarded the request to
// the meta group's leader).
func (s groupsStore) AddNode(id, raftAddr string) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), membershipTimeout)
	defer cancel()
	return s.groups.AddNode(ctx, id, raftAddr)
}

// RemoveServer removes a node from every group.
func (s groupsStore) RemoveServer(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), membershipTimeout)
	defer cancel()
	return s.groups.RemoveServer(ctx, id)
}

// membershipTimeout bounds a membership change across every group.
const membershipTimeout = time.Minute

func (s groupsStore) TransferLeadership(string) error { return clustererr.ErrGroupNotNamed }

// TransferGroupLeadership hands group's leadership to the voter id (any
// when empty); the edge forwarded the request to that group's leader.
func (s groupsStore) TransferGroupLeadership(group int, id string) error {
	if group < 0 || group >= s.groups.Count() {
		return &clustererr.GroupRangeError{Group: group, Count: s.groups.Count()}
	}
	return s.groups.Group(group).TransferLeadership(id)
}

// Backup writes one file of every group's accounts, which restores into
// a new cluster of one group; refused while a slot moves.
func (s groupsStore) Backup(w io.Writer) error { return s.groups.Backup(w) }

// Restore restores a backup into every group (the edge forwarded the
// request to the meta leader).
func (s groupsStore) Restore(path string) error { return s.groups.RestoreFile(path) }

// For is the leadership of account's group; "" gets a group at random.
func (s groupsStore) For(account string) forward.Leadership {
	if account == admin.RouteMeta {
		return metaLeadership{s.groups}
	}
	if g, isGroup := admin.ParseRouteGroup(account); isGroup {
		if g >= s.groups.Count() {
			return localLeadership{} // the request is refused here, saying why
		}
		return nodeLeadership{s.groups.Group(g)}
	}
	if account == "" {
		return nodeLeadership{s.groups.Group(rand.IntN(s.groups.Count()))}
	}
	id, err := s.groups.GroupOf(account)
	if err != nil {
		return noLeadership{}
	}
	return nodeLeadership{s.groups.Group(id)}
}

// Serves reports whether this node serves account now (its group's
// leader, its slot not moving).
func (s groupsStore) Serves(account string) bool { return s.groups.Serves(account) }

// Serving, Leading and Leader are of a group picked at random, as For("").
func (s groupsStore) Serving() bool                            { return s.For("").Serving() }
func (s groupsStore) Leading() bool                            { return s.For("").Leading() }
func (s groupsStore) Leader() (string, bool)                   { return s.For("").Leader() }
func (s groupsStore) forwarded(f cluster.Forward) net.Listener { return s.groups.ForwardedListener(f) }

func (s groupsStore) DialNode(addr string, stream forward.NodeStream, timeout time.Duration) (net.Conn, error) {
	return s.groups.DialForward(addr, forwardOf(stream), timeout)
}

// collectors registers every group's metrics, each labelled with its
// group.
func (s groupsStore) registerMetrics(reg prometheus.Registerer) {
	for id := range s.groups.Count() {
		prometheus.WrapRegistererWith(prometheus.Labels{"group": fmt.Sprint(id)}, reg).MustRegister(s.groups.Group(id).Collectors()...)
	}
}

// nodeLeadership is one group's leadership on this node.
type nodeLeadership struct{ node *cluster.Node }

func (l nodeLeadership) Serving() bool          { return l.node.Serving() }
func (l nodeLeadership) Leading() bool          { return l.node.IsLeader() }
func (l nodeLeadership) Leader() (string, bool) { return l.node.Leader() }

// noLeadership is the group of an account while the directory is not
// known: no node serves it yet.
type noLeadership struct{}

func (noLeadership) Serving() bool          { return false }
func (noLeadership) Leading() bool          { return false }
func (noLeadership) Leader() (string, bool) { return "", false }

// MoveSlot begins a slot's move on the meta leader (the edge forwards the
// request there: admin.RouteMeta).
func (s groupsStore) MoveSlot(m admin.SlotMove) (any, error) {
	slot := cluster.SlotOf(m.Account)
	if m.Slot == nil {
		// A mistyped ID would move some other slot: it must name an account.
		if g, err := s.groups.GroupOf(m.Account); err != nil || !s.groups.Accounts(g).Has(m.Account) {
			return nil, &clustererr.NoAccountError{Account: m.Account}
		}
	} else {
		if *m.Slot < 0 || *m.Slot >= cluster.SlotCount {
			return nil, &clustererr.SlotRangeError{Slot: *m.Slot, Count: cluster.SlotCount}
		}
		slot = cluster.Slot(*m.Slot)
	}
	move, err := s.groups.MoveSlot(slot, m.To)
	switch {
	case errors.Is(err, cluster.ErrNoSuchGroup):
		return nil, &clustererr.GroupRangeError{Group: m.To, Count: s.groups.Count()}
	case err != nil:
		return nil, err
	}
	return slotMoveView{Slot: int(slot), Move: move.ID, From: move.From, To: move.To}, nil
}

// slotMoveView is the answer to a slot's move.
type slotMoveView struct {
	Slot int    `json:"slot"`
	Move uint64 `json:"move"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// Drain marks a node as draining, or no longer (the edge forwarded the
// request to the meta leader).
func (s groupsStore) Drain(id string, on bool) error { return s.groups.Drain(id, on) }

// metaLeadership is the meta group's leadership on this node.
type metaLeadership struct{ groups *cluster.Groups }

func (l metaLeadership) Serving() bool {
	leads, _, _ := l.groups.MetaLeader()
	return leads
}
func (l metaLeadership) Leading() bool { return l.Serving() }
func (l metaLeadership) Leader() (string, bool) {
	_, addr, known := l.groups.MetaLeader()
	return addr, known
}

// localLeadership serves a request on this node, whoever leads: one that
// is refused before it needs any group.
type localLeadership struct{}

func (localLeadership) Serving() bool          { return true }
func (localLeadership) Leading() bool          { return true }
func (localLeadership) Leader() (string, bool) { return "", false }
