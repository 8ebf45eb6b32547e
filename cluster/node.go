package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

const (
	// queryTimeout bounds one read inside an account actor.
	queryTimeout = 5 * time.Second
	// transportTimeout bounds one raft RPC.
	transportTimeout = 10 * time.Second
	// transportPool is the number of pooled connections per peer.
	transportPool = 3
	// transportRPCsInFlight turns off hashicorp/raft's pipelined
	// replication, which can wedge for good (hashicorp/raft#612): when a
	// follower refuses an append (a failed disk write) or answers with a
	// newer term (after a leadership transfer or an election), the
	// pipeline's decoder stops, and the sender may send once more and
	// then wait forever to hand that request to the decoder of a
	// connection nobody reads. Heartbeats go on, so the follower never
	// calls an election, yet it receives no entry again, and the leader's
	// Shutdown waits for the sender forever. With one RPC in flight raft
	// replicates with plain AppendEntries calls, which check for a stop
	// between calls. The proposer keeps one entry in flight (DESIGN.md,
	// the write path), so a pipeline had little to overlap: with it off
	// BenchmarkShardedDurableWrites did as many writes at the same CPU.
	transportRPCsInFlight = 1
	// barrierTimeout bounds a new leader's wait for its log to apply.
	barrierTimeout = 5 * time.Minute
)

// Peer is one voter of the initial cluster.
type Peer struct {
	ID       string
	RaftAddr string
}

// ParsePeers parses "id=raftaddr,id=raftaddr"; empty means a one-node
// cluster. Each id and address must pass ValidateNodeID and
// ValidateRaftAddr, and no two peers may share either.
func ParsePeers(s string) ([]Peer, error) {
	var peers []Peer
	ids, addrs := map[string]bool{}, map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, addr, found := strings.Cut(part, "=")
		if !found || id == "" || addr == "" {
			return nil, fmt.Errorf("peer %q is not id=raftaddr", part)
		}
		if err := ValidateNodeID(id); err != nil {
			return nil, fmt.Errorf("peer %q: %w", part, err)
		}
		if err := ValidateRaftAddr(addr); err != nil {
			return nil, fmt.Errorf("peer %q: %w", part, err)
		}
		if ids[id] || addrs[addr] {
			return nil, fmt.Errorf("peer %q: another peer has the same id or address", part)
		}
		ids[id], addrs[addr] = true, true
		peers = append(peers, Peer{ID: id, RaftAddr: addr})
	}
	return peers, nil
}

// Config is what a node needs to start.
type Config struct {
	NodeID   string
	RaftAddr string
	DataDir  string
	Peers    []Peer // empty: bootstrap a one-voter cluster of this node
	Logger   *slog.Logger
	// TLS makes every node connection mutual TLS with the cluster CA. A
	// node without it opens only with Insecure.
	TLS *NodeTLS
	// Insecure, with no TLS, runs node connections over plain TCP
	// (--insecure-cluster): whoever reaches RaftAddr is taken for a node,
	// so a restore between groups (streamRestore) is not served at all.
	Insecure bool
	// Dial, when set, opens the TCP connection under every connection this
	// node makes to another (raft's and forwarded requests'), so a test can
	// put a proxy between each pair of nodes. nil dials directly.
	Dial DialFunc
	// Join starts a new node that waits to be added to a running cluster
	// (POST /admin/v1/cluster/nodes on its leader) instead of bootstrapping
	// one of its own; the leader then sends it a snapshot and the log.
	Join bool
	// RecoverFromSnapshot lets a node whose log and stable store are
	// missing or empty start from its newest snapshot, losing the writes
	// after it, instead of refusing to start (see checkStores).
	RecoverFromSnapshot bool
	// RaftLog is the log store of a new data dir (--raft-log); a data dir
	// keeps the one it has. Empty means the WAL.
	RaftLog persistence.LogStore
	// group is the raft group this node runs, in a sharded node (Groups);
	// 0 is the first group, a cluster's only one without --groups.
	group uint16
	// shared, set by Groups, is the node connections all of a sharded
	// node's groups use; Close leaves them open. nil: the node has its own.
	shared *sharedNet
	// underVerifier, a test's hook, wraps the log store beneath the log
	// verifier (verify.go), e.g. to damage what one node stores.
	underVerifier func(raft.LogStore) raft.LogStore
}

