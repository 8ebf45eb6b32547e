//go:build unix

package system_test

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startRefused launches the server and waits for it to exit on its own.
// It fails the test if the server serves instead, and returns the exit
// code and the output.
func (s *server) startRefused(extra ...string) (int, string) {
	s.t.Helper()
	s.launch(extra...)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return s.cmd.ProcessState.ExitCode(), s.logs.String()
		case <-time.After(25 * time.Millisecond):
		}
		if resp, err := http.Get(s.AdminURL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.stop()
				s.t.Fatalf("the server started and reported ready instead of refusing; output:\n%s", s.logs.String())
			}
		}
	}
	s.stop()
	s.t.Fatalf("the server neither served nor exited in 20s; output:\n%s", s.logs.String())
	return 0, ""
}

// expectRefusedAsCorrupt starts s on a damaged store (what says how) and
// expects it to exit 1 saying want, without crashing.
func (s *server) expectRefusedAsCorrupt(what, want string) {
	s.t.Helper()
	code, out := s.startRefused()
	if code != 1 || !strings.Contains(out, want) {
		s.t.Errorf("%s: exit %d, want 1 with %q; output:\n%s", what, code, want, out)
	}
	for _, crash := range []string{"panic", "SIGBUS", "goroutine "} {
		if strings.Contains(out, crash) {
			s.t.Errorf("%s: the output has %q:\n%s", what, crash, out)
		}
	}
}

// accountsAroundASnapshot creates an account, snapshots, creates another,
// and stops the server: the first is in the snapshot, the second only in
// raft.db.
func accountsAroundASnapshot(t *testing.T, s *server) (inSnapshot, after account) {
	t.Helper()
	inSnapshot = s.createAccount(t, "base")
	expect(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil), http.StatusOK, "")
	after = s.createAccount(t, "base")
	s.stop()
	return inSnapshot, after
}

// TestStartRefusesALostLog deletes the log store (raft.db, or the WAL's
// directory wal/), then empties it, beside a snapshot. Before, the server
// restored the snapshot, reported ready, logged only INFO lines and had
// lost the account created after the snapshot. Now it exits 1 saying
// what is missing and what to do, and --recover-from-snapshot starts it
// from the snapshot with a WARN line.
func TestStartRefusesALostLog(t *testing.T) {
	t.Parallel()
	for _, store := range raftLogs {
		t.Run(store, func(t *testing.T) { testStartRefusesALostLog(t, store) })
	}
}

func testStartRefusesALostLog(t *testing.T, store string) {
	// Every start names the store: once the log store is gone, the data
	// dir no longer says which it had.
	flag := []string{"--raft-log", store}
	s := startOnRaftLog(t, store)
	kept, lost := accountsAroundASnapshot(t, s)
	logStore := filepath.Join(s.Dir, map[string]string{"wal": "wal", "bolt": "raft.db"}[store])
	backup := logStore + ".backup"
	if err := os.Rename(logStore, backup); err != nil {
		t.Fatal(err)
	}

	for _, damage := range []string{"deleted", "emptied"} {
		// The refused start before may have made a new, empty store.
		if err := os.RemoveAll(logStore); err != nil {
			t.Fatal(err)
		}
		if damage == "emptied" {
			if err := makeEmpty(logStore, store); err != nil {
				t.Fatal(err)
			}
		}
		code, out := s.startRefused(flag...)
		if code != 1 {
			t.Fatalf("%s %s: exit %d, want 1; output:\n%s", logStore, damage, code, out)
		}
		// A deleted store is refused by the data dir's record of its raft
		// state, an empty one for the term the snapshot needs.
		why := map[string]string{"deleted": "records that it holds raft state", "emptied": "no current term, but there is a snapshot"}[damage]
		for _, want := range []string{"refusing to start", logStore, why, "--recover-from-snapshot"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s %s: the output does not say %q:\n%s", logStore, damage, want, out)
			}
		}
	}

	// Putting the store back is the first way back.
	if err := os.RemoveAll(logStore); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(backup, logStore); err != nil {
		t.Fatal(err)
	}
	s.start(flag...)
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", lost.OwnerSecret, nil), http.StatusOK, "")
	s.stop()

	// Accepting the loss is the last.
	if err := os.RemoveAll(logStore); err != nil {
		t.Fatal(err)
	}
	s.start(append(flag, "--recover-from-snapshot")...)
	if out := s.logs.String(); !strings.Contains(out, "level=WARN msg=\"starting from the newest snapshot") || !strings.Contains(out, " index=") {
		t.Errorf("no WARN line naming the snapshot; output:\n%s", out)
	}
	s.expectRaftLog(store)
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", kept.OwnerSecret, nil), http.StatusOK, "")
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", lost.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	// The node goes on as usual afterwards, without the flag.
	again := s.createAccount(t, "base")
	s.stop()
	s.start()
	s.expectRaftLog(store)
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", again.OwnerSecret, nil), http.StatusOK, "")
}

