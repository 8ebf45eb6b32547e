//go:build unix

package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// migrationFixture is what a test wrote into a bolt data dir, to compare
// the WAL with after migrating.
type migrationFixture struct {
	entries []*raft.Log
	term    uint64
	vote    uint64
	cand    []byte
}

// writeBoltDataDir makes a data dir on bolt through OpenStores, as a node
// would, holding n entries from firstIndex on (the earlier ones taken off
// by a snapshot's compaction) and raft's three stable keys. The entries
// differ in size, type and extensions, so a copy that dropped or mixed up
// any field would show.
func writeBoltDataDir(t *testing.T, dir string, firstIndex uint64, n int) migrationFixture {
	t.Helper()
	s, err := OpenStores(dir, LogBolt, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fx := migrationFixture{term: 7, vote: 6, cand: []byte("10.0.0.2:7000")}
	for i := range n {
		index := firstIndex + uint64(i)
		e := &raft.Log{Index: index, Term: 1 + index/100, Type: raft.LogCommand,
			Data:       bytes.Repeat([]byte{byte(index)}, 1+int(index%300)),
			AppendedAt: time.Date(2026, 11, 25, 14, 0, 0, int(index)*1000, time.UTC)}
		if i%50 == 0 {
			e.Type = raft.LogConfiguration
			e.Extensions = []byte(fmt.Sprintf("ext-%d", index))
		}
		fx.entries = append(fx.entries, e)
	}
	// Straight into bolt, beneath the entry checksums, so that the entries
	// read back raw are fx's own; the migration copies entries as stored.
	if err := s.Stable.(raft.LogStore).StoreLogs(fx.entries); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []struct {
		key string
		val uint64
	}{{"CurrentTerm", fx.term}, {"LastVoteTerm", fx.vote}} {
		if err := s.Stable.SetUint64([]byte(kv.key), kv.val); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Stable.Set([]byte("LastVoteCand"), fx.cand); err != nil {
		t.Fatal(err)
	}
	return fx
}

// checkWAL opens dir/wal and compares every entry and stable key with fx.
func checkWAL(t *testing.T, dir string, fx migrationFixture) {
	t.Helper()
	w, err := openWAL(filepath.Join(dir, WALDir))
	if err != nil {
		t.Fatalf("open the migrated WAL: %v", err)
	}
	defer w.Close()
	first, _ := w.FirstIndex()
	last, _ := w.LastIndex()
	if first != fx.entries[0].Index || last != fx.entries[len(fx.entries)-1].Index {
		t.Fatalf("WAL holds %d..%d, want %d..%d", first, last, fx.entries[0].Index, fx.entries[len(fx.entries)-1].Index)
	}
	for _, want := range fx.entries {
		var got raft.Log
		if err := w.GetLog(want.Index, &got); err != nil {
			t.Fatalf("entry %d: %v", want.Index, err)
		}
		if !sameEntry(want, &got) {
			t.Fatalf("entry %d: got %+v, want %+v", want.Index, got, want)
		}
	}
	term, _ := w.GetUint64([]byte("CurrentTerm"))
	vote, _ := w.GetUint64([]byte("LastVoteTerm"))
	cand, _ := w.Get([]byte("LastVoteCand"))
	if term != fx.term || vote != fx.vote || !bytes.Equal(cand, fx.cand) {
		t.Fatalf("stable keys: CurrentTerm %d LastVoteTerm %d LastVoteCand %q, want %d %d %q", term, vote, cand, fx.term, fx.vote, fx.cand)
	}
}

// backups lists the raft.db.migrated-* files in dir.
func backups(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, migratedBoltPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestMigrateBoltToWALRoundTrip migrates a data dir whose log starts after
// a compaction and spans several batches: the WAL holds every entry and
// stable key, byte for byte; progress counts up to the total; raft.db is
// kept as raft.db.migrated-<time>, and nothing of the build is left.
func TestMigrateBoltToWALRoundTrip(t *testing.T) {
	dir := t.TempDir()
	const n = 2*migrateBatchEntries + 17
	fx := writeBoltDataDir(t, dir, 41, n)

	var calls [][2]uint64
	if err := MigrateBoltToWAL(dir, func(done, total uint64) { calls = append(calls, [2]uint64{done, total}) }); err != nil {
		t.Fatalf("MigrateBoltToWAL: %v", err)
	}
	checkWAL(t, dir, fx)

	want := [][2]uint64{{0, n}, {migrateBatchEntries, n}, {2 * migrateBatchEntries, n}, {n, n}}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("progress %v, want %v", calls, want)
	}
	if _, err := os.Stat(filepath.Join(dir, BoltFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("raft.db is still in place (stat: %v): the node would start on bolt", err)
	}
	if b := backups(t, dir); len(b) != 1 {
		t.Errorf("backups %q, want one raft.db.migrated-*", b)
	}
	if _, err := os.Stat(filepath.Join(dir, walMigratingDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("wal.migrating left behind (stat: %v)", err)
	}
}

// TestMigrateBoltToWALEmptyLog migrates a node that has its stable keys
// but no entries (or whose every entry went into a snapshot): the WAL is
// made, empty, with the keys.
func TestMigrateBoltToWALEmptyLog(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStores(dir, LogBolt, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := MigrateBoltToWAL(dir, nil); err != nil {
		t.Fatalf("MigrateBoltToWAL: %v", err)
	}
	w, err := openWAL(filepath.Join(dir, WALDir))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	last, _ := w.LastIndex()
	term, _ := w.GetUint64([]byte("CurrentTerm"))
	cand, _ := w.Get([]byte("LastVoteCand"))
	if last != 0 || term != 3 || cand != nil {
		t.Fatalf("WAL: last index %d, CurrentTerm %d, LastVoteCand %q; want 0, 3, unset", last, term, cand)
	}
}

// TestMigrateBoltToWALRefusals checks each refusal: its own error, and the
// data dir left as it was.
func TestMigrateBoltToWALRefusals(t *testing.T) {
	t.Run("no raft.db", func(t *testing.T) {
		dir := t.TempDir()
		if err := MigrateBoltToWAL(dir, nil); !errors.Is(err, ErrNoBoltLog) {
			t.Fatalf("got %v, want ErrNoBoltLog", err)
		}
		if _, err := os.Stat(filepath.Join(dir, walMigratingDir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("made %s on a refusal", walMigratingDir)
		}
	})
	t.Run("node running", func(t *testing.T) {
		dir := t.TempDir()
		writeBoltDataDir(t, dir, 1, 3)
		s, err := OpenStores(dir, LogBolt, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = MigrateBoltToWAL(dir, nil)
		if !errors.Is(err, ErrNodeRunning) || !strings.Contains(err.Error(), "the node is running") {
			t.Fatalf("got %v, want ErrNodeRunning", err)
		}
		if _, err := os.Stat(filepath.Join(dir, walMigratingDir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("made %s while the node runs", walMigratingDir)
		}
	})
	t.Run("wal exists", func(t *testing.T) {
		dir := t.TempDir()
		writeBoltDataDir(t, dir, 1, 3)
		if err := os.Mkdir(filepath.Join(dir, WALDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := MigrateBoltToWAL(dir, nil); !errors.Is(err, ErrWALExists) {
			t.Fatalf("got %v, want ErrWALExists", err)
		}
		if _, err := os.Stat(filepath.Join(dir, BoltFile)); err != nil {
			t.Errorf("raft.db after a refusal: %v", err)
		}
	})
	t.Run("migrated already", func(t *testing.T) {
		dir := t.TempDir()
		writeBoltDataDir(t, dir, 1, 3)
		if err := MigrateBoltToWAL(dir, nil); err != nil {
			t.Fatal(err)
		}
		if err := MigrateBoltToWAL(dir, nil); !errors.Is(err, ErrNoBoltLog) {
			t.Fatalf("second run: got %v, want ErrNoBoltLog", err)
		}
	})
}

// TestMigrateBoltToWALRedoesAnUnfinishedRun leaves what a run killed while
// copying leaves, a wal.migrating holding part of the log (and a stray
// file), beside the untouched raft.db: the next run throws it away and
// migrates everything.
func TestMigrateBoltToWALRedoesAnUnfinishedRun(t *testing.T) {
	dir := t.TempDir()
	fx := writeBoltDataDir(t, dir, 1, 300)
	building := filepath.Join(dir, walMigratingDir)
	if err := os.Mkdir(building, 0o700); err != nil {
		t.Fatal(err)
	}
	partial, err := openWAL(building)
	if err != nil {
		t.Fatal(err)
	}
	if err := partial.StoreLogs(fx.entries[:100]); err != nil {
		t.Fatal(err)
	}
	partial.Close()
	if err := os.WriteFile(filepath.Join(building, "stray"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	if err := MigrateBoltToWAL(dir, nil); err != nil {
		t.Fatalf("MigrateBoltToWAL: %v", err)
	}
	checkWAL(t, dir, fx)
	if _, err := os.Stat(filepath.Join(dir, WALDir, "stray")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the unfinished run's files were kept (stat: %v)", err)
	}
}

// TestMigrateBoltToWALIsPrivate migrates under a umask of 022 (raft-wal
// creates its files 0644): the WAL directory and every file in it end
// private, and so does the kept raft.db.
func TestMigrateBoltToWALIsPrivate(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o022))
	dir := t.TempDir()
	writeBoltDataDir(t, dir, 1, 10)
	if err := MigrateBoltToWAL(dir, nil); err != nil {
		t.Fatal(err)
	}
	loose := looseModes(t, filepath.Join(dir, WALDir), nil)
	for _, b := range backups(t, dir) {
		loose = append(loose, looseModes(t, b, nil)...)
	}
	if len(loose) > 0 {
		t.Errorf("not private: %q", loose)
	}
}

// TestVerifyWALCatchesADifference builds WALs that differ from raft.db in
// one way each, as a faulty copy would, and checks that the read-back
// refuses every one: a missing entry, one changed byte, a changed term,
// a lost vote.
func TestVerifyWALCatchesADifference(t *testing.T) {
	dir := t.TempDir()
	fx := writeBoltDataDir(t, dir, 1, 20)
	bolt, err := openBoltReadOnly(filepath.Join(dir, BoltFile))
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	changed := func(index uint64, change func(*raft.Log)) []*raft.Log {
		out := make([]*raft.Log, len(fx.entries))
		for i, e := range fx.entries {
			c := *e
			c.Data = bytes.Clone(e.Data)
			if e.Index == index {
				change(&c)
			}
			out[i] = &c
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		entries []*raft.Log
		term    uint64
		cand    []byte
		want    string
	}{
		{"same", fx.entries, fx.term, fx.cand, ""},
		{"an entry short", fx.entries[:19], fx.term, fx.cand, "holds entries 1 to 19"},
		{"a byte changed", changed(12, func(e *raft.Log) { e.Data[0]++ }), fx.term, fx.cand, "entry 12 differs"},
		{"a term changed", changed(3, func(e *raft.Log) { e.Term++ }), fx.term, fx.cand, "entry 3 differs"},
		{"current term lost", fx.entries, 0, fx.cand, "CurrentTerm is 0"},
		{"vote lost", fx.entries, fx.term, nil, "LastVoteCand is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wdir := filepath.Join(t.TempDir(), "wal")
			if err := os.Mkdir(wdir, 0o700); err != nil {
				t.Fatal(err)
			}
			w, err := openWAL(wdir)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.StoreLogs(tc.entries); err != nil {
				t.Fatal(err)
			}
			if tc.term != 0 {
				err = errors.Join(err, w.SetUint64([]byte("CurrentTerm"), tc.term))
			}
			err = errors.Join(err, w.SetUint64([]byte("LastVoteTerm"), fx.vote))
			if tc.cand != nil {
				err = errors.Join(err, w.Set([]byte("LastVoteCand"), tc.cand))
			}
			if err := errors.Join(err, w.Close()); err != nil {
				t.Fatal(err)
			}
			err = verifyWAL(wdir, bolt)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("verify an exact copy: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("verify: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
