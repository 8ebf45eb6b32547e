package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// The data dir holds password and key hashes (in the log, the snapshots
// and the backups made from them), so nothing in it may be readable by
// other users, whatever the parent directory's mode or the umask.
const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// MakePrivate makes the data dir 0700 and the named entries in it, with
// everything under them, private (TightenModes). It repairs a data dir
// written by an older build, whose snapshots were 0755 directories of 0644
// files. Only the entries the caller names are touched: the data dir may
// hold files that are not the server's.
func MakePrivate(dir string, names ...string) error {
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("persistence: make %s private: %w", dir, err)
	}
	for _, name := range names {
		if err := TightenModes(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// TightenModes makes root (a file or a directory) and everything under it
// private to this user: directories 0700, other files 0600. A missing root
// is left missing, and a symbolic link as it is (it has no mode of its
// own, and its target may be anywhere).
func TightenModes(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile: raft reaps old snapshots
		}
		if err != nil {
			return err
		}
		want := fileMode
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return nil
		case d.IsDir():
			want = dirMode
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.Mode().Perm() == want {
			return nil
		}
		if err := os.Chmod(path, want); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("persistence: make %s private: %w", path, err)
		}
		return nil
	})
}

// privateSnapshots is raft's snapshot store with every snapshot made
// private once it is written. raft's FileSnapshotStore creates each
// snapshot as a 0755 directory of files created 0666 less the umask; its
// parent, snapshots/, is made 0700 before the store first uses it, so no
// other user can reach a snapshot even while it is being written, and
// this puts the modes right for anyone who copies the directory away.
type privateSnapshots struct {
	raft.SnapshotStore
	dir string // the directory that holds every snapshot
}

func (s *privateSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	return &privateSink{SnapshotSink: sink, dir: s.dir}, nil
}

// privateSink tightens the modes under the snapshot directory once the
// snapshot is complete (and in its final place).
type privateSink struct {
	raft.SnapshotSink
	dir string
}

func (s *privateSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	return TightenModes(s.dir)
}
