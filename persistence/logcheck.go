package persistence

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// checkEntries reads every log entry that raft reads when it starts:
// those after the newest snapshot (all of them when there is none), in
// which it looks for configuration changes. raft panics on an entry it
// cannot read there, and neither store checks an entry's bytes when it
// opens (raft-wal checks the checksum of the last batch only, so a
// damaged entry before it reads back as a decode error or a panic of its
// decoder). Read here first, such an entry is a CorruptError that names
// it, and the node exits saying so instead of crashing.
func checkEntries(path string, logs raft.LogStore, snaps raft.SnapshotStore) error {
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
		if err := faultsAsErrors(func() error { return logs.GetLog(index, &entry) }); err != nil {
			return &CorruptError{Path: path, Err: fmt.Errorf("log entry %d (of %d to %d) cannot be read: %w", index, first, last, err)}
		}
	}
	return nil
}
