package cluster

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/persistence"
)

// Before raft starts, Open checks that the stores agree with each other.
// raft itself starts from whatever it finds: with the log and stable
// store gone and a snapshot left, it restores the snapshot, elects itself
// and serves, and every write acknowledged after that snapshot is gone
// without a word. The checks use only raft's store interfaces, so they
// hold for any log store.

// keyCurrentTerm is the stable-store key under which raft keeps its
// current term (raft's own on-disk format; raft.HasExistingState reads
// it too). raft writes it before anything else: when a node bootstraps,
// and when it first hears of a term, so a node with any log entry or
// snapshot has it.
var keyCurrentTerm = []byte("CurrentTerm")

// ErrStateLost means the stores disagree: part of this node's raft state
// is missing, and starting would silently lose acknowledged writes.
var ErrStateLost = persistence.ErrStateLost

// storeState is what the stores hold.
type storeState struct {
	term        uint64             // the stable store's current term; 0 when missing
	firstLog    uint64             // 0 when the log is empty
	lastLog     uint64             // 0 when the log is empty
	lastLogTerm uint64             // the term of the last entry
	snapshot    *raft.SnapshotMeta // the newest snapshot, nil when none
	logPath     string             // the log and stable store, for messages
}

func readStoreState(stores *persistence.Stores) (storeState, error) {
	s := storeState{logPath: stores.LogPath}
	term, err := stores.Stable.GetUint64(keyCurrentTerm)
	// A missing key is "not found", the same test raft makes.
	if err != nil && err.Error() != "not found" {
		return s, fmt.Errorf("cluster: read the current term: %w", err)
	}
	s.term = term
	if s.firstLog, err = stores.Log.FirstIndex(); err != nil {
		return s, fmt.Errorf("cluster: read the log: %w", err)
	}
	if s.lastLog, err = stores.Log.LastIndex(); err != nil {
		return s, fmt.Errorf("cluster: read the log: %w", err)
	}
	if s.lastLog > 0 {
		var last raft.Log
		if err := stores.Log.GetLog(s.lastLog, &last); err != nil {
			return s, fmt.Errorf("cluster: read log entry %d: %w", s.lastLog, err)
		}
		s.lastLogTerm = last.Term
	}
	snaps, err := stores.Snapshot.List()
	if err != nil {
		return s, fmt.Errorf("cluster: list snapshots: %w", err)
	}
	if len(snaps) > 0 {
		s.snapshot = snaps[0] // newest first
	}
	return s, nil
}

// checkStores refuses a start that would lose data silently:
//
//   - stores that reach less far than the data dir's record says this
//     node's log reached (checkReach): the log was deleted, cut short or
//     lost entries to damage. With recoverFromSnapshot set, and something
//     left to start from, it warns what is lost and lets the node start;
//   - a snapshot or log entries with no current term: the stable store
//     (raft.db with the log in it, or the WAL's wal/) was deleted or
//     emptied. With recoverFromSnapshot set, and a snapshot to start from,
//     it warns what is lost and lets the node start from the snapshot;
//   - a log that starts after the newest snapshot ends (or after entry 1
//     with no snapshot): the entries between were lost, most likely with
//     snapshots/, and no flag can start the node on that.
//
// An empty log beside a snapshot and a current term is normal: raft
// empties a log after installing a snapshot on some stores, and
// RecoverCluster leaves it empty.
func checkStores(stores *persistence.Stores, recoverFromSnapshot bool, log *slog.Logger) error {
	s, err := readStoreState(stores)
	if err != nil {
		return err
	}
	if err := s.checkContiguous(); err != nil {
		return err
	}
	lostTerm := s.term == 0 && (s.snapshot != nil || s.lastLog > 0)
	if lostTerm && (s.snapshot == nil || !recoverFromSnapshot) {
		return s.lostStableStore()
	}
	if err := s.checkReach(stores, recoverFromSnapshot, log); err != nil {
		return err
	}
	if !lostTerm {
		return nil
	}
	// Starting from the snapshot: the term goes on from the newest one the
	// stores show, so that new entries never carry an older term than the
	// entries before them.
	term := max(s.snapshot.Term, s.lastLogTerm)
	if err := stores.Stable.SetUint64(keyCurrentTerm, term); err != nil {
		return fmt.Errorf("cluster: write the current term: %w", err)
	}
	log.Warn("starting from the newest snapshot as --recover-from-snapshot asks: the log and stable store were missing or empty, so every write acknowledged after this snapshot is lost on this node (on a cluster, the leader sends this node what it lacks)",
		s.snapshotAttrs()...)
	return nil
}

// checkContiguous refuses a log that does not reach back to the newest
// snapshot (or to entry 1).
func (s storeState) checkContiguous() error {
	covered := uint64(0)
	if s.snapshot != nil {
		covered = s.snapshot.Index
	}
	if s.firstLog == 0 || s.firstLog <= covered+1 {
		return nil
	}
	what := "there is no snapshot"
	if s.snapshot != nil {
		what = fmt.Sprintf("the newest snapshot (%s) ends at entry %d", s.describeSnapshot(), covered)
	}
	return fmt.Errorf("%w: the raft log (%s) starts at entry %d but %s: entries %d to %d are missing (were snapshots deleted?), and this node cannot rebuild its state without them. Restore the data dir from a backup, or on a cluster empty this node's data dir and start it with --join under the same --node-id and --raft",
		ErrStateLost, s.logPath, s.firstLog, what, covered+1, s.firstLog-1)
}

