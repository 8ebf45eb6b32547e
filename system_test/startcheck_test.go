//go:build unix

package system_test

import (
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

// TestStartRefusesALostLog deletes raft.db, then empties it, beside a
// snapshot. Before, the server restored the snapshot, reported ready,
// logged only INFO lines and had lost the account created after the
// snapshot. Now it exits 1 saying what is missing and what to do, and
// --recover-from-snapshot starts it from the snapshot with a WARN line.
func TestStartRefusesALostLog(t *testing.T) {
	s := startServer(t)
	kept, lost := accountsAroundASnapshot(t, s)
	raftDB := filepath.Join(s.Dir, "raft.db")
	backup, err := os.ReadFile(raftDB)
	if err != nil {
		t.Fatal(err)
	}

	for _, damage := range []string{"deleted", "truncated to 0 bytes"} {
		if damage == "deleted" {
			err = os.Remove(raftDB)
		} else {
			err = os.Truncate(raftDB, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		code, out := s.startRefused()
		if code != 1 {
			t.Fatalf("raft.db %s: exit %d, want 1; output:\n%s", damage, code, out)
		}
		for _, want := range []string{"refusing to start", raftDB, "no current term, but there is a snapshot", "--recover-from-snapshot"} {
			if !strings.Contains(out, want) {
				t.Errorf("raft.db %s: the output does not say %q:\n%s", damage, want, out)
			}
		}
	}

	// Putting the file back is the first way back.
	if err := os.WriteFile(raftDB, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	s.start()
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", lost.OwnerSecret, nil), http.StatusOK, "")
	s.stop()

	// Accepting the loss is the last.
	if err := os.Remove(raftDB); err != nil {
		t.Fatal(err)
	}
	s.start("--recover-from-snapshot")
	if out := s.logs.String(); !strings.Contains(out, "level=WARN msg=\"starting from the newest snapshot") || !strings.Contains(out, " index=") {
		t.Errorf("no WARN line naming the snapshot; output:\n%s", out)
	}
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", kept.OwnerSecret, nil), http.StatusOK, "")
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", lost.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	// The node goes on as usual afterwards, without the flag.
	again := s.createAccount(t, "base")
	s.stop()
	s.start()
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", again.OwnerSecret, nil), http.StatusOK, "")
}

// TestStartRefusesACorruptRaftDB damages raft.db three ways. Before, the
// server died of a bbolt panic or SIGBUS with a goroutine dump (and for
// the meta pages said only "invalid database"); now it says raft.db is
// corrupt, with its path, and exits 1.
func TestStartRefusesACorruptRaftDB(t *testing.T) {
	s := startServer(t)
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
		code, out := s.startRefused()
		if code != 1 || !strings.Contains(out, "raft.db is corrupt; restore from a backup ("+raftDB) {
			t.Errorf("%s: exit %d, want 1 with \"raft.db is corrupt; restore from a backup (%s\"; output:\n%s", d.what, code, raftDB, out)
		}
		for _, crash := range []string{"panic", "SIGBUS", "goroutine "} {
			if strings.Contains(out, crash) {
				t.Errorf("%s: the output has %q:\n%s", d.what, crash, out)
			}
		}
	}
}

// TestDataDirIsPrivate runs the server under a umask of 022 on a data dir
// in a 0755 parent. Before, snapshots/ and each snapshot were 0755 and
// state.bin and meta.json 0644 (they hold password and key hashes); now
// every directory is 0700 and every file 0600, and a data dir an older
// build left open is repaired at start.
func TestDataDirIsPrivate(t *testing.T) {
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
	s.start()
	t.Cleanup(s.stop)
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
