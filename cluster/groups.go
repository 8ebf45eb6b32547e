package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/persistence"
)

// A sharded node (SCALE.md, section 4) runs several raft groups, each a
// whole Node with its own FSM, account registry, log and snapshots, over
// one listener for node connections: group 0 on the stream every release
// speaks, the others on streamGroup with their ID. Each account lives in
// exactly one group, found through the meta group's slot directory, and a
// request goes to the node of that group.

// groupsDir holds the stores of every group but group 0, whose stores are
// the data dir's own so that a data dir from before sharding is group 0.
const groupsDir = "groups"

// directoryRetry spaces a meta leader's attempts to write a new cluster's
// directory.
const directoryRetry = 100 * time.Millisecond

// Groups is this node's member of every raft group of a sharded cluster.
type Groups struct {
	cfg      Config
	count    int
	conns    *sharedNet
	meta     *metaGroup
	system   *registry.System     // the account actors of every group
	nodes    []*Node              // by group ID
	accounts []*registry.Registry // by group ID
	done     chan struct{}
	// Bootstrapped is true when this start found a new data dir and wrote
	// the initial configuration of the groups.
	Bootstrapped bool
	// metaRPCs counts the proposals sent to another node's meta leader.
	metaRPCs atomic.Int64
	// holdLeaders, a test's hook, stops this node handing leadership
	// over to balance the leaders (balance.go).
	holdLeaders atomic.Bool
}

// OpenGroups starts this node's member of the meta group and of groups
// data groups, all over one listener on cfg.RaftAddr. A new cluster's
// first meta leader writes the directory dealing the slots out evenly;
// every node of a cluster must be started with the same count.
func OpenGroups(cfg Config, groups int) (*Groups, error) {
	if _, err := NewDirectory(groups); err != nil {
		return nil, err
	}
	if err := checkShardedDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	addr, err := net.ResolveTCPAddr("tcp", cfg.RaftAddr)
	if err != nil {
		return nil, fmt.Errorf("cluster: raft address: %w", err)
	}
	conns, err := listenShared(cfg, addr)
	if err != nil {
		return nil, err
	}
	g := &Groups{cfg: cfg, count: groups, conns: conns, system: registry.NewSystem(cfg.Logger), done: make(chan struct{})}
	go serveVersions(conns.mux.streams[streamVersion])
	if g.meta, err = openMeta(cfg, conns, cfg.Logger); err != nil {
		g.system.Shutdown()
		conns.mux.close()
		return nil, err
	}
	go g.serveMeta(conns.mux.streams[streamMeta])
	go g.serveRestores(conns.mux.streams[streamRestore])
	for id := range groups {
		gc := cfg
		gc.group, gc.shared = uint16(id), conns
		gc.Logger = cfg.Logger.With("group", id)
		if id != 0 {
			gc.DataDir = filepath.Join(cfg.DataDir, groupsDir, strconv.Itoa(id))
		}
		accounts := g.system.NewRegistry(gc.Logger)
		n, err := Open(gc, accounts)
		if err != nil {
			accounts.Shutdown()
			g.Close()
			return nil, fmt.Errorf("cluster: group %d: %w", id, err)
		}
		g.nodes, g.accounts = append(g.nodes, n), append(g.accounts, accounts)
	}
	g.Bootstrapped = g.nodes[0].Bootstrapped
	go g.writeDirectory()
	go g.balanceLeaders()
	go g.driveMoves()
	go g.promoteMetaVoters()
	return g, nil
}

// metaDir is where a sharded node keeps its meta group's stores; its
// presence marks a data dir as a sharded node's.
func metaDir(dataDir string) string { return filepath.Join(dataDir, groupsDir, "meta") }

// isSharded reports whether dataDir is a sharded node's.
func isSharded(dataDir string) bool {
	_, err := os.Stat(metaDir(dataDir))
	return err == nil
}

// checkShardedDataDir refuses to shard a data dir that already holds an
// unsharded cluster's log: its accounts are all in group 0, and the
// directory would send most of them elsewhere. Sharding is for new
// clusters until slots can move.
func checkShardedDataDir(dataDir string) error {
	if isSharded(dataDir) {
		return nil
	}
	for _, name := range []string{persistence.WALDir, persistence.BoltFile} {
		if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
			return fmt.Errorf("cluster: %s holds a cluster of one group; --groups starts a new cluster only (its accounts would not be where the slot directory puts them)", dataDir)
		}
	}
	return nil
}

// writeDirectory gives a new cluster its directory: whichever node leads
// the meta group first proposes it, and the first to commit wins.
func (g *Groups) writeDirectory() {
	t := time.NewTicker(directoryRetry)
	defer t.Stop()
	for {
		if _, known := g.meta.directory(); known {
			return
		}
		if g.meta.raft.State() == raft.Leader {
			d, _ := NewDirectory(g.count) // checked by OpenGroups
			err := g.meta.propose(metaCommand{Op: "directory", Directory: &d})
			if err != nil && !errors.Is(err, errDirectorySet) {
				g.cfg.Logger.Warn("could not write the slot directory; retrying", "err", err)
			}
		}
		select {
		case <-t.C:
		case <-g.done:
			return
		}
	}
}

