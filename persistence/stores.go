package persistence

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// snapshotsRetained is how many snapshots raft keeps on disk.
const snapshotsRetained = 2

// logCacheEntries is how many recent log entries stay in memory: enough
// for every follower's pipeline to catch up without reading the disk.
const logCacheEntries = 1024

// Stores are the raft log, stable store and snapshot store of one node.
type Stores struct {
	Log      raft.LogStore
	Stable   raft.StableStore
	Snapshot raft.SnapshotStore
	// LogPath is the file (or directory) of the log and stable store, for
	// messages about them.
	LogPath string
	// Kind is the log store this data dir uses, and Why says why (a data
	// dir keeps the store it has; a new one takes the one asked for).
	Kind LogStore
	Why  string
	// closer closes the log and stable store (bolt or the WAL).
	closer io.Closer
	lock   *DirLock
	// raw is the log store under the cache, for WrapLog.
	raw raft.LogStore
}

// OpenStores opens (creating if needed) the stores under dir: the log and
// stable store, with an fsync on every append, and snapshots/. The log
// store is the one the data dir already holds (raft.db for bolt, wal/ for
// the WAL), or want in a new data dir; a data dir holding both is
// refused (ErrTwoLogStores). It first takes the data dir's lock
// (LockDataDir: a second process gets ErrInUse), makes the data dir and
// the stores private (MakePrivate), reads the store's bolt file through
// (checkBolt) and then the log entries raft reads at start (checkEntries):
// a damaged store is a CorruptError, never a crash.
func OpenStores(dir string, want LogStore, logger hclog.Logger) (*Stores, error) {
	snapshotDir := filepath.Join(dir, snapshotsDir)
	if err := os.MkdirAll(snapshotDir, dirMode); err != nil {
		return nil, fmt.Errorf("persistence: data dir: %w", err)
	}
	if err := MakePrivate(dir, BoltFile, WALDir, snapshotsDir, LockFile); err != nil {
		return nil, err
	}
	lock, err := LockDataDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(dir, want, logger)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// openLocked opens the stores of a data dir whose lock it holds.
func openLocked(dir string, want LogStore, logger hclog.Logger) (*Stores, error) {
	kind, why, err := chooseLogStore(dir, want)
	if err != nil {
		return nil, err
	}
	s := &Stores{Kind: kind, Why: why}
	var store interface {
		raft.LogStore
		raft.StableStore
		io.Closer
	}
	switch kind {
	case LogWAL:
		s.LogPath = filepath.Join(dir, WALDir)
		if err := os.Mkdir(s.LogPath, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("persistence: WAL dir: %w", err)
		}
		store, err = OpenWAL(s.LogPath, logger)
	default:
		s.LogPath = filepath.Join(dir, BoltFile)
		store, err = openBolt(s.LogPath)
	}
	if err != nil {
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, logger)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("persistence: snapshot store: %w", err)
	}
	if err := checkEntries(s.LogPath, store, snaps); err != nil {
		store.Close()
		return nil, err
	}
	// The cache serves the entries a leader sends its followers straight
	// after appending them, which would otherwise be read back from disk.
	logs, err := raft.NewLogCache(logCacheEntries, store)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("persistence: log cache: %w", err)
	}
	s.Log, s.Stable, s.closer, s.raw = logs, store, store, store
	s.Snapshot = &privateSnapshots{SnapshotStore: snaps, dir: filepath.Join(dir, snapshotsDir)}
	return s, nil
}

// openBolt opens the bolt log and stable store at path after reading it
// through (checkBolt).
func openBolt(path string) (*raftboltdb.BoltStore, error) {
	if err := checkBolt(path); err != nil {
		return nil, err
	}
	var bolt *raftboltdb.BoltStore
	err := faultsAsErrors(func() error {
		var err error
		bolt, err = raftboltdb.New(raftboltdb.Options{Path: path, NoSync: false, BoltOptions: &bbolt.Options{
			Timeout: boltLockWait,
			// The free-page list is rebuilt from the pages at open instead of
			// being written with every append (about 8% of a commit's time in
			// a single-writer measurement).
			NoFreelistSync: true,
			FreelistType:   bbolt.FreelistMapType,
		}})
		return err
	})
	if err != nil {
		return nil, boltError(path, err)
	}
	return bolt, nil
}

// The stores' names under the data dir: the bolt file of the log and
// stable store, and the directory where raft's FileSnapshotStore keeps its
// snapshots.
const (
	BoltFile     = "raft.db"
	snapshotsDir = "snapshots"
)

// HasState reports whether the stores hold any raft state, i.e. whether
// this node was bootstrapped or joined before.
func (s *Stores) HasState() (bool, error) {
	return raft.HasExistingState(s.Log, s.Stable, s.Snapshot)
}

// Close closes the log and stable store and releases the data dir.
func (s *Stores) Close() error {
	err := s.closer.Close()
	if uerr := s.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}
