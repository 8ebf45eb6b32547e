package persistence

import (
	"fmt"
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
// for every follower's pipeline to catch up without reading bolt.
const logCacheEntries = 1024

// Stores are the raft log, stable store and snapshot store of one node.
type Stores struct {
	Log      raft.LogStore
	Stable   raft.StableStore
	Snapshot raft.SnapshotStore
	// LogPath is the file (or directory) of the log and stable store, for
	// messages about them.
	LogPath string
	bolt    *raftboltdb.BoltStore
}

// OpenStores opens (creating if needed) the stores under dir: raft.db for
// the log and stable store, with an fsync on every append, and snapshots/.
// It first makes the data dir and the stores private (MakePrivate) and
// reads raft.db through (checkBolt): a damaged file is a CorruptError,
// never a crash.
func OpenStores(dir string, logger hclog.Logger) (*Stores, error) {
	snapshotDir := filepath.Join(dir, snapshotsDir)
	if err := os.MkdirAll(snapshotDir, dirMode); err != nil {
		return nil, fmt.Errorf("persistence: data dir: %w", err)
	}
	if err := MakePrivate(dir, boltFile, snapshotsDir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, boltFile)
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
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, logger)
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("persistence: snapshot store: %w", err)
	}
	// The cache serves the entries a leader sends its followers straight
	// after appending them, which would otherwise be read back from bolt.
	logs, err := raft.NewLogCache(logCacheEntries, bolt)
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("persistence: log cache: %w", err)
	}
	return &Stores{Log: logs, Stable: bolt, Snapshot: &privateSnapshots{SnapshotStore: snaps, dir: snapshotDir}, LogPath: path, bolt: bolt}, nil
}

// The stores' names under the data dir: the bolt file of the log and
// stable store, and the directory where raft's FileSnapshotStore keeps its
// snapshots.
const (
	boltFile     = "raft.db"
	snapshotsDir = "snapshots"
)

// HasState reports whether the stores hold any raft state, i.e. whether
// this node was bootstrapped or joined before.
func (s *Stores) HasState() (bool, error) {
	return raft.HasExistingState(s.Log, s.Stable, s.Snapshot)
}

// Close closes the log and stable store.
func (s *Stores) Close() error { return s.bolt.Close() }