// Node is one raft member with the account actors behind its FSM.
type Node struct {
	raft      *raft.Raft
	fsm       *fsm
	stores    *persistence.Stores
	transport *raft.NetworkTransport
	// heartbeats, closed after raft's Shutdown, keeps raft's heartbeat
	// handler from reaching the stores once they close (heartbeats.go).
	heartbeats *heartbeatGate
	nodes      *nodeMux
	dialer     *nodeDialer
	proposer   *proposer
	accounts   *registry.Registry
	metrics    *applyMetrics
	verify     *logVerification
	log        *slog.Logger
	cfg        Config
	// Bootstrapped is true when this start found an empty data dir and
	// wrote the initial cluster configuration.
	Bootstrapped bool

	// leaderReady is true while this node leads and has applied every
	// entry committed before its term: only then may it answer reads and
	// accept writes (a fresh leader may still be replaying its log).
	leaderReady atomic.Bool
	// gained counts the times leaderReady turned true: a reader that
	// saw this node lead, and sees it lead again, learns from it that
	// another leader may have written between (LeadershipsGained).
	gained atomic.Uint64
	// transfers counts the leadership transfers this leader is making: a
	// leader handing over serves nothing meanwhile (operations.go).
	transfers atomic.Int32
	leaderCh  chan bool
	done      chan struct{}
	check     *leaderCheck
	contacts  *peerContacts  // which peers answer this node while it leads
	versions  *voterVersions // what this node, leading, knows of its voters' feature versions
}

// Open starts the node: opens the stores, restores the latest snapshot and
// replays the log, and bootstraps the cluster when the data dir is new.
func Open(cfg Config, accounts *registry.Registry) (*Node, error) {
	hlog := newRaftLogger(cfg.Logger)
	if cfg.RaftLog == "" {
		cfg.RaftLog = persistence.LogWAL
	}
	if cfg.shared == nil && isSharded(cfg.DataDir) {
		return nil, fmt.Errorf("cluster: %s is a node of a sharded cluster; start it with the --groups it was made with", cfg.DataDir)
	}
	stores, err := openCheckedStores(cfg.DataDir, persistence.Options{Want: cfg.RaftLog, Logger: hlog, CheckEntry: decodesAsEntry},
		cfg.RecoverFromSnapshot, cfg.Logger)
	if err != nil {
		return nil, err
	}
	existing, err := stores.HasState()
	if err != nil {
		stores.Close()
		return nil, fmt.Errorf("cluster: read raft state: %w", err)
	}
	addr, err := net.ResolveTCPAddr("tcp", cfg.RaftAddr)
	if err != nil {
		stores.Close()
		return nil, fmt.Errorf("cluster: raft address: %w", err)
	}
	if addr.IP == nil || addr.IP.IsUnspecified() {
		// Other nodes would be told to dial "0.0.0.0".
		stores.Close()
		return nil, fmt.Errorf("cluster: raft address %s names no host other nodes can dial", cfg.RaftAddr)
	}
	conns := cfg.shared
	if conns == nil {
		if conns, err = listenShared(cfg, addr); err != nil {
			stores.Close()
			return nil, err
		}
	}
	nodes, dialer := conns.mux, conns.dialer
	raftStream := nodes.streams[streamRaft]
	if cfg.group != 0 {
		raftStream = nodes.group(cfg.group)
	}
	transport := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: raftLayer{streamListener: raftStream, dialer: dialer, group: cfg.group}, MaxPool: transportPool, MaxRPCsInFlight: transportRPCsInFlight,
		Timeout: transportTimeout, Logger: hlog,
	})
	metrics := newApplyMetrics()
	f := &fsm{accounts: accounts, log: cfg.Logger, metrics: metrics}
	rc := raftConfig(cfg.NodeID, hlog)
	leaderCh := make(chan bool, 16)
	rc.NotifyCh = leaderCh
	contacts := newPeerContacts()
	verify := &logVerification{log: cfg.Logger}
	heartbeats := &heartbeatGate{}
	err = stores.WrapLog(func(raw raft.LogStore) raft.LogStore { return verify.wrap(raw, cfg.underVerifier) })
	var r *raft.Raft
	if err == nil {
		r, err = raft.NewRaft(rc, f, stores.Log, stores.Stable, stores.Snapshot, contacts.watch(gatedTransport{transport, heartbeats}))
	}
	if err != nil {
		verify.close()
		transport.Close()
		if cfg.shared == nil {
			nodes.close()
		}
		stores.Close()
		return nil, fmt.Errorf("cluster: start raft: %w", err)
	}
	n := &Node{raft: r, fsm: f, stores: stores, transport: transport, heartbeats: heartbeats, nodes: nodes, dialer: dialer, accounts: accounts, metrics: metrics, verify: verify, log: cfg.Logger, cfg: cfg,
		leaderCh: leaderCh, done: make(chan struct{}), check: &leaderCheck{raft: r}, contacts: contacts, versions: newVoterVersions()}
	if cfg.shared == nil {
		go serveVersions(nodes.streams[streamVersion])
	}
	go n.pollVersions()
	go n.watchLeadership()
	go n.writeCheckpoints()
	go n.promoteCaughtUp()
	if !existing && !cfg.Join {
		if err := n.bootstrap(); err != nil {
			n.Close()
			return nil, err
		}
		n.Bootstrapped = true
	}
	go recordReach(r, stores, n.done, cfg.Logger)
	n.proposer = newProposer(r, metrics)
	return n, nil
}

