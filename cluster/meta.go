package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/cluster/clustererr"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/persistence"
)

// The meta group of a sharded cluster keeps the slot directory (SCALE.md,
// "Placement"). Every node is a voter, like CockroachDB's meta range, so
// every node has the directory applied locally and routes without asking
// anyone. It is a raft group of its own, apart from the data groups,
// because its state is the cluster's and not any account's: it has its
// own small FSM, log and snapshots under data/groups/meta.

// metaGroupID is the meta group's raft stream. Data groups count up from
// 0, far below it.
const metaGroupID uint16 = 0xFFFF

// metaApplyTimeout bounds one meta command's commit.
const metaApplyTimeout = 10 * time.Second

// metaCommand is one entry of the meta group's log, in JSON: the directory
// changes rarely and is small, so it favours readable over compact.
type metaCommand struct {
	// Op "directory" sets the directory of a new cluster; it applies only
	// while there is none, so the first one committed wins. "move" begins
	// moving Slot to group To; "flip" ends move Move of Slot, which then
	// belongs to the move's destination (slotmove.go).
	Op        string     `json:"op"`
	Directory *Directory `json:"directory,omitempty"`
	Slot      Slot       `json:"slot,omitempty"`
	To        int        `json:"to,omitempty"`
	Move      uint64     `json:"move,omitempty"`
	// The logins' ops (meta_logins.go): "reserve_login", "release_login"
	// and "settle_logins".
	Login   string `json:"login,omitempty"`   // folded
	Account string `json:"account,omitempty"` // the account it is for
	At      int64  `json:"at,omitempty"`      // the proposing node's clock
	Steal   string `json:"steal,omitempty"`   // the stale holder a reserve takes over from
	// Group is the data group of a "commit_index" question or of an
	// "add_member" or "remove_member" change of node NodeID (at RaftAddr),
	// which are asked of that group's leader and never enter this log
	// (meta_rpc.go, groups_membership.go).
	Group    int    `json:"group,omitempty"`
	NodeID   string `json:"node_id,omitempty"`
	RaftAddr string `json:"raft_addr,omitempty"`
	// Logins is the whole table of a "reset_logins" (a restore's).
	Logins map[string]loginReservation `json:"logins,omitempty"`
}

// metaFSM applies the meta group's log.
type metaFSM struct {
	dir    atomic.Pointer[Directory] // nil until the first directory applies
	logins loginTable                // meta_logins.go
}

var _ raft.FSM = (*metaFSM)(nil)

// errDirectorySet answers a directory command once one has applied.
var errDirectorySet = errors.New("cluster: the directory is already set")

// Apply applies one meta command. Like the data groups' FSM, it panics on
// an entry it cannot decode rather than diverge from its peers.
func (f *metaFSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	var c metaCommand
	if err := json.Unmarshal(l.Data, &c); err != nil {
		panic(fmt.Sprintf("cluster: meta log entry %d does not decode, stopping rather than diverge: %v", l.Index, err))
	}
	switch c.Op {
	case "directory":
		if f.dir.Load() != nil {
			return errDirectorySet
		}
		if c.Directory == nil {
			return errors.New("cluster: a directory command without a directory")
		}
		if err := c.Directory.check(); err != nil {
			return err
		}
		d := c.Directory.clone()
		f.dir.Store(&d)
		return nil
	case "move":
		return f.beginMove(c.Slot, c.To, l.Index)
	case "flip":
		return f.flip(c.Slot, c.Move)
	case "reserve_login", "release_login", "settle_logins":
		return f.logins.apply(c)
	case "reset_logins":
		f.logins.restore(c.Logins)
		return nil
	case "drain", "undrain":
		return f.drain(c.NodeID, c.Op == "drain")
	}
	panic(fmt.Sprintf("cluster: meta log entry %d has op %q, stopping rather than diverge", l.Index, c.Op))
}

// Errors a move's meta commands answer; they change nothing. The first
// three are the caller's to see (Groups.MoveSlot).
var (
	ErrNoSuchGroup  = clustererr.ErrNoSuchGroup
	ErrSlotAtTarget = clustererr.ErrSlotAtTarget
	ErrSlotMoving   = clustererr.ErrSlotMoving
	errMoveGone     = errors.New("cluster: that move is no longer under way")
)

// beginMove records that slot s moves to group to, as move id.
func (f *metaFSM) beginMove(s Slot, to int, id uint64) error {
	cur := f.dir.Load()
	switch {
	case cur == nil:
		return ErrNoDirectory
	case int(s) >= SlotCount || to < 0 || to >= cur.Groups:
		return ErrNoSuchGroup
	case int(cur.Slots[s]) == to:
		return ErrSlotAtTarget
	}
	if _, moving := cur.Moves[s]; moving {
		return ErrSlotMoving
	}
	d := cur.clone()
	if d.Moves == nil {
		d.Moves = map[Slot]Move{}
	}
	d.Moves[s] = Move{ID: id, From: int(cur.Slots[s]), To: to}
	f.dir.Store(&d)
	return nil
}

