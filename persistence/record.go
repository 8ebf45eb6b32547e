package persistence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The data dir's record. raft starts from whatever its stores hold: a
// data dir whose log was deleted looks new, and one whose log was cut
// short looks like a node that had written less. Either way it would
// serve fewer writes than it acknowledged, without a word. So a data dir
// also keeps, beside its stores, a small file saying that it holds raft
// state and how far its log is known to reach; the start checks
// (cluster.checkStores) refuse stores that show less.
//
// The reach only ever rises, and only to entries known to be on this
// node's disk: entries this node has applied (raft applies an entry only
// once its own store has synced it, and never removes a committed entry
// from the end of a log), and the ends of ranges the log verifier read
// back from the disk and found whole. The record is written beside the
// stores, not in them, so that losing the stores does not lose it.

// RecordFile is the record's name in the data dir.
const RecordFile = "raft-record.json"

// recordVersion is the format of the record file.
const recordVersion = 1

// Record is what a data dir records of its raft state.
type Record struct {
	Version int `json:"version"`
	// Reaches is the last log index known to be on this node's disk (in
	// its log or covered by its snapshot). A data dir with a record holds
	// raft state even when Reaches is 0.
	Reaches uint64 `json:"reaches"`
}

// ErrStateLost means part of a data dir's raft state is missing or
// damaged, and starting would silently lose acknowledged writes: here,
// the data dir's record says it holds raft state but neither log store is
// there; the start checks (cluster.checkStores) find the rest.
var ErrStateLost = errors.New("refusing to start")

// recordKeeper reads and raises one data dir's record.
type recordKeeper struct {
	path string
	mu   sync.Mutex
	// found is the record as it was when the stores opened (nil: none).
	found *Record
	// reaches is what the file says now.
	reaches uint64
	exists  bool
}

// readRecord reads the record in dir; nil when there is none.
func readRecord(dir string) (*Record, error) {
	path := filepath.Join(dir, RecordFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("persistence: read %s: %w", path, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil || r.Version < 1 {
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("not a data dir record: %q", truncateForMessage(data))}
	}
	if r.Version > recordVersion {
		return nil, fmt.Errorf("persistence: %s has format %d, newer than this release reads (%d): start a newer addrwatchd on this data dir", path, r.Version, recordVersion)
	}
	return &r, nil
}

func truncateForMessage(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// raise writes index as the reach when it is higher than the recorded
// one, or creates the record when there is none. The file is replaced
// whole: written beside it, synced, renamed over it, and the directory
// synced, so a crash leaves the old record or the new, never half of one.
func (k *recordKeeper) raise(index uint64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.exists && index <= k.reaches {
		return nil
	}
	return k.writeLocked(index)
}

// reset writes index as the reach even when it is lower: only for a start
// that accepts losing what the log no longer holds.
func (k *recordKeeper) reset(index uint64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writeLocked(index)
}

func (k *recordKeeper) writeLocked(index uint64) error {
	data, err := json.Marshal(Record{Version: recordVersion, Reaches: index})
	if err != nil {
		return err
	}
	if err := WriteFileSynced(k.path, append(data, '\n')); err != nil {
		return err
	}
	k.reaches, k.exists = index, true
	return nil
}

// WriteFileSynced replaces path with data, durably, mode 0600: written
// beside it, synced, renamed over it and the directory synced, so that a
// crash leaves the old file or the new, never part of one.
func WriteFileSynced(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("persistence: write %s: %w", path, err)
	}
	return syncDirectory(filepath.Dir(path))
}

// Record is the data dir's record as the stores found it when they
// opened; nil for a data dir without one (new, or made by a release
// before records).
func (s *Stores) Record() *Record { return s.record.found }

// RaiseReach records that the log reaches at least index on this node's
// disk. It never lowers the record.
func (s *Stores) RaiseReach(index uint64) error { return s.record.raise(index) }

// ResetReach records index as the log's reach even when that is lower
// than the record said: for a start that accepts the loss
// (--recover-from-snapshot).
func (s *Stores) ResetReach(index uint64) error { return s.record.reset(index) }
