package cluster

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/persistence"
)

// How far a node's log is known to reach. The data dir's record
// (persistence/record.go) says how far this node's log reached on its
// disk; the start checks (checkReach) refuse stores that show less. The
// record follows the applied index: raft applies an entry on a node only
// once that node's own store has synced it (a leader counts itself
// towards a commit only after its own append), and it never removes a
// committed entry from the end of a log, only from the front once a
// snapshot on disk covers it. The log verifier's checkpoints are not
// used: a follower can verify a range before it commits, and a new leader
// may then replace it.

// reachInterval is how often a node records how far its log reaches: the
// writes a crash and a damaged log could lose without notice are those of
// the last interval (a clean stop records the end).
const reachInterval = time.Second

// recordReach raises the record to the applied index every interval,
// until done closes.
func recordReach(r *raft.Raft, stores *persistence.Stores, done <-chan struct{}, log *slog.Logger) {
	t := time.NewTicker(reachInterval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			raiseReach(r.AppliedIndex(), stores, log)
		}
	}
}

// raiseReach records that the log reaches index. Index 0 is nothing to
// record: a joining node that has received nothing yet holds no state.
func raiseReach(index uint64, stores *persistence.Stores, log *slog.Logger) {
	if index == 0 {
		return
	}
	if err := stores.RaiseReach(index); err != nil {
		log.Warn("could not record how far the raft log reaches; a later start checks against the older record", "index", index, "err", err)
	}
}

// openCheckedStores opens a group's stores and runs the start checks
// (checkStores) on them; recoverFromSnapshot is --recover-from-snapshot.
func openCheckedStores(dir string, opts persistence.Options, recoverFromSnapshot bool, log *slog.Logger) (*persistence.Stores, error) {
	opts.AcceptLoss = recoverFromSnapshot
	stores, err := persistence.OpenStoresWith(dir, opts)
	if err != nil {
		return nil, err
	}
	log.Info(fmt.Sprintf("raft log: %s (%s)", stores.Kind, stores.Why), "path", stores.LogPath)
	if err := checkStores(stores, recoverFromSnapshot, log); err != nil {
		stores.Close()
		return nil, err
	}
	return stores, nil
}

// decodesAsEntry checks that a data group's entry decodes as the FSM
// will decode it (fsm.go), for entries written before entry checksums.
func decodesAsEntry(l *raft.Log) error {
	if l.Type != raft.LogCommand {
		return nil
	}
	if body, isCluster := persistence.ClusterEntry(l.Data); isCluster {
		var e slotEntry
		return json.Unmarshal(body, &e)
	}
	_, err := persistence.DecodeCommands(l.Data)
	return err
}

// decodesAsMetaEntry is decodesAsEntry for the meta group (meta.go).
func decodesAsMetaEntry(l *raft.Log) error {
	if l.Type != raft.LogCommand {
		return nil
	}
	var c metaCommand
	return json.Unmarshal(l.Data, &c)
}
