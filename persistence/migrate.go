package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// walMigratingDir is where MigrateBoltToWAL builds the WAL before renaming
// it into place as WALDir.
const walMigratingDir = WALDir + ".migrating"

// migratedBoltPrefix starts the name raft.db is renamed to once its log
// is in the WAL: raft.db.migrated-<UTC time>, kept as a backup.
const migratedBoltPrefix = BoltFile + ".migrated-"

// migrateBatchEntries bounds how many entries one StoreLogs call appends:
// every call is one fsync, and the batch is held in memory.
const migrateBatchEntries = 1024

// The reasons MigrateBoltToWAL refuses to start. Each leaves the data dir
// as it was.
var (
	ErrNoBoltLog = errors.New("the data dir has no " + BoltFile + ": there is no bolt log to migrate")
	// ErrNodeRunning is ErrInUse as the migration words it: another
	// process holds raft.db's file lock.
	ErrNodeRunning = errors.New("the node is running (another process holds " + BoltFile + "'s lock): stop it before migrating its log")
	ErrWALExists   = errors.New("the data dir already has a " + WALDir + " directory: it was migrated before, " +
		"or an earlier run stopped after its last step; while " + BoltFile + " is there the node starts on it " +
		"and ignores " + WALDir + ", so move " + WALDir + " away to migrate again")
)

// stableUint64Keys and stableKeys are the keys hashicorp/raft keeps in its
// stable store (raft.go: keyCurrentTerm, keyLastVoteTerm, keyLastVoteCand),
// written with SetUint64 and Set respectively. A StableStore cannot list
// its keys, so the migration copies these by name; this program writes no
// others.
var (
	stableUint64Keys = [][]byte{[]byte("CurrentTerm"), []byte("LastVoteTerm")}
	stableKeys       = [][]byte{[]byte("LastVoteCand")}
)

// MigrateBoltToWAL moves a stopped node's raft log and stable store from
// dataDir/raft.db (raft-boltdb) to a raft-wal directory, dataDir/wal.
// It refuses (ErrNoBoltLog, ErrNodeRunning, ErrWALExists) when there is
// nothing to migrate, the node holds raft.db, or the target exists.
//
// It copies every entry and the stable keys raft uses into
// dataDir/wal.migrating, closes it, opens it again and checks it against
// raft.db entry by entry, and only then renames it to wal and raft.db to
// raft.db.migrated-<time>, which stays as a backup. Until the first rename
// raft.db is untouched and the node would start on it as before; a run
// that stopped half-way leaves only wal.migrating, which the next run
// removes and builds again. progress, if not nil, is told how many
// entries of how many have been copied after every batch.
func MigrateBoltToWAL(dataDir string, progress func(done, total uint64)) error {
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	boltPath := filepath.Join(dataDir, BoltFile)
	target := filepath.Join(dataDir, WALDir)
	building := filepath.Join(dataDir, walMigratingDir)
	if _, err := os.Stat(boltPath); errors.Is(err, fs.ErrNotExist) {
		return ErrNoBoltLog
	} else if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	if _, err := os.Lstat(target); err == nil {
		return ErrWALExists
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("persistence: %w", err)
	}
	// A running node holds the data dir's lock (whichever store it uses);
	// raft.db's own lock is checked again as it is opened.
	lock, err := LockDataDir(dataDir)
	if errors.Is(err, ErrInUse) {
		return ErrNodeRunning
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	bolt, err := openBoltReadOnly(boltPath)
	if err != nil {
		return err
	}
	defer bolt.Close()

	if err := buildWAL(building, bolt, progress); err != nil {
		return err
	}
	if err := verifyWAL(building, bolt); err != nil {
		return fmt.Errorf("persistence: the copy in %s does not match %s (left in place; raft.db is untouched): %w", building, boltPath, err)
	}
	if err := TightenModes(building); err != nil {
		return err
	}
	if err := syncDirectory(building); err != nil {
		return err
	}
	// raft.db is closed before it is renamed, so that no handle on it
	// outlives the migration.
	if err := bolt.Close(); err != nil {
		return fmt.Errorf("persistence: close %s: %w", boltPath, err)
	}
	if err := os.Rename(building, target); err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	backup := filepath.Join(dataDir, migratedBoltPrefix+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(boltPath, backup); err != nil {
		return fmt.Errorf("persistence: the WAL is in place but %s could not be moved aside, so the node would still start on it: %w", boltPath, err)
	}
	return syncDirectory(dataDir)
}

// openBoltReadOnly opens raft.db for reading after checkBolt has read it
// through. Read-only takes bolt's shared lock, which a running node's
// exclusive lock holds off: waiting boltLockWait for it is how a running
// node is told apart.
func openBoltReadOnly(path string) (*raftboltdb.BoltStore, error) {
	err := checkBolt(path)
	if errors.Is(err, ErrInUse) {
		return nil, ErrNodeRunning
	}
	if err != nil {
		return nil, err
	}
	var bolt *raftboltdb.BoltStore
	err = faultsAsErrors(func() error {
		var err error
		bolt, err = raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: boltLockWait}})
		return err
	})
	if err = boltError(path, err); errors.Is(err, ErrInUse) {
		return nil, ErrNodeRunning
	}
	return bolt, err
}

// buildWAL makes a fresh WAL in dir, removing what an earlier run left
// there, and copies bolt's entries and stable keys into it. Every
// StoreLogs is an fsync of its segment, and the stable keys are committed
// to the WAL's own metadata file, so all of it is on disk when the WAL is
// closed.
func buildWAL(dir string, bolt *raftboltdb.BoltStore, progress func(done, total uint64)) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("persistence: remove the unfinished %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, dirMode); err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	w, err := openWAL(dir)
	if err != nil {
		return fmt.Errorf("persistence: open %s: %w", dir, err)
	}
	if err := copyEntries(w, bolt, progress); err != nil {
		w.Close()
		return err
	}
	if err := copyStable(w, bolt); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("persistence: close %s: %w", dir, err)
	}
	return nil
}

