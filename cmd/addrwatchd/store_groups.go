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

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/httpd"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// groupsStore adapts a sharded node (--groups, cluster.Groups) to the
// httpd interfaces: every account's requests go to its group, and the
// edge forwards each request to the leader of its account's group
// (forward.ShardedCluster).
type groupsStore struct{ groups *cluster.Groups }

var (
	_ httpd.Store            = groupsStore{}
	_ httpd.Operator         = groupsStore{}
	_ forward.ShardedCluster = groupsStore{}
	_ httpd.AccountPlacement = groupsStore{}
	_ httpd.SlotMover        = groupsStore{}
	_ httpd.GroupTransferer  = groupsStore{}
	_ httpd.Drainer          = groupsStore{}
)

func (s groupsStore) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	res, err := s.groups.Propose(ctx, cmd)
	return res, groupMoved(translate(err))
}

func (s groupsStore) Query(ctx context.Context, cred actors.Credential, q actors.Query, rc httpd.ReadConsistency) (actors.Result, error) {
	res, err := query(s.groups, ctx, cred, q, rc)
	return res, groupMoved(err)
}

// errGroupMoved is a request that reached a node which, by the time it
// got there, no longer leads the account's group: the group elected
// another leader, or the account's slot flipped to another group and this
// node's directory flipped before the forwarding node's did. Nothing was
// written; the next try goes where the account now is.
var errGroupMoved = &actors.Error{Code: actors.CodeHTTPError, RetryAfter: 1,
	Message: "this account's raft group is now led elsewhere, or the account has just moved to another group; retry in a second"}

// groupMoved says not-the-leader the way a sharded node means it.
func groupMoved(err error) error {
	if errors.Is(err, httpd.ErrNotLeader) {
		return errGroupMoved
	}
	return err
}

func (s groupsStore) AccountForLogin(login string) (string, bool) {
	return s.groups.AccountForLogin(login)
}

func (s groupsStore) Status() (any, error) { return s.groups.Status() }
func (s groupsStore) Snapshot() error      { return translate(s.groups.Snapshot()) }
func (s groupsStore) Ready() bool          { return s.groups.Ready() }

// AddNode adds a node to every group (the edge forwarded the request to
// the meta group's leader).
func (s groupsStore) AddNode(id, raftAddr string) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), membershipTimeout)
	defer cancel()
	added, err := s.groups.AddNode(ctx, id, raftAddr)
	return added, translate(err)
}

// RemoveServer removes a node from every group.
func (s groupsStore) RemoveServer(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), membershipTimeout)
	defer cancel()
	return translate(s.groups.RemoveServer(ctx, id))
}

// membershipTimeout bounds a membership change across every group.
const membershipTimeout = time.Minute

func (s groupsStore) TransferLeadership(string) error {
	return actors.Errorf(actors.CodeValidation, `a sharded cluster (--groups) hands over one group's leadership at a time: send {"group": N}`)
}

// TransferGroupLeadership hands group's leadership to the voter id (any
// when empty); the edge forwarded the request to that group's leader.
func (s groupsStore) TransferGroupLeadership(group int, id string) error {
	if group < 0 || group >= s.groups.Count() {
		return actors.Errorf(actors.CodeValidation, "there is no group %d: groups are numbered from 0 to %d", group, s.groups.Count()-1)
	}
	return translate(s.groups.Group(group).TransferLeadership(id))
}

// Backup writes one file of every group's accounts, which restores into
// a new cluster of one group; refused while a slot moves.
func (s groupsStore) Backup(w io.Writer) error {
	err := s.groups.Backup(w)
	if errors.Is(err, cluster.ErrSlotMoving) {
		return actors.Errorf(actors.CodeConflict, "%v", err)
	}
	return translate(err)
}

// Restore restores a backup into every group (the edge forwarded the
// request to the meta leader).
func (s groupsStore) Restore(path string) error {
	err := s.groups.RestoreFile(path)
	if errors.Is(err, cluster.ErrSlotMoving) {
		return actors.Errorf(actors.CodeConflict, "%v", err)
	}
	return translate(err)
}

// For is the leadership of account's group; "" gets a group at random.
func (s groupsStore) For(account string) forward.Leadership {
	if account == httpd.RouteMeta {
		return metaLeadership(s)
	}
	if g, isGroup := httpd.ParseRouteGroup(account); isGroup {
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
// request there: httpd.RouteMeta).
func (s groupsStore) MoveSlot(m httpd.SlotMove) (any, error) {
	slot := cluster.SlotOf(m.Account)
	if m.Slot == nil {
		// A mistyped ID would move some other slot: it must name an account.
		if g, err := s.groups.GroupOf(m.Account); err != nil || !s.groups.Accounts(g).Has(m.Account) {
			return nil, actors.Errorf(actors.CodeNotFound, "no account %q in this cluster", m.Account)
		}
	} else {
		if *m.Slot < 0 || *m.Slot >= cluster.SlotCount {
			return nil, actors.Errorf(actors.CodeValidation, "slot must be from 0 to %d", cluster.SlotCount-1)
		}
		slot = cluster.Slot(*m.Slot)
	}
	move, err := s.groups.MoveSlot(slot, m.To)
	switch {
	case errors.Is(err, cluster.ErrNoSuchGroup):
		return nil, actors.Errorf(actors.CodeValidation, "there is no group %d: groups are numbered from 0 to %d", m.To, s.groups.Count()-1)
	case errors.Is(err, cluster.ErrSlotAtTarget), errors.Is(err, cluster.ErrSlotMoving):
		return nil, actors.Errorf(actors.CodeConflict, "%v", err)
	case err != nil:
		return nil, translate(err)
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
func (s groupsStore) Drain(id string, on bool) error { return translate(s.groups.Drain(id, on)) }

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
