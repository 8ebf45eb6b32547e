package persistence

import (
	"errors"
	"fmt"
	walmetrics "github.com/hashicorp/raft-wal/metrics"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// WALDir is the directory under the data dir that holds the raft-wal log
// and stable store: its meta file (wal-meta.db, a bolt file with the
// segment list and the stable store's keys) and its segment files.
const WALDir = "wal"

// WAL is raft-wal's store with the meta store it was opened with. It is a
// raft.LogStore and a raft.StableStore.
type WAL struct {
	*wal.WAL
	meta *metadb.BoltMetaDB
}

// Close closes the WAL and its meta file. raft-wal's own Close leaves the
// meta file (and bolt's lock on it) open, and a second open of the same
// WAL in this process would then wait for that lock for ever.
func (w *WAL) Close() error {
	err := w.WAL.Close()
	if merr := w.meta.Close(); err == nil {
		err = merr
	}
	return err
}

// OpenWAL opens (creating if needed) the WAL in dir, the WAL directory
// itself (DATA/wal), which must exist. Its meta file is read through
// first (checkBolt), every failure to open is a CorruptError naming the
// WAL, never a crash, and its files are made 0600, as are the segment
// files it creates later. The caller must hold the data dir's lock
// (LockDataDir), since raft-wal takes none a second process would see in
// time.
func OpenWAL(dir string, logger hclog.Logger) (*WAL, error) {
	if err := checkWALFiles(dir); err != nil {
		return nil, err
	}
	if err := checkBolt(filepath.Join(dir, metadb.FileName)); err != nil {
		// The WAL is one store: the way back (a backup, or moving it
		// aside) is the same whichever of its files is damaged.
		var corrupt *CorruptError
		if errors.As(err, &corrupt) {
			return nil, &CorruptError{Path: dir, Err: fmt.Errorf("%s: %w", metadb.FileName, corrupt.Err)}
		}
		return nil, err
	}
	meta := &metadb.BoltMetaDB{}
	var w *wal.WAL
	err := faultsAsErrors(func() error {
		var err error
		w, err = wal.Open(dir, wal.WithMetaStore(meta), wal.WithLogger(logger),
			wal.WithSegmentFiler(indexlessSealFiler{segment.NewFiler(dir, privateFS{walfs.New()})}),
			// To go-metrics' process-wide instance, which
			// cluster.ExportRaftMetrics sends to /metrics as raft_wal_*.
			wal.WithMetricsCollector(walmetrics.NewGoMetricsCollector([]string{"raft", "wal"}, nil, nil)))
		return err
	})
	if err != nil {
		meta.Close()
		return nil, walError(dir, err)
	}
	store := &WAL{WAL: w, meta: meta}
	// raft-wal creates its meta file 0644 less the umask, once, when the
	// WAL is new.
	if err := TightenModes(dir); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// checkWALFiles refuses segment files with no meta file beside them.
// raft-wal would start an empty WAL and delete every segment it does not
// list, i.e. all of them: a lost meta file must not cost the log too.
func checkWALFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	hasMeta, segments := false, 0
	for _, e := range entries {
		switch {
		case e.Name() == metadb.FileName:
			hasMeta = true
		case strings.HasSuffix(e.Name(), ".wal"):
			segments++
		}
	}
	if !hasMeta && segments > 0 {
		return &CorruptError{Path: dir, Err: fmt.Errorf("%d segment files but no %s listing them", segments, metadb.FileName)}
	}
	return nil
}

// walError sorts out what went wrong opening the WAL: an error of the file
// system (permissions, no space), or else the WAL's own contents.
func walError(dir string, err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && !errors.Is(err, types.ErrCorrupt) {
		return fmt.Errorf("persistence: open the WAL %s: %w", dir, err)
	}
	return &CorruptError{Path: dir, Err: err}
}

// privateFS is raft-wal's file system with every segment file made 0600
// as it is created: raft-wal creates them 0644 less the umask, and
// addrwatchd's umask cannot be set on every platform.
type privateFS struct{ *walfs.FS }

func (p privateFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := p.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(filepath.Join(dir, name), fileMode); err != nil {
		f.Close()
		return nil, fmt.Errorf("persistence: make %s private: %w", name, err)
	}
	return f, nil
}

// indexlessSealFiler works around hashicorp/raft-wal#31 (v0.4.0, the only
// release): when raft deletes the tail of the log (a new leader replacing
// a follower's uncommitted entries), raft-wal marks the tail segment
// sealed in its metadata without writing the segment's index block. Until
// the process ends the segment is read through its in-memory index; after
// a restart Open finds no index block, every entry of the segment reads
// "sealed segment has no index block", and raft cannot start. Such a
// segment is opened the way an unsealed tail is recovered instead: by
// scanning its frames, which rebuilds the index in memory. The WAL never
// appends to it (its metadata says sealed) and reads only up to the
// MaxIndex the metadata gives it, so the frames the truncation dropped
// stay unread.
type indexlessSealFiler struct{ *segment.Filer }

func (f indexlessSealFiler) Open(info types.SegmentInfo) (types.SegmentReader, error) {
	if !info.SealTime.IsZero() && info.IndexStart == 0 {
		return f.Filer.RecoverTail(info)
	}
	return f.Filer.Open(info)
}