// Directory is the slot directory as this node has applied it; false
// before the meta group has committed one.
func (g *Groups) Directory() (Directory, bool) { return g.meta.directory() }

// GroupOf is the group that holds account. A directory of another group
// count than this node was started with is an error: the node would
// route to groups it does not run.
func (g *Groups) GroupOf(account string) (int, error) {
	d, err := g.routingDirectory()
	if err != nil {
		return 0, err
	}
	return int(d.Slots[SlotOf(account)]), nil
}

// routingDirectory is the applied directory, when this node can route by
// it.
func (g *Groups) routingDirectory() (Directory, error) {
	d, known := g.meta.directory()
	if !known {
		return d, ErrNoDirectory
	}
	if d.Groups != g.count {
		return d, fmt.Errorf("cluster: the cluster has %d groups but this node was started with %d", d.Groups, g.count)
	}
	return d, nil
}

// Group is this node's member of group id.
func (g *Groups) Group(id int) *Node { return g.nodes[id] }

// Accounts is the account registry of group id on this node.
func (g *Groups) Accounts(id int) *registry.Registry { return g.accounts[id] }

// Count is the number of data groups.
func (g *Groups) Count() int { return g.count }

// nodeOf is this node's member of account's group. While the account's
// slot is moving out of that group, or has not finished arriving, the
// group serves it no more: clustererr.ErrSlotAway, which the client retries.
func (g *Groups) nodeOf(account string) (*Node, error) {
	d, err := g.routingDirectory()
	if err != nil {
		return nil, err
	}
	s := SlotOf(account)
	if _, moving := d.Moves[s]; moving {
		return nil, clustererr.ErrSlotAway
	}
	n := g.nodes[d.Slots[s]]
	if n.fsm.slotsMoved.Load() && n.fsm.slots.away(s) {
		return nil, clustererr.ErrSlotAway
	}
	return n, nil
}

// Serves reports whether this node serves account now: it leads the
// account's group, and the account's slot is not moving.
func (g *Groups) Serves(account string) bool {
	n, err := g.nodeOf(account)
	return err == nil && n.Serving()
}

// Propose replicates cmd through its account's group, as Node.Propose:
// ErrNotLeader means this node does not lead that group and nothing
// entered any log. A command that sets a login, or deletes an account,
// also keeps the meta group's table of logins (logins_flow.go).
func (g *Groups) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	res, err := g.propose(ctx, cmd)
	return res, groupMoved(err)
}

func (g *Groups) propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	n, err := g.nodeOf(cmd.Account)
	if err != nil {
		return actors.Result{}, err
	}
	if login, sets := loginOf(cmd); sets {
		return g.proposeLogin(ctx, n, cmd, login)
	}
	res, err := n.Propose(ctx, cmd)
	if _, deletes := cmd.Payload.(*actors.DeleteAccount); deletes && err == nil {
		g.settleLogins(ctx, cmd.Account, "")
	}
	return res, err
}

// groupMoved says not-the-leader the way a sharded node means it: the
// request reached a node that does not lead its account's group (any
// more), or no node leads it yet, and nothing was written.
func groupMoved(err error) error {
	if errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoDirectory) {
		return clustererr.ErrGroupMoved
	}
	return err
}

// Query reads the credential's account from its group's leader, as
// Node.Query.
func (g *Groups) Query(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error) {
	n, err := g.nodeOf(cred.AccountID)
	if err != nil {
		return actors.Result{}, groupMoved(err)
	}
	res, err := n.Query(ctx, cred, q)
	return res, groupMoved(err)
}

// QueryLinearizable is Query after the group's leader has confirmed with
// a quorum of that group that it still leads.
func (g *Groups) QueryLinearizable(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error) {
	n, err := g.nodeOf(cred.AccountID)
	if err != nil {
		return actors.Result{}, groupMoved(err)
	}
	res, err := n.QueryLinearizable(ctx, cred, q)
	return res, groupMoved(err)
}

// Leader is the raft address of the node leading account's group when
// another node does, as Node.Leader.
func (g *Groups) Leader(account string) (string, bool) {
	n, err := g.nodeOf(account)
	if err != nil {
		return "", false
	}
	return n.Leader()
}

// AccountForLogin finds login's account from the meta group's table of
// logins, asked of its leader: a node's own replicas of the groups may
// not have applied an account that has just taken its login. Without a
// meta leader it falls back on this node's replicas.
func (g *Groups) AccountForLogin(login string) (string, bool) {
	if actors.ValidateLogin(login) != nil {
		return "", false
	}
	held, found, err := g.loginHolder(actors.FoldLogin(login))
	if err == nil {
		return held.Account, found
	}
	return g.localAccountForLogin(login)
}

