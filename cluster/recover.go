package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

// A cluster that has lost its quorum for good (most of its voters gone
// with their disks) commits nothing, and no membership change can fix it,
// since a change is itself committed through the quorum. The way out is
// offline: on a stopped survivor, Recover rewrites the configuration
// (raft.RecoverCluster) to voters that can run, and the node starts as
// the leader of that configuration with everything it had.

// RecoverConfig names the stopped node and the configuration it gets.
type RecoverConfig struct {
	DataDir string
	NodeID  string // the node whose data dir this is
	// RaftAddr is the node's raft address; empty means the address the
	// data dir's configuration gives it.
	RaftAddr string
	// Peers are the voters of the recovered cluster, this node among them;
	// run Recover with the same list on each of them. Empty means this
	// node alone.
	Peers  []Peer
	Logger *slog.Logger
}

// RecoverReport says what Recover found and wrote.
type RecoverReport struct {
	DataDir  string         `json:"data_dir"`
	Before   []ServerStatus `json:"before"`
	After    []ServerStatus `json:"after"`
	Index    uint64         `json:"index"` // the last entry the new snapshot holds
	Term     uint64         `json:"term"`
	Accounts int            `json:"accounts"`
}

// ErrNothingToRecover means the data dir holds no raft state.
var ErrNothingToRecover = errors.New("cluster: no raft state to recover")

// Recover replaces the configuration in a stopped node's data dir: it
// applies every entry of the log to the latest snapshot (entries that
// were never committed included, as raft.RecoverCluster does: with the
// other nodes gone, nothing tells which were), writes the result as a new
// snapshot carrying the new configuration, and empties the log. It
// refuses a data dir in use (persistence.ErrInUse), one without raft
// state, and one the start checks refuse.
func Recover(cfg RecoverConfig) (RecoverReport, error) {
	report := RecoverReport{DataDir: cfg.DataDir}
	if err := ValidateNodeID(cfg.NodeID); err != nil {
		return report, err
	}
	if info, err := os.Stat(cfg.DataDir); err != nil {
		return report, fmt.Errorf("cluster: data dir: %w", err)
	} else if !info.IsDir() {
		return report, fmt.Errorf("cluster: data dir %s is not a directory", cfg.DataDir)
	}
	hlog := newRaftLogger(cfg.Logger)
	// The data dir keeps the log store it has; the kind asked for matters
	// only to a data dir with none, which holds nothing to recover.
	stores, err := persistence.OpenStores(cfg.DataDir, persistence.LogWAL, hlog)
	if errors.Is(err, persistence.ErrInUse) {
		return report, fmt.Errorf("cluster: %s: %w; stop the node first", cfg.DataDir, err)
	}
	if err != nil {
		return report, err
	}
	defer stores.Close()
	if has, err := stores.HasState(); err != nil {
		return report, err
	} else if !has {
		return report, fmt.Errorf("%w in %s", ErrNothingToRecover, cfg.DataDir)
	}
	if err := checkStores(stores, false, cfg.Logger); err != nil {
		return report, err
	}
	before, err := latestConfiguration(stores)
	if err != nil {
		return report, err
	}
	after, err := recoveredConfiguration(cfg, before)
	if err != nil {
		return report, err
	}
	for _, s := range before.Servers {
		report.Before = append(report.Before, serverStatus(s, ""))
	}
	for _, s := range after.Servers {
		report.After = append(report.After, serverStatus(s, ""))
	}

	accounts := registry.New(cfg.Logger)
	defer accounts.Shutdown()
	f := &fsm{accounts: accounts, log: cfg.Logger, metrics: newApplyMetrics()}
	self := addressOf(after, cfg.NodeID)
	_, trans := raft.NewInmemTransport(self)
	defer trans.Close()
	if err := recoverCluster(raftConfig(cfg.NodeID, hlog), f, stores, trans, after); err != nil {
		return report, err
	}
	snaps, err := stores.Snapshot.List()
	if err != nil || len(snaps) == 0 {
		return report, fmt.Errorf("cluster: recover: no snapshot after writing one: %v", err)
	}
	report.Index, report.Term, report.Accounts = snaps[0].Index, snaps[0].Term, accounts.Len()
	return report, nil
}

