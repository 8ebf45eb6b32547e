package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	walmetrics "github.com/hashicorp/raft-wal/metrics"
	"github.com/hashicorp/raft-wal/verifier"
	"github.com/prometheus/client_golang/prometheus"
)

// Log verification. raft-wal's verifier sits between each node's log
// store (the WAL or bolt: it only sees raft.Log values) and the cache of
// recent entries. The leader appends a checkpoint now and then; its
// verifier writes the checksum of the entries since the previous
// checkpoint into the checkpoint's Extensions before it reaches the disk,
// and raft replicates it with the entry. Every node's verifier, the
// leader's included, then reads that range back from its own store and
// compares the checksum with the leader's: a difference means an entry on
// this node's disk is not the one the leader wrote.
//
// A checkpoint is a raft barrier entry (raft.LogBarrier), not a command:
// raft never hands barriers to the FSM on any node, so they cannot change
// the accounts, a snapshot or a replay, and no encoded command can be
// mistaken for one whatever its bytes. Nodes of older versions replicate
// and skip them just the same.

const (
	// checkpointEntries bounds the entries one checkpoint covers, so
	// that a range is still in the log (raft keeps TrailingLogs, 10240,
	// after each snapshot, taken every SnapshotThreshold, 8192, entries)
	// when the followers read it back, and reading it back stays cheap.
	checkpointEntries = 4096
	// checkpointInterval bounds how long a written entry waits for its
	// checkpoint under a light load. An idle log gets no checkpoints.
	checkpointInterval = 10 * time.Second
	// checkpointPoll is how often the leader looks at its log's length.
	checkpointPoll = time.Second
	// checkpointTimeout bounds the wait for one checkpoint to apply.
	checkpointTimeout = 10 * time.Second
)

// isCheckpoint tells the verifier which entries are checkpoints.
func isCheckpoint(l *raft.Log) (bool, error) { return l.Type == raft.LogBarrier, nil }

// checkpointDue reports whether the leader should append a checkpoint: its
// log has entries past the last one checkpointed (covered), and either
// enough of them or the interval has passed.
func checkpointDue(lastIndex, covered uint64, sinceLast time.Duration) bool {
	if lastIndex <= covered {
		return false
	}
	return lastIndex-covered >= checkpointEntries || sinceLast >= checkpointInterval
}

// writeCheckpoints appends a checkpoint whenever one is due while this
// node leads, until the node closes. The barrier a new leader waits on
// (watchLeadership) is a checkpoint too, so the entries before leadership
// count as covered.
func (n *Node) writeCheckpoints() {
	t := time.NewTicker(checkpointPoll)
	defer t.Stop()
	var covered uint64
	last := time.Now()
	for {
		select {
		case <-n.done:
			return
		case <-t.C:
		}
		lastIndex := n.raft.LastIndex()
		if !n.leads() {
			covered, last = lastIndex, time.Now()
			continue
		}
		if !checkpointDue(lastIndex, covered, time.Since(last)) {
			continue
		}
		if err := n.checkpoint(); err != nil {
			n.log.Warn("log verification: checkpoint not written", "err", err)
			continue
		}
		// The checkpoint itself follows lastIndex.
		covered, last = lastIndex+1, time.Now()
	}
}

// checkpoint appends a checkpoint through raft and waits for it to apply.
// It first checks that a quorum still follows this leader: a leader cut
// off from it would append an entry that never commits, which the next
// leader then has every such node remove again.
func (n *Node) checkpoint() error {
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return err
	}
	return n.raft.Barrier(checkpointTimeout).Error()
}

// LogVerification is what this node's log verifier has found since it
// started, for the cluster status.
type LogVerification struct {
	// CheckpointsVerified counts ranges whose checksum matched the
	// leader's.
	CheckpointsVerified uint64 `json:"checkpoints_verified"`
	// LastVerifiedIndex is the last entry of the latest range that
	// matched (0: none yet).
	LastVerifiedIndex uint64 `json:"last_verified_index"`
	// Failures counts ranges whose checksum differed from the leader's.
	Failures uint64 `json:"failures"`
	// Unverified counts ranges that could not be checked: no longer in
	// this node's log, unreadable, or skipped while the verifier was busy.
	Unverified uint64 `json:"unverified"`
	// LastFailure is the latest mismatch, if any.
	LastFailure *VerificationFailure `json:"last_failure,omitempty"`
}

// VerificationFailure is one range whose checksum differed.
type VerificationFailure struct {
	FirstIndex uint64 `json:"first_index"`
	LastIndex  uint64 `json:"last_index"`
	// Kind is "storage" when the entries read back from this node's store
	// differ, "in-flight" when they differed already as this node wrote
	// them.
	Kind           string `json:"kind"`
	LeaderChecksum string `json:"leader_checksum"`
	NodeChecksum   string `json:"node_checksum"`
}

// logVerification keeps one node's verifier and what it reported.
type logVerification struct {
	log   *slog.Logger
	store *verifier.LogStore
	// closed silences the reports of a node shutting down, whose store
	// may close under a verification in progress.
	closed atomic.Bool
	// deleted is the highest index any DeleteRange has removed from the
	// store (storeView).
	deleted atomic.Uint64

	mu    sync.Mutex
	state LogVerification
}