func raftConfig(nodeID string, logger hclog.Logger) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = raft.ServerID(nodeID)
	c.Logger = logger
	c.BatchApplyCh = true
	c.MaxAppendEntries = 512
	// Loopback and LAN clusters: a leader failure should cost about a
	// second, not the WAN-friendly defaults.
	c.HeartbeatTimeout = 500 * time.Millisecond
	c.ElectionTimeout = 500 * time.Millisecond
	c.LeaderLeaseTimeout = 250 * time.Millisecond
	c.CommitTimeout = 20 * time.Millisecond
	return c
}

// bootstrap writes the initial configuration on a new data dir: this node
// alone, or every peer of --peers (the same list on every node).
func (n *Node) bootstrap() error {
	return bootstrapRecorded(n.raft, n.stores, initialServers(n.cfg, n.transport.LocalAddr()), "")
}

// bootstrapRecorded writes a new group's initial configuration, then
// records in the data dir that it holds raft state (persistence's
// record): from then on a missing log is a refusal, not a new node.
func bootstrapRecorded(r *raft.Raft, stores *persistence.Stores, servers []raft.Server, which string) error {
	err := r.BootstrapCluster(raft.Configuration{Servers: servers}).Error()
	if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return fmt.Errorf("cluster: bootstrap%s: %w", which, err)
	}
	last, err := stores.Log.LastIndex()
	if err != nil {
		return fmt.Errorf("cluster: bootstrap%s: %w", which, err)
	}
	// The configuration entry: the same on every node of --peers, so no
	// leader ever replaces it.
	if err := stores.RaiseReach(max(last, 1)); err != nil {
		return fmt.Errorf("cluster: bootstrap%s: %w", which, err)
	}
	return nil
}

// initialServers is a new cluster's voters: every peer of --peers (the
// same list on every node), or this node alone at local.
func initialServers(cfg Config, local raft.ServerAddress) []raft.Server {
	if len(cfg.Peers) == 0 {
		return []raft.Server{{ID: raft.ServerID(cfg.NodeID), Address: local, Suffrage: raft.Voter}}
	}
	servers := make([]raft.Server, 0, len(cfg.Peers))
	for _, p := range cfg.Peers {
		servers = append(servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr), Suffrage: raft.Voter})
	}
	return servers
}

