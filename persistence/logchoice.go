package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LogStore names a store for the raft log and stable store: the value of
// addrwatchd's --raft-log.
type LogStore string

const (
	// LogWAL is hashicorp/raft-wal: segment files appended with one sync
	// per append, dropped whole once a snapshot covers them. The default
	// for a new data dir.
	LogWAL LogStore = "wal"
	// LogBolt is raft-boltdb/v2: one bbolt file, raft.db, with two syncs
	// per commit. Data dirs made before the WAL keep it.
	LogBolt LogStore = "bolt"
)

// ParseLogStore reads a --raft-log value.
func ParseLogStore(s string) (LogStore, error) {
	switch LogStore(s) {
	case LogWAL, LogBolt:
		return LogStore(s), nil
	}
	return "", fmt.Errorf("unknown raft log store %q (want %q or %q)", s, LogWAL, LogBolt)
}

// ErrTwoLogStores means a data dir holds both a bolt log and a WAL: which
// one holds this node's state cannot be told from here, and starting on
// either could silently drop the writes in the other.
var ErrTwoLogStores = errors.New("refusing to start")

// chooseLogStore decides which log store a data dir uses. A data dir
// keeps the store it already has, whatever want says, since the other
// store would start empty beside the state in this one; only a data dir
// with neither takes want. why says which applied, for the log line at
// start; fresh says the data dir holds neither store.
func chooseLogStore(dir string, want LogStore) (use LogStore, why string, fresh bool, err error) {
	hasBolt, err := exists(filepath.Join(dir, BoltFile))
	if err != nil {
		return "", "", false, err
	}
	hasWAL, err := exists(filepath.Join(dir, WALDir))
	if err != nil {
		return "", "", false, err
	}
	switch {
	case hasBolt && hasWAL:
		return "", "", false, fmt.Errorf("%w: the data dir %s holds both a bolt raft log (%s) and a WAL (%s/): only one of them holds this node's state. Move aside the one that is not this node's current log (the older one, e.g. a bolt file left by a migration) and start again",
			ErrTwoLogStores, dir, BoltFile, WALDir)
	case hasBolt:
		return LogBolt, fmt.Sprintf("%s exists in this data dir; --raft-log %s applies to new data dirs", BoltFile, want), false, nil
	case hasWAL:
		return LogWAL, fmt.Sprintf("%s/ exists in this data dir; --raft-log %s applies to new data dirs", WALDir, want), false, nil
	}
	return want, fmt.Sprintf("a new data dir, --raft-log %s", want), true, nil
}

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("persistence: %w", err)
	}
	return true, nil
}
