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
	// record is the data dir's record (record.go).
	record *recordKeeper
}

// Options are what OpenStoresWith needs besides the data dir.
type Options struct {
	// Want is the log store of a new data dir; a data dir keeps its own.
	Want   LogStore
	Logger hclog.Logger
	// AcceptLoss opens a data dir whose record says it holds raft state
	// although neither log store is there (--recover-from-snapshot): a new,
	// empty store of kind Want takes the lost one's place.
	AcceptLoss bool
	// CheckEntry, when set, checks each entry after the newest snapshot
	// that carries no checksum (written by a release before entry
	// checksums), e.g. that it decodes: damage there is then a
	// CorruptError at open rather than a panic when it applies.
	CheckEntry func(*raft.Log) error
}

// OpenStores opens the stores under dir with the default options:
// OpenStoresWith(dir, Options{Want: want, Logger: logger}).
func OpenStores(dir string, want LogStore, logger hclog.Logger) (*Stores, error) {
	return OpenStoresWith(dir, Options{Want: want, Logger: logger})
}

// OpenStoresWith opens (creating if needed) the stores under dir: the log
// and stable store, with an fsync on every append and a checksum on every
// entry (entrysum.go), and snapshots/. The log store is the one the data
// dir already holds (raft.db for bolt, wal/ for the WAL), or opts.Want in
// a new data dir; a data dir holding both is refused (ErrTwoLogStores),
// and so is one whose record (record.go) says it holds raft state while
// neither store is there (ErrStateLost). It first takes the data dir's
// lock (LockDataDir: a second process gets ErrInUse), makes the data dir
// and the stores private (MakePrivate), reads the store's bolt file
// through (checkBolt) and then the log entries raft reads at start
// (checkEntries): a damaged store is a CorruptError, never a crash.
func OpenStoresWith(dir string, opts Options) (*Stores, error) {
	snapshotDir := filepath.Join(dir, snapshotsDir)
	if err := os.MkdirAll(snapshotDir, dirMode); err != nil {
		return nil, fmt.Errorf("persistence: data dir: %w", err)
	}
	if err := MakePrivate(dir, BoltFile, WALDir, snapshotsDir, LockFile, RecordFile); err != nil {
		return nil, err
	}
	lock, err := LockDataDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(dir, opts)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// openLocked opens the stores of a data dir whose lock it holds.
func openLocked(dir string, opts Options) (*Stores, error) {
	record, err := readRecord(dir)
	if err != nil {
		return nil, err
	}
	kind, why, fresh, err := chooseLogStore(dir, opts.Want)
	if err != nil {
		return nil, err
	}
	if record != nil && fresh && !opts.AcceptLoss {
		return nil, fmt.Errorf("%w: the data dir %s records that it holds raft state with a log reaching entry %d (%s), but it has no raft log: neither %s nor %s is there. Starting would serve an empty state in place of every acknowledged write. Restore the data dir from a backup; or on a cluster empty this node's data dir and start it with --join under the same --node-id and --raft; or, if a snapshot is left, start with --recover-from-snapshot to accept losing the writes after it",
			ErrStateLost, dir, record.Reaches, RecordFile, filepath.Join(dir, WALDir), filepath.Join(dir, BoltFile))
	}
	s := &Stores{Kind: kind, Why: why, record: &recordKeeper{path: filepath.Join(dir, RecordFile), found: record}}
	if record != nil {
		s.record.reaches, s.record.exists = record.Reaches, true
	}
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
		store, err = OpenWAL(s.LogPath, opts.Logger)
	default:
		s.LogPath = filepath.Join(dir, BoltFile)
		store, err = openBolt(s.LogPath)
	}
	if err != nil {
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, opts.Logger)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("persistence: snapshot store: %w", err)
	}
	summed := summedLog{LogStore: store}
	if err := checkEntries(s.LogPath, summed, snaps, opts.CheckEntry); err != nil {
		store.Close()
		return nil, err
	}
	// The cache serves the entries a leader sends its followers straight
	// after appending them, which would otherwise be read back from disk.
	logs, err := raft.NewLogCache(logCacheEntries, summed)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("persistence: log cache: %w", err)
	}
	s.Log, s.Stable, s.closer, s.raw = logs, store, store, summed
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
