//go:build unix

package persistence

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// makeStore leaves a closed store of kind in dir holding a term and a few
// entries.
func makeStore(t *testing.T, dir string, kind LogStore) {
	t.Helper()
	s, err := OpenStores(dir, kind, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != kind {
		t.Fatalf("a new data dir got the %s store, want %s", s.Kind, kind)
	}
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 20; i++ {
		if err := s.Log.StoreLog(&raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte(strings.Repeat("x", 100))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenStoresChoosesTheLogStore: a new data dir takes the store asked
// for; a data dir keeps the store it has whatever is asked, with the
// reason in Why; a data dir with both is refused.
func TestOpenStoresChoosesTheLogStore(t *testing.T) {
	cases := []struct {
		name    string
		has     []LogStore // the stores the data dir holds before
		want    LogStore   // --raft-log
		use     LogStore
		whyHas  string
		refused bool
	}{
		{name: "new dir, wal", want: LogWAL, use: LogWAL, whyHas: "a new data dir"},
		{name: "new dir, bolt", want: LogBolt, use: LogBolt, whyHas: "a new data dir"},
		{name: "raft.db, wal asked", has: []LogStore{LogBolt}, want: LogWAL, use: LogBolt, whyHas: "raft.db exists in this data dir; --raft-log wal applies to new data dirs"},
		{name: "wal, bolt asked", has: []LogStore{LogWAL}, want: LogBolt, use: LogWAL, whyHas: "wal/ exists in this data dir; --raft-log bolt applies to new data dirs"},
		{name: "both", has: []LogStore{LogWAL, LogBolt}, want: LogWAL, refused: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, kind := range c.has {
				// Each store is made in a data dir of its own, then moved
				// into this one: OpenStores itself never makes the second.
				other := t.TempDir()
				makeStore(t, other, kind)
				name := map[LogStore]string{LogWAL: WALDir, LogBolt: BoltFile}[kind]
				if err := os.Rename(filepath.Join(other, name), filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			s, err := OpenStores(dir, c.want, hclog.NewNullLogger())
			if c.refused {
				if err == nil {
					s.Close()
					t.Fatal("a data dir with both raft.db and wal/ opened")
				}
				if !errors.Is(err, ErrTwoLogStores) || !strings.Contains(err.Error(), "raft.db") || !strings.Contains(err.Error(), "wal/") {
					t.Fatalf("both stores: %v, want ErrTwoLogStores naming both", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Kind != c.use || !strings.Contains(s.Why, c.whyHas) {
				t.Fatalf("store %s (%s), want %s (%s)", s.Kind, s.Why, c.use, c.whyHas)
			}
			if len(c.has) > 0 {
				// The store kept is the one with the state in it.
				if last, err := s.Log.LastIndex(); err != nil || last != 20 {
					t.Fatalf("the kept store ends at %d (%v), want 20", last, err)
				}
			}
			other := map[LogStore]string{LogWAL: BoltFile, LogBolt: WALDir}[c.use]
			if _, err := os.Stat(filepath.Join(dir, other)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was made beside the %s store: %v", other, c.use, err)
			}
		})
	}
	if _, err := ParseLogStore("sqlite"); err == nil {
		t.Fatal(`ParseLogStore("sqlite") accepted`)
	}
}

// TestOpenStoresReportsCorruptWAL damages a stopped node's WAL: the
// header of its segment file, an entry before the last batch (whose
// checksum raft-wal does not check), its meta file, and the meta file
// lost beside the segments. Each is a CorruptError naming the WAL, never a
// panic or an empty log started over the segments.
func TestOpenStoresReportsCorruptWAL(t *testing.T) {
	damages := map[string]func(t *testing.T, walDir string){
		"segment header": func(t *testing.T, walDir string) {
			scribble(t, onlySegment(t, walDir), 0, 32)
		},
		"meta file": func(t *testing.T, walDir string) {
			scribble(t, filepath.Join(walDir, "wal-meta.db"), 0, 2*4096)
		},
		// The last 15 bytes of entry 1's payload, its AppendedAt time: the
		// first entry frame follows the 32-byte file header, with the
		// payload's length in bytes 4-7 of its 8-byte frame header.
		"an entry": func(t *testing.T, walDir string) {
			segment := onlySegment(t, walDir)
			b, err := os.ReadFile(segment)
			if err != nil {
				t.Fatal(err)
			}
			end := 32 + 8 + int64(binary.LittleEndian.Uint32(b[32+4:]))
			scribble(t, segment, end-15, 15)
		},
		"meta file lost": func(t *testing.T, walDir string) {
			if err := os.Remove(filepath.Join(walDir, "wal-meta.db")); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			makeStore(t, dir, LogWAL)
			walDir := filepath.Join(dir, WALDir)
			damage(t, walDir)
			s, err := OpenStores(dir, LogWAL, hclog.NewNullLogger())
			if err == nil {
				s.Close()
				t.Fatal("a damaged WAL opened")
			}
			var corrupt *CorruptError
			if !errors.As(err, &corrupt) {
				t.Fatalf("%v, want a CorruptError", err)
			}
			if corrupt.Path != walDir || !strings.HasPrefix(err.Error(), "wal is corrupt; restore from a backup ("+walDir) {
				t.Fatalf("message %q does not say the WAL is corrupt with its path", err)
			}
			if segs, _ := filepath.Glob(filepath.Join(walDir, "*.wal")); len(segs) == 0 {
				t.Fatal("the segments were deleted")
			}
		})
	}
}

func onlySegment(t *testing.T, walDir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(walDir, "*.wal"))
	if err != nil || len(segs) != 1 {
		t.Fatalf("segments %v (%v), want one", segs, err)
	}
	return segs[0]
}

// scribble overwrites n bytes of the file at path from at with 0xff.
func scribble(t *testing.T, path string, at, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", int(n))), at); err != nil {
		t.Fatal(err)
	}
}