// localAccountForLogin finds login's account in this node's replicas.
func (g *Groups) localAccountForLogin(login string) (string, bool) {
	for _, accounts := range g.accounts {
		if id, found := accounts.AccountForLogin(login); found {
			return id, true
		}
	}
	return "", false
}

// Ready reports whether every group, the meta group included, has a
// serving leader that this node has caught up with, and the directory is
// known: only then can this node route any request.
func (g *Groups) Ready() bool {
	if _, known := g.meta.directory(); !known {
		return false
	}
	if addr, _ := g.meta.raft.LeaderWithID(); addr == "" {
		return false
	}
	for _, n := range g.nodes {
		if !n.Ready() {
			return false
		}
	}
	return true
}

// WaitForReady waits until Ready or ctx ends.
func (g *Groups) WaitForReady(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !g.Ready() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Snapshot takes a snapshot of every group on this node now.
func (g *Groups) Snapshot() error {
	var errs []error
	for id, n := range g.nodes {
		if err := n.Snapshot(); err != nil {
			errs = append(errs, fmt.Errorf("group %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// GroupStatus is one data group as this node sees it.
type GroupStatus struct {
	Group int `json:"group"`
	// Slots is how many slots the directory gives the group.
	Slots int `json:"slots"`
	Status
}

// MetaStatus is the meta group as this node sees it.
type MetaStatus struct {
	State        string `json:"state"`
	Leader       string `json:"leader"`
	AppliedIndex uint64 `json:"applied_index"`
	Term         uint64 `json:"term"`
	// Groups is the directory's group count; 0 before it is written.
	Groups int `json:"groups"`
	// Moves are the slots moving between groups now.
	Moves map[Slot]Move `json:"moves,omitempty"`
	// Nodes are the meta group's members.
	Nodes []ServerStatus `json:"nodes"`
	// Draining are the nodes handing over every group they lead.
	Draining []string `json:"draining,omitempty"`
}

// GroupsStatus is every group of a sharded cluster as this node sees it.
type GroupsStatus struct {
	NodeID string        `json:"node_id"`
	Meta   MetaStatus    `json:"meta"`
	Groups []GroupStatus `json:"groups"`
}

// Status reports the meta group and every data group.
func (g *Groups) Status() (GroupsStatus, error) {
	_, leader := g.meta.raft.LeaderWithID()
	s := GroupsStatus{NodeID: g.cfg.NodeID, Meta: MetaStatus{
		State:        strings.ToLower(g.meta.raft.State().String()),
		Leader:       string(leader),
		AppliedIndex: g.meta.raft.AppliedIndex(),
		Term:         g.meta.raft.CurrentTerm(),
	}}
	if future := g.meta.raft.GetConfiguration(); future.Error() == nil {
		for _, srv := range future.Configuration().Servers {
			s.Meta.Nodes = append(s.Meta.Nodes, serverStatus(srv, leader))
		}
	}
	d, known := g.meta.directory()
	var counts []int
	if known {
		s.Meta.Groups, s.Meta.Moves, s.Meta.Draining, counts = d.Groups, d.Moves, d.Draining, d.Counts()
	}
	for id, n := range g.nodes {
		st, err := n.Status()
		if err != nil {
			return s, fmt.Errorf("cluster: group %d: %w", id, err)
		}
		gs := GroupStatus{Group: id, Status: st}
		if id < len(counts) {
			gs.Slots = counts[id]
		}
		s.Groups = append(s.Groups, gs)
	}
	return s, nil
}

// Close stops every group, then the listener they share.
func (g *Groups) Close() error {
	close(g.done)
	var errs []error
	for id, n := range g.nodes {
		if err := n.Close(); err != nil {
			errs = append(errs, fmt.Errorf("group %d: %w", id, err))
		}
		g.accounts[id].Shutdown()
	}
	if g.meta != nil {
		if err := g.meta.close(); err != nil {
			errs = append(errs, fmt.Errorf("meta group: %w", err))
		}
	}
	g.system.Shutdown()
	g.conns.mux.close()
	return errors.Join(errs...)
}

// AccountIDs lists the accounts of every group on this node, group by
// group, each group's in ID order.
func (g *Groups) AccountIDs() []string {
	var ids []string
	for _, r := range g.accounts {
		ids = append(ids, r.IDs(func(string) bool { return true })...)
	}
	return ids
}

// ServesAny reports whether this node leads and serves any data group:
// the chain follower then has accounts to follow.
func (g *Groups) ServesAny() bool {
	for _, n := range g.nodes {
		if n.Serving() {
			return true
		}
	}
	return false
}