// watchLeadership follows raft's leadership notifications. On gaining
// leadership it waits on a barrier, which returns once every earlier entry
// has applied here, before it lets reads and writes in.
func (n *Node) watchLeadership() {
	for {
		select {
		case isLeader := <-n.leaderCh:
			n.leaderReady.Store(false)
			if !isLeader {
				continue
			}
			go n.askVoters() // a new leader learns its voters' versions at once
			if err := n.raft.Barrier(barrierTimeout).Error(); err != nil {
				n.log.Warn("leader barrier failed; not serving until the next leadership change", "err", err)
				continue
			}
			// Leadership may have moved on meanwhile.
			if n.raft.State() == raft.Leader {
				n.gained.Add(1)
				n.leaderReady.Store(true)
			}
		case <-n.done:
			return
		}
	}
}

// Serving reports whether this node answers requests itself: it leads and
// has applied its log.
func (n *Node) Serving() bool { return n.serving() }

// LeadershipsGained counts the times this node came to lead (and had
// applied its log). It only grows: a reader that polls Serving misses a
// leadership lost and gained again between two polls, but not this.
func (n *Node) LeadershipsGained() uint64 { return n.gained.Load() }

// Leader returns the raft address of the leader when another node leads,
// as raft itself knows it (never from replicated state), or false while
// no leader is known or this node leads.
func (n *Node) Leader() (string, bool) {
	addr, id := n.raft.LeaderWithID()
	if addr == "" || string(id) == n.cfg.NodeID {
		return "", false
	}
	return string(addr), true
}

// serving reports whether this node may answer reads and accept writes.
func (n *Node) serving() bool {
	return n.leads() && n.transfers.Load() == 0
}

// leads reports whether this node leads and has applied its log, whether
// or not it is handing leadership over.
func (n *Node) leads() bool {
	return n.leaderReady.Load() && n.raft.State() == raft.Leader
}

// Propose replicates cmd and returns its result once it has applied here.
// ErrNotLeader means it never entered the log; a rule's refusal is the
// *actors.Error returned.
func (n *Node) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	if !n.serving() {
		return actors.Result{}, ErrNotLeader
	}
	if err := n.gate(cmd); err != nil {
		return actors.Result{}, err
	}
	return n.proposer.propose(ctx, cmd)
}

// Query reads from the applied state of the account on the leader. This is
// the default read: raft's leader steps down when it loses contact with a
// quorum for longer than its lease, so a stale answer is possible only in
// that short window.
func (n *Node) Query(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error) {
	if !n.serving() {
		return actors.Result{}, ErrNotLeader
	}
	return n.accounts.Query(ctx, cred, q, queryTimeout).Outcome()
}

// AccountForLogin returns the account whose login is login (compared
// without regard to case) in this node's applied state.
func (n *Node) AccountForLogin(login string) (string, bool) {
	return n.accounts.AccountForLogin(login)
}

// QueryLinearizable is Query after the leader has confirmed with a quorum
// that it still leads (checks are shared by concurrent reads).
func (n *Node) QueryLinearizable(ctx context.Context, cred actors.Credential, q actors.Query) (actors.Result, error) {
	if !n.serving() {
		return actors.Result{}, ErrNotLeader
	}
	if err := n.check.verify(ctx); err != nil {
		return actors.Result{}, err
	}
	return n.accounts.Query(ctx, cred, q, queryTimeout).Outcome()
}

// WaitForLeader waits until the cluster has a serving leader or ctx ends.
func (n *Node) WaitForLeader(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if n.HasLeader() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// HasLeader reports whether the cluster has a known leader that serves;
// on the leader itself that includes having replayed its log.
func (n *Node) HasLeader() bool {
	if n.raft.State() == raft.Leader {
		return n.leads()
	}
	addr, _ := n.raft.LeaderWithID()
	return addr != ""
}

// readyLagMax is how far behind the commit index a ready follower may apply.
const readyLagMax = 1000

// Ready reports whether this node is part of a cluster with a known,
// serving leader and has caught up: a follower must have heard from the
// leader recently and applied nearly everything it knows is committed.
func (n *Node) Ready() bool {
	if !n.HasLeader() {
		return false
	}
	if n.raft.State() == raft.Leader {
		return true
	}
	return time.Since(n.raft.LastContact()) < 5*time.Second && n.appliedIndex()+readyLagMax >= n.raft.CommitIndex()
}

// IsLeader reports whether this node leads.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Snapshot takes a snapshot now.
func (n *Node) Snapshot() error {
	err := n.raft.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	return err
}

// ServerStatus is one member as the cluster status shows it.
type ServerStatus struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	State    string `json:"state"`
	Suffrage string `json:"suffrage"`
	// Answering is, on the leader, whether the node answered it within
	// the last second: what membership changes count as up.
	Answering *bool `json:"answering,omitempty"`
	// FeatureVersion is, on the leader, the feature version the node last
	// reported supporting (versions.go); absent when it never answered.
	FeatureVersion actors.FeatureVersion `json:"feature_version,omitempty"`
}

