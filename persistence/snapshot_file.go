package persistence

import (
	"fmt"
	"io"
	"os"
)

// OpenSnapshotFile opens the snapshot file at path to be sent whole: the
// backup the CLI uploads for a restore, and each group's part of a sharded
// restore that a node sends the group's leader. The file must be a regular
// file that starts with SnapshotMagic, so that a wrong path (a directory, a
// proxy's error page kept as a backup) fails here rather than after a long
// upload; the receiver checks the rest. It returns the file at its start,
// for the caller to close, and its size in bytes.
func OpenSnapshotFile(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	size, err := checkSnapshotFile(f, path)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// checkSnapshotFile checks f, opened from path, for OpenSnapshotFile, and
// leaves it at its start.
func checkSnapshotFile(f *os.File, path string) (int64, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", path)
	}
	head := make([]byte, len(SnapshotMagic))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != SnapshotMagic {
		return 0, fmt.Errorf("%s is not an addrwatch backup file (no %s header)", path, SnapshotMagic)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return info.Size(), nil
}
