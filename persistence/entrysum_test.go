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
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// storeFile is the file of a store kind that holds its entries.
func storeFile(t *testing.T, dir string, kind LogStore) string {
	if kind == LogBolt {
		return filepath.Join(dir, BoltFile)
	}
	return onlySegment(t, filepath.Join(dir, WALDir))
}

// entryPayload is entry i's payload in storeEntries: unique, so that the
// file offsets of one entry can be found.
func entryPayload(i uint64) []byte {
	return []byte(fmt.Sprintf("entry-%03d-%s", i, strings.Repeat("y", 90)))
}

// openStoresOf opens the stores of dir, a new data dir taking kind.
func openStoresOf(t *testing.T, dir string, kind LogStore) *Stores {
	t.Helper()
	s, err := OpenStores(dir, kind, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storeEntries leaves a closed store of kind in dir holding a term and
// entries 1 to 20.
func storeEntries(t *testing.T, dir string, kind LogStore) {
	t.Helper()
	s := openStoresOf(t, dir, kind)
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 20; i++ {
		if err := s.Log.StoreLog(&raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: entryPayload(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// scribbleInEntry overwrites n bytes in the middle of entry i's payload,
// wherever the file holds it (bolt keeps older copies of its pages).
func scribbleInEntry(t *testing.T, path string, i uint64, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	payload, found := entryPayload(i), 0
	for from := 0; ; found++ {
		at := bytes.Index(b[from:], payload)
		if at < 0 {
			break
		}
		scribble(t, path, int64(from+at+40), int64(n))
		from += at + len(payload)
	}
	if found == 0 {
		t.Fatalf("%s does not hold entry %d's payload", path, i)
	}
}

// TestDamagedEntryIsCorruptAtOpen damages 8 bytes in the middle of an
// entry's payload, where neither store checks anything. Before entry
// checksums both stores opened and handed the changed entry to raft (the
// FSM then panicked on it: "log entry N does not decode"); now the open
// is a CorruptError that names the entry.
func TestDamagedEntryIsCorruptAtOpen(t *testing.T) {
	for _, kind := range []LogStore{LogWAL, LogBolt} {
		t.Run(string(kind), func(t *testing.T) {
			dir := t.TempDir()
			storeEntries(t, dir, kind)
			scribbleInEntry(t, storeFile(t, dir, kind), 10, 8)
			s, err := OpenStores(dir, kind, hclog.NewNullLogger())
			if err == nil {
				s.Close()
				t.Fatal("a store with a damaged entry opened")
			}
			var corrupt *CorruptError
			if !errors.As(err, &corrupt) || !errors.Is(err, ErrEntryChecksum) || !strings.Contains(err.Error(), "log entry 10") {
				t.Fatalf("%v, want a CorruptError naming entry 10's checksum", err)
			}
		})
	}
}

// TestEntryChecksumsAreInvisibleAbove: what raft stores it reads back
// unchanged, Extensions included (raft-wal's verifier keeps its
// checkpoints there), on both stores and after a reopen.
func TestEntryChecksumsAreInvisibleAbove(t *testing.T) {
	for _, kind := range []LogStore{LogWAL, LogBolt} {
		t.Run(string(kind), func(t *testing.T) {
			dir := t.TempDir()
			s := openStoresOf(t, dir, kind)
			want := []*raft.Log{
				{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("conf")},
				{Index: 2, Term: 1, Type: raft.LogCommand, Data: []byte("cmd"), Extensions: []byte("verifier's")},
				{Index: 3, Term: 2, Type: raft.LogBarrier},
			}
			if err := s.Log.StoreLogs(want); err != nil {
				t.Fatal(err)
			}
			if want[1].Extensions == nil || string(want[1].Extensions) != "verifier's" {
				t.Fatalf("StoreLogs changed the caller's entry: %q", want[1].Extensions)
			}
			s.Close()
			s = openStoresOf(t, dir, kind)
			defer s.Close()
			for _, w := range want {
				var got raft.Log
				if err := s.Log.GetLog(w.Index, &got); err != nil {
					t.Fatal(err)
				}
				if got.Index != w.Index || got.Term != w.Term || got.Type != w.Type || !bytes.Equal(got.Data, w.Data) || !bytes.Equal(got.Extensions, w.Extensions) {
					t.Fatalf("entry %d read back as %+v, want %+v", w.Index, got, *w)
				}
			}
		})
	}
}

// TestUnsummedEntriesAreCheckedByCheckEntry: a log written by a release
// before checksums is read as it is, and each entry after the snapshot
// goes through Options.CheckEntry, whose refusal is a CorruptError.
func TestUnsummedEntriesAreCheckedByCheckEntry(t *testing.T) {
	dir := t.TempDir()
	s := openStoresOf(t, dir, LogWAL)
	var logs []*raft.Log
	for i := uint64(1); i <= 5; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry-%d", i))})
	}
	// Beneath the checksums, as an older release stored them.
	if err := s.Stable.(raft.LogStore).StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var checked []string
	check := func(l *raft.Log) error {
		checked = append(checked, string(l.Data))
		if l.Index == 4 {
			return errors.New("does not decode")
		}
		return nil
	}
	s, err := OpenStoresWith(dir, Options{Want: LogWAL, Logger: hclog.NewNullLogger(), CheckEntry: check})
	if err == nil {
		s.Close()
		t.Fatal("opened although CheckEntry refused entry 4")
	}
	var corrupt *CorruptError
	if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), "log entry 4") {
		t.Fatalf("%v, want a CorruptError naming entry 4", err)
	}
	if got := strings.Join(checked, ","); got != "entry-1,entry-2,entry-3,entry-4" {
		t.Fatalf("CheckEntry saw %s", got)
	}
}

// TestRecordRefusesAMissingLog: once a data dir records that it holds
// raft state, a missing log store is a refusal (before: a new, empty
// store, and a node that bootstrapped a new cluster on it), unless the
// caller accepts the loss.
func TestRecordRefusesAMissingLog(t *testing.T) {
	for _, kind := range []LogStore{LogWAL, LogBolt} {
		t.Run(string(kind), func(t *testing.T) {
			dir := t.TempDir()
			s := openStoresOf(t, dir, kind)
			if s.Record() != nil {
				t.Fatalf("a new data dir has a record: %+v", s.Record())
			}
			if err := s.RaiseReach(7); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if err := os.RemoveAll(filepath.Join(dir, WALDir)); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(dir, BoltFile)); err != nil {
				t.Fatal(err)
			}
			s, err := OpenStores(dir, LogWAL, hclog.NewNullLogger())
			if err == nil {
				s.Close()
				t.Fatal("a data dir whose log was deleted opened as a new one")
			}
			if !errors.Is(err, ErrStateLost) || !strings.Contains(err.Error(), "reaching entry 7") {
				t.Fatalf("%v, want ErrStateLost saying how far the log reached", err)
			}
			s, err = OpenStoresWith(dir, Options{Want: LogWAL, Logger: hclog.NewNullLogger(), AcceptLoss: true})
			if err != nil {
				t.Fatalf("with AcceptLoss: %v", err)
			}
			defer s.Close()
			if r := s.Record(); r == nil || r.Reaches != 7 {
				t.Fatalf("record %+v, want the one that says 7", r)
			}
		})
	}
}

// TestRecordOnlyRises: RaiseReach never lowers the record, ResetReach
// does, and the file is private and whole after each write.
func TestRecordOnlyRises(t *testing.T) {
	dir := t.TempDir()
	s := openStoresOf(t, dir, LogWAL)
	defer s.Close()
	reaches := func() uint64 {
		t.Helper()
		r, err := readRecord(dir)
		if err != nil || r == nil {
			t.Fatalf("record %v, %v", r, err)
		}
		return r.Reaches
	}
	for _, step := range []struct {
		raise bool
		to    uint64
		want  uint64
	}{{true, 5, 5}, {true, 3, 5}, {true, 9, 9}, {false, 2, 2}, {true, 2, 2}} {
		var err error
		if step.raise {
			err = s.RaiseReach(step.to)
		} else {
			err = s.ResetReach(step.to)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := reaches(); got != step.want {
			t.Fatalf("after raise=%v to %d: %d, want %d", step.raise, step.to, got, step.want)
		}
	}
	info, err := os.Stat(filepath.Join(dir, RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != fs.FileMode(0o600) {
		t.Fatalf("record mode %v, want 0600", info.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, RecordFile+".tmp")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a temporary file is left: %v", err)
	}
}

// TestRecordFromANewerReleaseIsRefused: a record format this release does
// not know is not read as none.
func TestRecordFromANewerReleaseIsRefused(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		`{"version":2,"reaches":3}`: "newer than this release",
		`garbage`:                   "not a data dir record",
	} {
		if err := os.WriteFile(filepath.Join(dir, RecordFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStores(dir, LogWAL, hclog.NewNullLogger())
		if err == nil {
			s.Close()
			t.Fatalf("%s: opened", content)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", content, err, want)
		}
	}
}

// FuzzEntrySum: whatever bytes an entry reads back with, checking its
// checksum never panics; an entry sealed on the way in opens unchanged,
// and one whose sealed bytes changed anywhere fails its check.
func FuzzEntrySum(f *testing.F) {
	f.Add(uint64(7), uint64(2), []byte("data"), []byte("verifier's"), 3)
	f.Add(uint64(1), uint64(1), []byte{}, []byte{}, 0)
	f.Add(uint64(9), uint64(4), []byte("x"), append([]byte(nil), entrySumMagic...), 12)
	f.Fuzz(func(t *testing.T, index, term uint64, data, ext []byte, flip int) {
		raw := &raft.Log{Index: index, Term: term, Type: raft.LogCommand, Data: data, Extensions: ext}
		read := *raw
		openEntry(&read) // any bytes: an error or not, never a panic

		sealed := sealEntry(raw)
		back := *sealed
		if summed, err := openEntry(&back); !summed || err != nil {
			t.Fatalf("a sealed entry did not open: summed %v, %v", summed, err)
		}
		if !bytes.Equal(back.Data, data) || !bytes.Equal(back.Extensions, ext) && len(ext) > 0 || len(ext) == 0 && back.Extensions != nil {
			t.Fatalf("opened as data %q ext %q, want %q %q", back.Data, back.Extensions, data, ext)
		}
		// Change one byte of the data or of what follows the magic.
		damaged := *sealed
		damaged.Extensions = bytes.Clone(sealed.Extensions)
		damaged.Data = bytes.Clone(data)
		if n := len(damaged.Data) + len(damaged.Extensions) - len(entrySumMagic); n > 0 {
			at := (flip%n + n) % n
			if at < len(damaged.Data) {
				damaged.Data[at] ^= 0x01
			} else {
				damaged.Extensions[len(entrySumMagic)+at-len(damaged.Data)] ^= 0x01
			}
			if summed, err := openEntry(&damaged); !summed || !errors.Is(err, ErrEntryChecksum) {
				t.Fatalf("a changed byte at %d went unnoticed: summed %v, %v", at, summed, err)
			}
		}
	})
}
