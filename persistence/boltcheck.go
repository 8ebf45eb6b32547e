package persistence

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// CorruptError says a store's file cannot be read as what it should be.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is corrupt; restore from a backup (%s: %v)", filepath.Base(e.Path), e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ErrInUse means another process holds the data dir's stores open.
var ErrInUse = errors.New("the data dir is in use by another process (is addrwatchd running on it?)")

// boltLockWait bounds the wait for bolt's file lock: a second process on
// the same data dir fails instead of hanging.
const boltLockWait = time.Second

// boltNestingMax bounds how deep checkBolt follows nested buckets.
// raft-boltdb nests none; a deeper chain is a damaged page pointing into
// itself, which would otherwise recurse until the stack runs out.
const boltNestingMax = 4

// checkBolt reads every page of the bolt file at path that a bucket
// reaches, every key and every value, before raft-boltdb opens it for
// writing. bbolt trusts its file: a damaged page makes it index out of
// range, panic, or fault on memory past the end of a truncated file
// (SIGBUS), and it does some of that in a goroutine of its own while it
// opens a file written without a free list (as ours are), where nothing
// can recover it. Reading the file first, read-only (which skips that
// goroutine), on this goroutine with faults turned into panics, turns
// each of these into a CorruptError. A missing or empty file is not
// checked: it holds nothing yet, and whether that is right is for the
// caller to judge.
func checkBolt(path string) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && info.Size() == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	var db *bbolt.DB
	err = faultsAsErrors(func() error {
		var err error
		db, err = bbolt.Open(path, fileMode, &bbolt.Options{ReadOnly: true, Timeout: boltLockWait})
		if err != nil {
			return err
		}
		return db.View(func(tx *bbolt.Tx) error {
			// A file shorter than its own high-water mark was truncated;
			// reading the missing pages would fault.
			if tx.Size() > info.Size() {
				return fmt.Errorf("the file is %d bytes but its pages reach %d bytes: it was truncated", info.Size(), tx.Size())
			}
			return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error { return readBucket(b, 1) })
		})
	})
	if db != nil {
		db.Close()
	}
	return boltError(path, err)
}

// boltError sorts out what went wrong opening or reading a bolt file: the
// lock held by another process, an error of the file system (permissions,
// no space), or else the file's own contents.
func boltError(path string, err error) error {
	var pathErr *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return ErrInUse
	case errors.As(err, &pathErr):
		return fmt.Errorf("persistence: open %s: %w", path, err)
	}
	return &CorruptError{Path: path, Err: err}
}

// readBucket reads every key and value of b and of the buckets in it.
// Each value is summed so that every page it spans is read.
func readBucket(b *bbolt.Bucket, depth int) error {
	if depth > boltNestingMax {
		return errors.New("buckets nest deeper than any this program writes")
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			nested := b.Bucket(k)
			if nested == nil {
				return fmt.Errorf("key %x has neither a value nor a bucket", k)
			}
			return readBucket(nested, depth+1)
		}
		crc32.Update(crc32.Checksum(k, table), table, v)
		return nil
	})
}

// faultsAsErrors runs fn with memory faults turned into panics, and
// returns any panic as an error. It is for code that reads a memory map
// of a file that may be damaged: only such code may run inside it, since
// it cannot tell a damaged file from a bug.
func faultsAsErrors(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if fault, isFault := r.(interface{ Addr() uintptr }); isFault {
			err = fmt.Errorf("memory fault at %#x reading the file's memory map (past its end?)", fault.Addr())
		} else if r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return fn()
}