// recoverCluster runs raft.RecoverCluster, turning the panic of an entry
// that does not decode (the FSM stops rather than diverge) into an error.
func recoverCluster(conf *raft.Config, f *fsm, stores *persistence.Stores, trans raft.Transport, servers raft.Configuration) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cluster: recover: %v", r)
		}
	}()
	if err := raft.RecoverCluster(conf, f, stores.Log, stores.Stable, stores.Snapshot, trans, servers); err != nil {
		return fmt.Errorf("cluster: recover: %w", err)
	}
	return nil
}

// recoveredConfiguration is the configuration Recover writes: the peers,
// or this node alone at its address.
func recoveredConfiguration(cfg RecoverConfig, before raft.Configuration) (raft.Configuration, error) {
	var after raft.Configuration
	for _, p := range cfg.Peers {
		after.Servers = append(after.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr), Suffrage: raft.Voter})
	}
	if len(cfg.Peers) > 0 {
		if !slices.ContainsFunc(cfg.Peers, func(p Peer) bool { return p.ID == cfg.NodeID }) {
			return after, fmt.Errorf("%w: the peers do not include this node, %s", ErrInvalidMember, cfg.NodeID)
		}
		if cfg.RaftAddr != "" && addressOf(after, cfg.NodeID) != raft.ServerAddress(cfg.RaftAddr) {
			return after, fmt.Errorf("%w: the peers give %s another raft address than %s", ErrInvalidMember, cfg.NodeID, cfg.RaftAddr)
		}
		return after, nil
	}
	addr := raft.ServerAddress(cfg.RaftAddr)
	if addr == "" {
		addr = addressOf(before, cfg.NodeID)
	}
	if addr == "" {
		var ids []string
		for _, s := range before.Servers {
			ids = append(ids, string(s.ID))
		}
		return after, fmt.Errorf("%w: %s is not in this data dir's configuration (%s): give its raft address", ErrInvalidMember, cfg.NodeID, listOrNone(ids))
	}
	if err := ValidateRaftAddr(string(addr)); err != nil {
		return after, err
	}
	after.Servers = []raft.Server{{ID: raft.ServerID(cfg.NodeID), Address: addr, Suffrage: raft.Voter}}
	return after, nil
}

func addressOf(c raft.Configuration, id string) raft.ServerAddress {
	for _, s := range c.Servers {
		if string(s.ID) == id {
			return s.Address
		}
	}
	return ""
}

// latestConfiguration reads the configuration a node would start with:
// the last configuration entry in the log after the newest snapshot, or
// else that snapshot's.
func latestConfiguration(stores *persistence.Stores) (c raft.Configuration, err error) {
	from := uint64(1)
	snaps, err := stores.Snapshot.List()
	if err != nil {
		return c, err
	}
	if len(snaps) > 0 {
		c, from = snaps[0].Configuration, snaps[0].Index+1
	}
	last, err := stores.Log.LastIndex()
	if err != nil {
		return c, err
	}
	first, err := stores.Log.FirstIndex()
	if err != nil {
		return c, err
	}
	// raft.DecodeConfiguration panics on bytes it cannot decode.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cluster: a configuration entry does not decode: %v", r)
		}
	}()
	for i := max(from, first); i <= last; i++ {
		var entry raft.Log
		if err := stores.Log.GetLog(i, &entry); err != nil {
			return c, fmt.Errorf("cluster: read log entry %d: %w", i, err)
		}
		if entry.Type == raft.LogConfiguration {
			c = raft.DecodeConfiguration(entry.Data)
		}
	}
	return c, nil
}