// wrap returns raw behind the verifier. under, a test's hook, goes
// between the two. The verifier sees raw without its Close: the stores
// close it (Stores.Close).
func (v *logVerification) wrap(raw raft.LogStore, under func(raft.LogStore) raft.LogStore) raft.LogStore {
	var s raft.LogStore = storeView{LogStore: raw, deleted: &v.deleted}
	if under != nil {
		s = under(s)
	}
	v.store = verifier.NewLogStore(s, isCheckpoint, v.report, &walmetrics.NoOpCollector{})
	return v.store
}

// close stops the verifier's goroutine.
func (v *logVerification) close() {
	v.closed.Store(true)
	if v.store != nil {
		v.store.Close()
	}
}

// report records one verification; the verifier calls it from one
// goroutine.
func (v *logVerification) report(r verifier.VerificationReport) {
	first, last := r.Range.Start, r.Range.End-1
	v.mu.Lock()
	defer v.mu.Unlock()
	if r.SkippedRange != nil {
		v.state.Unverified++
		v.log.Info("log verification: range skipped while the verifier was busy", "first_index", r.SkippedRange.Start, "last_index", r.SkippedRange.End-1)
	}
	var mismatch verifier.ErrChecksumMismatch
	switch {
	case r.Err == nil:
		v.state.CheckpointsVerified++
		v.state.LastVerifiedIndex = last
	case errors.As(r.Err, &mismatch):
		f := &VerificationFailure{FirstIndex: first, LastIndex: last, Kind: "storage",
			LeaderChecksum: checksumText(r.ExpectedSum), NodeChecksum: checksumText(r.ReadSum)}
		if r.WrittenSum != 0 && r.WrittenSum != r.ExpectedSum {
			f.Kind, f.NodeChecksum = "in-flight", checksumText(r.WrittenSum)
			if v.deleted.Load() >= r.Range.Start {
				// The verifier's running checksum of what this node
				// wrote still counts entries raft has since removed: an
				// uncommitted tail replaced by a new leader's entries, or
				// the log dropped for a snapshot. The range's entries were
				// rewritten, not damaged, and the verifier skips the
				// read-back after this mismatch.
				v.state.Unverified++
				v.log.Info("log verification: range rewritten on this node (a replaced log tail or an installed snapshot), not verified", "first_index", first, "last_index", last)
				return
			}
		}
		v.state.Failures++
		v.state.LastFailure = f
		v.log.Error("log verification FAILED: this node's log differs from the leader's",
			"first_index", first, "last_index", last, "kind", f.Kind,
			"leader_checksum", f.LeaderChecksum, "node_checksum", f.NodeChecksum, "err", r.Err)
	case v.closed.Load():
	case errors.Is(r.Err, verifier.ErrRangeMismatch):
		v.state.Unverified++
		v.log.Info("log verification: range no longer in this node's log, not verified", "first_index", first, "last_index", last)
	default:
		v.state.Unverified++
		v.log.Warn("log verification: range not verified", "first_index", first, "last_index", last, "err", r.Err)
	}
}

func checksumText(sum uint64) string { return fmt.Sprintf("%016x", sum) }

// status returns a copy of what the verifier has found.
func (v *logVerification) status() LogVerification {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.state
	if s.LastFailure != nil {
		f := *s.LastFailure
		s.LastFailure = &f
	}
	return s
}

// collectors are the verifier's Prometheus counters.
func (v *logVerification) collectors() []prometheus.Collector {
	counter := func(name, help string, value func(LogVerification) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(value(v.status())) })
	}
	return []prometheus.Collector{
		counter("addrwatch_raft_log_verify_checkpoints_total", "Log ranges whose checksum matched the leader's checkpoint.",
			func(s LogVerification) uint64 { return s.CheckpointsVerified }),
		counter("addrwatch_raft_log_verify_failures_total", "Log ranges whose checksum differed from the leader's checkpoint: this node's log is damaged.",
			func(s LogVerification) uint64 { return s.Failures }),
		counter("addrwatch_raft_log_verify_unverified_total", "Log ranges that could not be verified (no longer in the log, unreadable, or skipped while busy).",
			func(s LogVerification) uint64 { return s.Unverified }),
	}
}

// storeView is the log store beneath the verifier: without its Close, with
// its IsMonotonic (which raft asks of the store it is given), and noting
// the highest index each DeleteRange removes.
type storeView struct {
	raft.LogStore
	deleted *atomic.Uint64
}

func (s storeView) IsMonotonic() bool { return isMonotonic(s.LogStore) }

func (s storeView) DeleteRange(min, max uint64) error {
	// Noted first, so that a report racing with the delete sees it.
	for {
		old := s.deleted.Load()
		if max <= old || s.deleted.CompareAndSwap(old, max) {
			break
		}
	}
	return s.LogStore.DeleteRange(min, max)
}

func isMonotonic(s raft.LogStore) bool {
	m, ok := s.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}