// openWAL opens (creating) the WAL in dir with the node's own options
// (OpenWAL: private files, a metadata store that Close really closes).
func openWAL(dir string) (*WAL, error) {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("persistence: %w", err)
	}
	return OpenWAL(dir, hclog.NewNullLogger())
}

// copyEntries appends bolt's entries, first to last, to dst in batches.
func copyEntries(dst raft.LogStore, bolt *raftboltdb.BoltStore, progress func(done, total uint64)) error {
	first, last, err := boltBounds(bolt)
	if err != nil {
		return err
	}
	total := entryCount(first, last)
	progress(0, total)
	batch := make([]*raft.Log, 0, migrateBatchEntries)
	for index := first; total > 0 && index <= last; index++ {
		entry := new(raft.Log)
		if err := bolt.GetLog(index, entry); err != nil {
			return fmt.Errorf("persistence: read entry %d from %s: %w", index, BoltFile, err)
		}
		batch = append(batch, entry)
		if len(batch) == cap(batch) || index == last {
			if err := dst.StoreLogs(batch); err != nil {
				return fmt.Errorf("persistence: append entries %d to %d to the WAL: %w", batch[0].Index, index, err)
			}
			progress(index-first+1, total)
			batch = batch[:0]
		}
	}
	return nil
}

// copyStable copies the keys raft keeps in its stable store. A key raft
// has not written yet (LastVoteCand before this node ever voted) is left
// unset in the WAL too, so raft reads it the same from either store.
func copyStable(dst raft.StableStore, bolt *raftboltdb.BoltStore) error {
	for _, key := range stableUint64Keys {
		if err := copyStableKey(key, bolt.GetUint64, dst.SetUint64); err != nil {
			return err
		}
	}
	for _, key := range stableKeys {
		if err := copyStableKey(key, bolt.Get, dst.Set); err != nil {
			return err
		}
	}
	return nil
}

// copyStableKey copies one key with get from bolt and set on the WAL,
// unless bolt has no such key.
func copyStableKey[V any](key []byte, get func([]byte) (V, error), set func([]byte, V) error) error {
	v, err := get(key)
	if errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("persistence: read %s from %s: %w", key, BoltFile, err)
	}
	if err := set(key, v); err != nil {
		return fmt.Errorf("persistence: write %s to the WAL: %w", key, err)
	}
	return nil
}

// verifyWAL opens the WAL in dir afresh, as the node will, and checks that
// it holds exactly bolt's entries, every one equal, and bolt's stable keys.
func verifyWAL(dir string, bolt *raftboltdb.BoltStore) error {
	w, err := openWAL(dir)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer w.Close()
	first, last, err := boltBounds(bolt)
	if err != nil {
		return err
	}
	gotFirst, err := w.FirstIndex()
	if err != nil {
		return err
	}
	gotLast, err := w.LastIndex()
	if err != nil {
		return err
	}
	if gotFirst != first || gotLast != last {
		return fmt.Errorf("it holds entries %d to %d (%d), %s holds %d to %d (%d)",
			gotFirst, gotLast, entryCount(gotFirst, gotLast), BoltFile, first, last, entryCount(first, last))
	}
	for index := first; entryCount(first, last) > 0 && index <= last; index++ {
		var want, got raft.Log
		if err := bolt.GetLog(index, &want); err != nil {
			return fmt.Errorf("read entry %d from %s: %w", index, BoltFile, err)
		}
		if err := w.GetLog(index, &got); err != nil {
			return fmt.Errorf("read entry %d: %w", index, err)
		}
		if !sameEntry(&want, &got) {
			return fmt.Errorf("entry %d differs", index)
		}
	}
	for _, key := range stableUint64Keys {
		want, err := bolt.GetUint64(key)
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			want, err = 0, nil
		}
		if err != nil {
			return err
		}
		got, err := w.GetUint64(key)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s is %d, %s has %d", key, got, BoltFile, want)
		}
	}
	for _, key := range stableKeys {
		want, err := bolt.Get(key)
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			want, err = nil, nil
		}
		if err != nil {
			return err
		}
		got, err := w.Get(key)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s is %q, %s has %q", key, got, BoltFile, want)
		}
	}
	return nil
}

// sameEntry reports whether two log entries carry the same index, term,
// type, bytes and append time.
func sameEntry(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type &&
		bytes.Equal(a.Data, b.Data) && bytes.Equal(a.Extensions, b.Extensions) &&
		a.AppendedAt.Equal(b.AppendedAt)
}

// boltBounds returns the first and last index of bolt's log; both are 0 when
// it is empty.
func boltBounds(bolt *raftboltdb.BoltStore) (first, last uint64, err error) {
	if first, err = bolt.FirstIndex(); err != nil {
		return 0, 0, fmt.Errorf("persistence: read %s: %w", BoltFile, err)
	}
	if last, err = bolt.LastIndex(); err != nil {
		return 0, 0, fmt.Errorf("persistence: read %s: %w", BoltFile, err)
	}
	return first, last, nil
}

// entryCount is how many entries a log from first to last holds: none when
// it is empty (first is 0).
func entryCount(first, last uint64) uint64 {
	if first == 0 || last < first {
		return 0
	}
	return last - first + 1
}

// syncDirectory fsyncs a directory, so that the names created or renamed in it
// survive a crash.
func syncDirectory(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("persistence: sync %s: %w", dir, err)
	}
	return nil
}