// lostStableStore describes a missing or empty log and stable store.
func (s storeState) lostStableStore() error {
	logs := "no log entries"
	if s.lastLog > 0 {
		logs = fmt.Sprintf("log entries %d to %d", s.firstLog, s.lastLog)
	}
	if s.snapshot == nil {
		return fmt.Errorf("%w: the raft log and stable store (%s) hold %s but no current term: the stable store was lost. Restore the data dir from a backup",
			ErrStateLost, s.logPath, logs)
	}
	return fmt.Errorf("%w: the raft log and stable store (%s) hold %s and no current term, but there is a snapshot (%s): the log and stable store were deleted or emptied, and starting would silently lose every write acknowledged after that snapshot. Restore the data dir from a backup; or on a cluster empty this node's data dir and start it with --join under the same --node-id and --raft; or start with --recover-from-snapshot to accept the loss and start from the snapshot",
		ErrStateLost, s.logPath, logs, s.describeSnapshot())
}

// describeSnapshot says what is known of the newest snapshot.
func (s storeState) describeSnapshot() string {
	d := fmt.Sprintf("%s: index %d, term %d, %d bytes", s.snapshot.ID, s.snapshot.Index, s.snapshot.Term, s.snapshot.Size)
	if taken, known := snapshotTaken(s.snapshot.ID); known {
		d += ", taken " + taken.UTC().Format(time.RFC3339)
	}
	return d
}

func (s storeState) snapshotAttrs() []any {
	attrs := []any{"snapshot", s.snapshot.ID, "index", s.snapshot.Index, "term", s.snapshot.Term, "bytes", s.snapshot.Size}
	if taken, known := snapshotTaken(s.snapshot.ID); known {
		attrs = append(attrs, "taken", taken.UTC().Format(time.RFC3339))
	}
	return attrs
}

// snapshotTaken reads when a snapshot was taken from its ID: raft's file
// snapshot store names each one term-index-milliseconds since 1970. The
// snapshot metadata itself has no time.
func snapshotTaken(id string) (time.Time, bool) {
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// covers is the last entry the stores hold, in the log or under the
// newest snapshot.
func (s storeState) covers() uint64 {
	if s.snapshot != nil {
		return max(s.lastLog, s.snapshot.Index)
	}
	return s.lastLog
}

// checkReach compares the stores with the data dir's record of how far
// its log reached. A data dir without a record (made by an older
// release) gets one, at its newest snapshot: the end of its log may hold
// entries that never committed, which a new leader can replace with fewer,
// and the applied index raises the record soon after start (reach.go).
func (s storeState) checkReach(stores *persistence.Stores, recoverFromSnapshot bool, log *slog.Logger) error {
	record := stores.Record()
	if record == nil {
		if s.snapshot != nil || s.lastLog > 0 {
			var at uint64
			if s.snapshot != nil {
				at = s.snapshot.Index
			}
			if err := stores.RaiseReach(at); err != nil {
				return err
			}
		}
		return nil
	}
	have := s.covers()
	if have >= record.Reaches {
		return nil
	}
	what := fmt.Sprintf("the raft log (%s) holds %s", s.logPath, s.describeLog())
	if s.snapshot != nil {
		what += fmt.Sprintf(" and the newest snapshot (%s) ends at entry %d", s.describeSnapshot(), s.snapshot.Index)
	}
	lost := fmt.Sprintf("this data dir recorded (%s) that its log reached entry %d: entries %d to %d, acknowledged writes among them, are gone (a log deleted, cut short, or damaged)",
		persistence.RecordFile, record.Reaches, have+1, record.Reaches)
	switch {
	case !recoverFromSnapshot:
		return fmt.Errorf("%w: %s, but %s. Restore the data dir from a backup; or on a cluster empty this node's data dir and start it with --join under the same --node-id and --raft; or start with --recover-from-snapshot to accept the loss and start from what is left",
			ErrStateLost, what, lost)
	case have == 0:
		return fmt.Errorf("%w: %s, but %s, and nothing is left to start from: --recover-from-snapshot needs a snapshot or log entries. Restore the data dir from a backup, or empty it to start a new node",
			ErrStateLost, what, lost)
	}
	if err := stores.ResetReach(have); err != nil {
		return err
	}
	log.Warn("starting from what the stores hold as --recover-from-snapshot asks: "+lost+" on this node (on a cluster, the leader sends this node what it lacks)",
		"log_reaches", have, "recorded", record.Reaches)
	return nil
}

// describeLog says which entries the log holds.
func (s storeState) describeLog() string {
	if s.lastLog == 0 {
		return "no entries"
	}
	return fmt.Sprintf("entries %d to %d", s.firstLog, s.lastLog)
}