// flip ends move id of slot s: the slot is its destination's from now on.
func (f *metaFSM) flip(s Slot, id uint64) error {
	cur := f.dir.Load()
	if cur == nil {
		return ErrNoDirectory
	}
	m, moving := cur.Moves[s]
	if !moving || m.ID != id {
		return errMoveGone
	}
	d := cur.clone()
	d.Slots[s] = uint16(m.To)
	delete(d.Moves, s)
	f.dir.Store(&d)
	return nil
}

// drain adds the node id to the directory's draining nodes, or takes it
// out.
func (f *metaFSM) drain(id string, on bool) error {
	cur := f.dir.Load()
	if cur == nil {
		return ErrNoDirectory
	}
	d := cur.clone()
	i, found := slices.BinarySearch(d.Draining, id)
	switch {
	case on && !found:
		d.Draining = slices.Insert(d.Draining, i, id)
	case !on && found:
		d.Draining = slices.Delete(d.Draining, i, i+1)
	default:
		return nil
	}
	f.dir.Store(&d)
	return nil
}

// metaSnapshot is the meta group's whole state.
type metaSnapshot struct {
	Directory *Directory                  `json:"directory"`
	Logins    map[string]loginReservation `json:"logins,omitempty"`
}

func (f *metaFSM) Snapshot() (raft.FSMSnapshot, error) {
	return metaSnapshot{Directory: f.dir.Load(), Logins: f.logins.copy()}, nil
}

func (f *metaFSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	var s metaSnapshot
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return fmt.Errorf("cluster: meta snapshot: %w", err)
	}
	if s.Directory != nil {
		if err := s.Directory.check(); err != nil {
			return fmt.Errorf("cluster: meta snapshot: %w", err)
		}
	}
	f.dir.Store(s.Directory)
	f.logins.restore(s.Logins)
	return nil
}

func (s metaSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (metaSnapshot) Release() {}

// metaGroup is this node's member of the meta group.
type metaGroup struct {
	raft      *raft.Raft
	fsm       *metaFSM
	stores    *persistence.Stores
	transport *raft.NetworkTransport
	// heartbeats, closed after raft's Shutdown, keeps raft's heartbeat
	// handler from reaching the stores once they close (heartbeats.go).
	heartbeats *heartbeatGate
	log        *slog.Logger
	done       chan struct{} // closed by close: stops recordReach
}

// openMeta starts this node's meta group member under root/groups/meta,
// bootstrapping it with the same voters as the data groups on a new data
// dir.
func openMeta(cfg Config, conns *sharedNet, log *slog.Logger) (*metaGroup, error) {
	hlog := newRaftLogger(log.With("group", "meta"))
	stores, err := openCheckedStores(metaDir(cfg.DataDir), persistence.Options{Want: persistence.LogWAL, Logger: hlog, CheckEntry: decodesAsMetaEntry},
		cfg.RecoverFromSnapshot, log)
	if err != nil {
		return nil, err
	}
	existing, err := stores.HasState()
	if err != nil {
		stores.Close()
		return nil, fmt.Errorf("cluster: read the meta group's raft state: %w", err)
	}
	transport := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  raftLayer{streamListener: conns.mux.group(metaGroupID), dialer: conns.dialer, group: metaGroupID},
		MaxPool: transportPool, MaxRPCsInFlight: transportRPCsInFlight, Timeout: transportTimeout, Logger: hlog,
	})
	f := &metaFSM{}
	heartbeats := &heartbeatGate{}
	r, err := raft.NewRaft(raftConfig(cfg.NodeID, hlog), f, stores.Log, stores.Stable, stores.Snapshot, gatedTransport{transport, heartbeats})
	if err != nil {
		transport.Close()
		stores.Close()
		return nil, fmt.Errorf("cluster: start the meta group: %w", err)
	}
	m := &metaGroup{raft: r, fsm: f, stores: stores, transport: transport, heartbeats: heartbeats, log: log, done: make(chan struct{})}
	if !existing && !cfg.Join {
		if err := bootstrapRecorded(r, stores, initialServers(cfg, transport.LocalAddr()), " the meta group"); err != nil {
			m.close()
			return nil, err
		}
	}
	go recordReach(r, stores, m.done, log)
	return m, nil
}

// directory is the applied directory, or false before one has applied.
func (m *metaGroup) directory() (Directory, bool) {
	d := m.fsm.dir.Load()
	if d == nil {
		return Directory{}, false
	}
	return *d, true
}

// propose commits c through the meta group; only its leader can.
func (m *metaGroup) propose(c metaCommand) error {
	_, err := m.apply(c)
	return err
}

// apply commits c through the meta group and returns its answer; an
// answer that is an error is returned as the error.
func (m *metaGroup) apply(c metaCommand) (any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	f := m.raft.Apply(b, metaApplyTimeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return nil, ErrNotLeader
		}
		return nil, err
	}
	if err, isErr := f.Response().(error); isErr {
		return nil, err
	}
	return f.Response(), nil
}

func (m *metaGroup) close() error {
	close(m.done)
	err := m.raft.Shutdown().Error()
	m.heartbeats.close()
	raiseReach(m.raft.AppliedIndex(), m.stores, m.log)
	m.transport.Close()
	if cerr := m.stores.Close(); err == nil {
		err = cerr
	}
	return err
}
