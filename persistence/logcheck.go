package persistence

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// checkEntries reads every log entry that raft reads or applies when it
// starts: those after the newest snapshot (all of them when there is
// none). raft panics on an entry it cannot read there, the FSM panics on
// one it cannot decode, and neither store checks an entry's bytes when it
// opens (raft-wal checks the checksum of the last batch only). Each entry
// is checked against its checksum (entrysum.go); an entry from before
// checksums is given to check, when set. Damage is then a CorruptError
// that names the entry, and the node exits saying so instead of crashing
// or serving less.
func checkEntries(path string, logs summedLog, snaps raft.SnapshotStore, check func(*raft.Log) error) error {
	first, err := logs.FirstIndex()
	if err != nil {
		return &CorruptError{Path: path, Err: fmt.Errorf("first log index: %w", err)}
	}
	last, err := logs.LastIndex()
	if err != nil {
		return &CorruptError{Path: path, Err: fmt.Errorf("last log index: %w", err)}
	}
	metas, err := snaps.List()
	if err != nil {
		return fmt.Errorf("persistence: list snapshots: %w", err)
	}
	if len(metas) > 0 {
		first = max(first, metas[0].Index+1)
	}
	for index := first; index <= last && index > 0; index++ {
		var entry raft.Log
		var summed bool
		err := faultsAsErrors(func() error {
			var err error
			summed, err = logs.getLogSummed(index, &entry)
			return err
		})
		if err == nil && !summed && check != nil {
			err = faultsAsErrors(func() error { return check(&entry) })
		}
		if err != nil {
			return &CorruptError{Path: path, Err: fmt.Errorf("log entry %d (of %d to %d) cannot be read: %w", index, first, last, err)}
		}
	}
	return nil
}
