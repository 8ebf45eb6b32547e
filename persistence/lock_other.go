//go:build !unix

package persistence

// LockFile is the file under the data dir that a running node holds
// locked on Unix; see lock_unix.go.
const LockFile = "lock"

// DirLock is a held data dir lock.
type DirLock struct{}

// LockDataDir takes no lock where flock is missing: there the bolt store's
// own lock is the only guard, and the WAL has none.
func LockDataDir(dir string) (*DirLock, error) { return &DirLock{}, nil }

// Unlock releases the lock.
func (l *DirLock) Unlock() error { return nil }
