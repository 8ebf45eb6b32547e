//go:build unix

package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockFile is the file under the data dir that a running node holds
// locked, so that a second process on the same data dir is refused at
// once, whichever log store it uses. raft-wal opens its meta file with
// bolt's lock and no time limit, so without a guard of ours the second
// process would wait for ever (checkBolt's read-through of the meta file
// also times out, but that is a check of the file, not a lock).
const LockFile = "lock"

// DirLock is a held data dir lock.
type DirLock struct{ f *os.File }

// LockDataDir takes the data dir's lock, or returns ErrInUse at once when
// another process holds it. The lock is an flock on DATA/lock, released
// by Unlock or by the process's end, however it ends (kill -9 included),
// so a crashed node never leaves a stale lock behind.
func LockDataDir(dir string) (*DirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, fmt.Errorf("persistence: lock the data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrInUse
		}
		return nil, fmt.Errorf("persistence: lock %s: %w", path, err)
	}
	return &DirLock{f: f}, nil
}

// Unlock releases the lock.
func (l *DirLock) Unlock() error { return l.f.Close() }