// Status is the cluster as this node sees it.
type Status struct {
	NodeID string `json:"node_id"`
	// FeatureVersion is the highest feature version this node's release
	// supports; AppliedFeatureVersion the highest its state relies on.
	FeatureVersion        actors.FeatureVersion `json:"feature_version"`
	AppliedFeatureVersion actors.FeatureVersion `json:"applied_feature_version"`
	State                 string                `json:"state"`
	Leader                string                `json:"leader"`
	LeaderAddr            string                `json:"leader_raft_addr"`
	Nodes                 []ServerStatus        `json:"nodes"`
	AppliedIndex          uint64                `json:"applied_index"`
	CommitIndex           uint64                `json:"commit_index"`
	Term                  uint64                `json:"term"`
	Accounts              int                   `json:"accounts"`
	Writes                WriteStats            `json:"writes"`
	// LogVerification is what this node's log verifier found (verify.go).
	LogVerification LogVerification `json:"log_verification"`
}

// appliedIndex is the highest log index applied to the accounts: at least
// every write this node has answered (see fsm.applied).
func (n *Node) appliedIndex() uint64 {
	return max(n.raft.AppliedIndex(), n.fsm.applied.Load())
}

// Status reports the node's view of the cluster.
func (n *Node) Status() (Status, error) {
	addr, id := n.raft.LeaderWithID()
	s := Status{
		NodeID:                n.cfg.NodeID,
		State:                 strings.ToLower(n.raft.State().String()),
		Leader:                string(id),
		LeaderAddr:            string(addr),
		AppliedIndex:          n.appliedIndex(),
		CommitIndex:           n.raft.CommitIndex(),
		Term:                  n.raft.CurrentTerm(),
		Accounts:              n.accounts.Len(),
		Writes:                n.metrics.stats(),
		FeatureVersion:        actors.SupportedFeatureVersion(),
		AppliedFeatureVersion: actors.FeatureVersion(max(n.fsm.version.Load(), 1)),
	}
	s.LogVerification = n.verify.status()
	future := n.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return s, err
	}
	leading := n.raft.State() == raft.Leader
	_, versions := n.FeatureVersions()
	for _, srv := range future.Configuration().Servers {
		st := serverStatus(srv, id)
		if leading {
			answering := srv.ID == raft.ServerID(n.cfg.NodeID) || n.contacts.up(srv.ID)
			st.Answering = &answering
			st.FeatureVersion = versions[string(srv.ID)]
		}
		s.Nodes = append(s.Nodes, st)
	}
	return s, nil
}

// Close shuts raft down and closes the stores.
func (n *Node) Close() error {
	close(n.done)
	if n.proposer != nil {
		n.proposer.close()
	}
	err := n.raft.Shutdown().Error()
	n.heartbeats.close()
	// A clean stop records the whole applied log.
	raiseReach(n.appliedIndex(), n.stores, n.log)
	n.transport.Close()
	if n.cfg.shared == nil {
		n.nodes.close()
	}
	n.verify.close()
	if cerr := n.stores.Close(); err == nil {
		err = cerr
	}
	return err
}

// AccountIDs lists the accounts this node's state holds, in ID order
// (the chain follower reads the ones it leads).
func (n *Node) AccountIDs() []string {
	return n.accounts.IDs(func(string) bool { return true })
}
