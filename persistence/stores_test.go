//go:build unix

package persistence

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"
)

// TestOpenStoresMakesTheDataDirPrivate lays out a data dir the way an
// older build left it (a 0755 parent and data dir, snapshots 0755 with
// 0644 files), opens it under a umask of 022 and takes a snapshot: every
// directory of the stores ends 0700 and every file 0600, and a file that
// is not the server's is left alone.
func TestOpenStoresMakesTheDataDirPrivate(t *testing.T) {
	for _, kind := range []LogStore{LogWAL, LogBolt} {
		t.Run(string(kind), func(t *testing.T) { testOpenStoresMakesTheDataDirPrivate(t, kind) })
	}
}

func testOpenStoresMakesTheDataDirPrivate(t *testing.T, kind LogStore) {
	defer syscall.Umask(syscall.Umask(0o022))
	parent := filepath.Join(t.TempDir(), "srv")
	dir := filepath.Join(parent, "data")
	old := filepath.Join(dir, "snapshots", "2-5-1795604127178")
	for _, d := range []string{parent, dir, filepath.Join(dir, "snapshots"), old} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(old, "state.bin"), filepath.Join(old, "meta.json"), filepath.Join(dir, "operator-notes.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s, err := OpenStores(dir, kind, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("OpenStores: %v", err)
	}
	defer s.Close()
	sink, err := s.Snapshot.Create(raft.SnapshotVersionMax, 7, 1, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write([]byte("password and key hashes")); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}

	loose := looseModes(t, dir, map[string]fs.FileMode{"operator-notes.txt": 0o644})
	if len(loose) > 0 {
		t.Errorf("modes not as they should be (dirs 0700, files 0600, foreign files untouched): %v", loose)
	}
	if info, err := os.Stat(parent); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("the parent changed: %v %v", info.Mode(), err)
	}
}

// writeBoltLog fills a fresh data dir's log with entries spread over many
// bolt pages (some of them overflow pages) and returns the raft.db path.
func writeBoltLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenStores(dir, LogBolt, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := uint64(1); i <= 150; i++ {
		data := make([]byte, 100+rng.IntN(6000))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if err := s.Log.StoreLog(&raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "raft.db")
}

// openAndReadAll opens the stores on a copy of a damaged raft.db and reads
// every entry. It must never crash the process: it either reports the file
// corrupt or opens it.
func openAndReadAll(t *testing.T, damaged []byte) error {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "raft.db"), damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStores(dir, LogBolt, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	defer s.Close()
	// A damaged key may make the indexes anything: read as many entries
	// as were written, from the first.
	first, _ := s.Log.FirstIndex()
	for i := first; i < first+150; i++ {
		var entry raft.Log
		s.Log.GetLog(i, &entry) // an error is fine; a crash is not
	}
	return nil
}

// TestOpenStoresReportsCorruptRaftDB damages raft.db the ways disks and
// people do: random bytes over the meta pages, over each other page in
// turn, and the file cut short. Before, bbolt panicked (some of it in a
// goroutine of its own) or the process died of SIGBUS; now OpenStores
// returns a CorruptError naming the file, or opens a file whose damage
// lies in pages nothing uses.
func TestOpenStoresReportsCorruptRaftDB(t *testing.T) {
	path := writeBoltLog(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(good) / page
	rng := rand.New(rand.NewPCG(3, 4))
	scribble := func(at, n int) []byte {
		b := bytes.Clone(good)
		for i := at; i < at+n; i++ {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	mustBeCorrupt := func(what string, err error) {
		t.Helper()
		var corrupt *CorruptError
		if !errors.As(err, &corrupt) {
			t.Fatalf("%s: %v, want a CorruptError", what, err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "raft.db is corrupt; restore from a backup") || !strings.Contains(msg, corrupt.Path) {
			t.Fatalf("%s: message %q does not say raft.db is corrupt with its path", what, msg)
		}
	}

	mustBeCorrupt("both meta pages", openAndReadAll(t, scribble(0, 2*page)))
	corrupt := 0
	for p := 2; p < pages; p++ {
		err := openAndReadAll(t, scribble(p*page, page))
		var c *CorruptError
		switch {
		case errors.As(err, &c):
			corrupt++
		case err != nil:
			t.Fatalf("page %d: %v, want a CorruptError or none", p, err)
		}
	}
	// Many pages are free or hold the middle of a value, where random
	// bytes look like any other; a damaged page that bolt needs must be
	// found, and they are a good share of the file.
	if corrupt < pages/4 {
		t.Fatalf("only %d of %d damaged pages were found corrupt", corrupt, pages-2)
	}
	// bbolt grows the file ahead of its pages: losing pages below the
	// high-water mark is corruption, losing the unused tail is not.
	used := boltHighWater(t, path)
	for _, size := range []int{100, page, 2 * page, used / 2, used - page} {
		mustBeCorrupt("truncated", openAndReadAll(t, good[:size]))
	}
	if used < len(good) {
		if err := openAndReadAll(t, good[:used]); err != nil {
			t.Fatalf("truncated to its high-water mark %d of %d bytes: %v", used, len(good), err)
		}
	}
	// An empty file holds nothing yet: whether that is right is the
	// start check's call, not a corruption.
	if err := openAndReadAll(t, nil); err != nil {
		t.Fatalf("an empty raft.db: %v", err)
	}
	t.Logf("%d pages; %d damaged pages reported corrupt; the rest were free or inside a value", pages, corrupt)
}

// TestFaultsAsErrorsTurnsSIGBUSIntoAnError reads a memory map past the end
// of its file, which is what bbolt does with a truncated raft.db.
func TestFaultsAsErrorsTurnsSIGBUSIntoAnError(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "mapped"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(2 * 4096); err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 2*4096, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = faultsAsErrors(func() error {
		sum += mem[4096]
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "memory fault") {
		t.Fatalf("reading past the end of the file: %v (read %d), want a fault as an error", err, sum)
	}
}

// TestOpenStoresInUse opens a data dir twice: the second open says the dir
// is in use instead of waiting or calling the file corrupt.
func TestOpenStoresInUse(t *testing.T) {
	for _, kind := range []LogStore{LogWAL, LogBolt} {
		t.Run(string(kind), func(t *testing.T) { testOpenStoresInUse(t, kind) })
	}
}

func testOpenStoresInUse(t *testing.T, kind LogStore) {
	dir := t.TempDir()
	s, err := OpenStores(dir, kind, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		t.Fatal(err)
	}
	if again, err := OpenStores(dir, kind, hclog.NewNullLogger()); !errors.Is(err, ErrInUse) {
		if again != nil {
			again.Close()
		}
		t.Fatalf("second open: %v, want ErrInUse", err)
	}
}

// boltHighWater is how far the pages of the bolt file at path reach.
func boltHighWater(t *testing.T, path string) int {
	t.Helper()
	db, err := bbolt.Open(path, fileMode, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	if err := db.View(func(tx *bbolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return int(size)
}

// looseModes walks root (a directory or one file) and lists every path
// whose mode is not private (directories 0700, files 0600) or, for a file
// named in foreign, the mode given there.
func looseModes(t *testing.T, root string, foreign map[string]fs.FileMode) []string {
	t.Helper()
	var loose []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want, named := foreign[d.Name()]
		switch {
		case d.IsDir():
			want = 0o700
		case !named:
			want = 0o600
		}
		if got := info.Mode().Perm(); got != want {
			loose = append(loose, strings.TrimPrefix(path, root)+" "+got.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return loose
}