// makeEmpty puts an empty log store at path: a file of no bytes for bolt,
// a directory with nothing in it for the WAL.
func makeEmpty(path, store string) error {
	if store == "wal" {
		return os.Mkdir(path, 0o700)
	}
	return os.WriteFile(path, nil, 0o600)
}

// TestStartRefusesACorruptRaftDB damages raft.db three ways. Before, the
// server died of a bbolt panic or SIGBUS with a goroutine dump (and for
// the meta pages said only "invalid database"); now it says raft.db is
// corrupt, with its path, and exits 1.
func TestStartRefusesACorruptRaftDB(t *testing.T) {
	t.Parallel()
	s := startOnRaftLog(t, "bolt")
	for range 40 {
		s.createAccount(t, "base")
	}
	s.stop()
	raftDB := filepath.Join(s.Dir, "raft.db")
	good, err := os.ReadFile(raftDB)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(good) / page
	rng := rand.New(rand.NewPCG(5, 6))
	scribble := func(from, to int) []byte {
		b := append([]byte(nil), good...)
		for i := from * page; i < to*page; i++ {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	damages := []struct {
		what string
		file []byte
	}{
		{"random bytes over both meta pages", scribble(0, 2)},
		{fmt.Sprintf("random bytes over pages %d to %d of %d", pages/4, 3*pages/4, pages), scribble(pages/4, 3*pages/4)},
		{"cut to half its size", good[:len(good)/2]},
	}
	for _, d := range damages {
		if err := os.WriteFile(raftDB, d.file, 0o600); err != nil {
			t.Fatal(err)
		}
		s.expectRefusedAsCorrupt(d.what, "raft.db is corrupt; restore from a backup ("+raftDB)
	}
}

// TestDataDirIsPrivate runs the server under a umask of 022 on a data dir
// in a 0755 parent, on each raft log store. Before, snapshots/ and each
// snapshot were 0755 and state.bin and meta.json 0644 (they hold password
// and key hashes); now every directory is 0700 and every file 0600 (the
// WAL's wal/ and its files included), and a data dir an older build left
// open is repaired at start.
func TestDataDirIsPrivate(t *testing.T) {
	// Not parallel: it sets the process's umask, which every process the
	// other tests start would inherit.
	for _, store := range raftLogs {
		t.Run(store, func(t *testing.T) { testDataDirIsPrivate(t, store) })
	}
}

func testDataDirIsPrivate(t *testing.T, store string) {
	defer syscall.Umask(syscall.Umask(0o022))
	s := &server{t: t, AdminToken: "private-admin-token"}
	s.Dir = filepath.Join(t.TempDir(), "srv", "data")
	if err := os.MkdirAll(filepath.Dir(s.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(s.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
	s.start("--raft-log", store)
	t.Cleanup(s.stop)
	s.expectRaftLog(store)
	s.createAccount(t, "base")
	expect(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil), http.StatusOK, "")
	s.createAccount(t, "base")
	expect(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil), http.StatusOK, "")
	checkPrivate(t, "written under umask 022", s.Dir)

	// An older build's data dir: open to everyone.
	s.stop()
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o755)
		}
		return os.Chmod(path, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.start()
	checkPrivate(t, "after a start on an open data dir", s.Dir)
	if info, err := os.Stat(filepath.Dir(s.Dir)); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("the parent of the data dir changed: %v %v", info.Mode(), err)
	}
}

// checkPrivate fails unless every directory under dir is 0700 and every
// file 0600, and there is a snapshot among them.
func checkPrivate(t *testing.T, when, dir string) {
	t.Helper()
	var open []string
	snapshots := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if d.Name() == "state.bin" {
			snapshots++
		}
		if got := info.Mode().Perm(); got != want {
			open = append(open, fmt.Sprintf("%s %v", strings.TrimPrefix(path, dir), got))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if snapshots == 0 {
		t.Fatalf("%s: no snapshot under %s", when, dir)
	}
	if len(open) > 0 {
		t.Errorf("%s: not private (dirs must be 0700, files 0600): %s", when, strings.Join(open, ", "))
	}
}

// TestStartRefusesACorruptWAL damages a stopped node's WAL: its segment
// file's header, its meta file (wal-meta.db), the meta file lost beside
// the segments, and an entry raft reads at start. Each time the server says the WAL is corrupt, with
// its path, and exits 1, with no panic or goroutine dump, and it leaves
// the segments where they were.
func TestStartRefusesACorruptWAL(t *testing.T) {
	t.Parallel()
	s := startOnRaftLog(t, "wal")
	for range 40 {
		s.createAccount(t, "base")
	}
	s.stop()
	walDir := filepath.Join(s.Dir, "wal")
	segments, err := filepath.Glob(filepath.Join(walDir, "*.wal"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no segment files in %s: %v", walDir, err)
	}
	meta := filepath.Join(walDir, "wal-meta.db")
	damages := []struct {
		what   string
		file   string
		damage func(good []byte) []byte // nil: remove the file
	}{
		{"random bytes over the segment file's header", segments[0], func(good []byte) []byte { return scribbled(good, 0, 32) }},
		{"random bytes over the meta file's meta pages", meta, func(good []byte) []byte { return scribbled(good, 0, 2*4096) }},
		{"the meta file deleted", meta, nil},
		{"0xff over the first entry's time (raft-wal checks only the last batch's checksum; raft panicked reading it)", segments[0], firstEntryTimeScribbled},
	}
	for _, d := range damages {
		good, err := os.ReadFile(d.file)
		if err != nil {
			t.Fatal(err)
		}
		if d.damage == nil {
			err = os.Remove(d.file)
		} else {
			err = os.WriteFile(d.file, d.damage(good), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		s.expectRefusedAsCorrupt(d.what, "wal is corrupt; restore from a backup ("+walDir)
		if _, err := os.Stat(segments[0]); err != nil {
			t.Fatalf("%s: the segment file is gone: %v", d.what, err)
		}
		// Undo the damage: the next one starts from a good WAL.
		if err := os.WriteFile(d.file, good, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.start()
	s.expectRaftLog("wal")
}

// TestSecondServerOnADataDirIsRefused starts a second server on the data
// dir of a running one (on ports of its own): it exits 1 saying the data
// dir is in use, and the first goes on serving.
func TestSecondServerOnADataDirIsRefused(t *testing.T) {
	t.Parallel()
	for _, store := range raftLogs {
		t.Run(store, func(t *testing.T) {
			first := startOnRaftLog(t, store)
			second := &server{t: t, Dir: first.Dir, AdminToken: first.AdminToken}
			second.httpAddr, second.adminAddr, second.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
			second.URL, second.AdminURL = "http://"+second.httpAddr, "http://"+second.adminAddr
			code, out := second.startRefused()
			if code != 1 || !strings.Contains(out, "the data dir is in use by another process") {
				t.Fatalf("a second server on a data dir in use: exit %d, want 1 saying the data dir is in use; output:\n%s", code, out)
			}
			first.createAccount(t, "base")
		})
	}
}

// firstEntryTimeScribbled is a segment file with 0xff over the last 15
// bytes of its first entry, the entry's AppendedAt time (a version byte
// no time has). In raft-wal's format (torn_wal_test.go) that entry's frame
// follows the file header, with its payload's length in its header.
func firstEntryTimeScribbled(good []byte) []byte {
	b := append([]byte(nil), good...)
	end := walFileHeaderLen + walFrameHeaderLen + int(binary.LittleEndian.Uint32(b[walFileHeaderLen+4:]))
	for i := end - 15; i < end; i++ {
		b[i] = 0xff
	}
	return b
}

// scribbled is good with random bytes over [from, to).
func scribbled(good []byte, from, to int) []byte {
	b := append([]byte(nil), good...)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := from; i < to && i < len(b); i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
}
