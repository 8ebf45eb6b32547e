//go:build unix

package system_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The attack that found these (issue 28): on one node with the default
// WAL, five acknowledged accounts, then the log removed before the first
// snapshot, its segment cut short, or 64 bytes in its middle damaged.
// Before, the node started as a new cluster serving 0 of 5 accounts, or
// served 0 or 2 of 5, without a word, or died with a panic and a goroutine
// dump. Each start below must be a refusal: exit 1, a message, no crash.

// logDamage is one way to damage a stopped node's raft log.
type logDamage struct {
	what   string
	damage func(t *testing.T, dir string)
}

// logDamages are the attack's damages to the log store of store. In
// bolt's file the middle may be a free page, so there the damage goes
// over the entry that created the account whose ID is middle, wherever
// the file holds it.
func logDamages(store, middle string) []logDamage {
	if store == "bolt" {
		return []logDamage{
			{"raft.db removed", func(t *testing.T, dir string) { mustRemoveAll(t, filepath.Join(dir, "raft.db")) }},
			{"64 bytes of an entry in the middle of raft.db damaged", func(t *testing.T, dir string) {
				damageAt(t, filepath.Join(dir, "raft.db"), []byte(middle), 64)
			}},
		}
	}
	return []logDamage{
		{"wal/ removed", func(t *testing.T, dir string) { mustRemoveAll(t, filepath.Join(dir, "wal")) }},
		{"the segment truncated to 100 bytes", func(t *testing.T, dir string) { truncateSegment(t, dir, 100) }},
		{"the segment truncated to 1,000 bytes", func(t *testing.T, dir string) { truncateSegment(t, dir, 1000) }},
		{"64 bytes in the middle of the segment damaged", func(t *testing.T, dir string) {
			damageMiddle(t, newestSegment(t, dir), 64)
		}},
	}
}

// TestStartRefusesALogThatLostAcknowledgedWrites runs the attack on one
// node of each log store: every damage is refused, and with the log put
// back the node serves all five accounts.
func TestStartRefusesALogThatLostAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	for _, store := range raftLogs {
		t.Run(store, func(t *testing.T) {
			s := startOnRaftLog(t, store)
			accounts := make([]account, 5)
			for i := range accounts {
				accounts[i] = s.createAccount(t, "base")
			}
			s.stop()
			for _, d := range logDamages(store, accounts[2].ID) {
				withDamagedLog(t, s.Dir, d, func() { s.expectRefused(d.what, "--raft-log", store) })
			}
			s.start()
			for _, a := range accounts {
				expect(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil), http.StatusOK, "")
			}
		})
	}
}

// TestClusterNodeRefusesALogThatLostAcknowledgedWrites runs the attack on
// a follower of a three-node cluster: it refuses each time, the others
// serve meanwhile, and with its log put back it rejoins with every
// account.
func TestClusterNodeRefusesALogThatLostAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	accounts := make([]account, 5)
	for i := range accounts {
		accounts[i] = leader.createAccount(t, "base")
	}
	ftWaitConverged(t, nodes, "before the stop")
	victim := followers[0]
	victim.stop()
	for _, d := range logDamages("wal", accounts[2].ID) {
		withDamagedLog(t, victim.Dir, d, func() { victim.expectRefused("follower: "+d.what, victim.extra...) })
		expect(t, do(t, "GET", followers[1].URL+"/owner/v1/keys", accounts[4].OwnerSecret, nil), http.StatusOK, "")
	}
	victim.start(victim.extra...)
	ftWaitConverged(t, nodes, "after the restart")
	ftMakeLeader(t, nodes, ftHTTPClient(), slices.Index(nodes, victim))
	for _, a := range accounts {
		expect(t, do(t, "GET", victim.URL+"/owner/v1/keys", a.OwnerSecret, nil), http.StatusOK, "")
	}
}

// withDamagedLog damages the log store of the stopped node in dir, runs
// check, and puts the log store back as it was.
func withDamagedLog(t *testing.T, dir string, d logDamage, check func()) {
	t.Helper()
	logStore := filepath.Join(dir, "wal")
	if _, err := os.Stat(logStore); err != nil {
		logStore = filepath.Join(dir, "raft.db")
	}
	saved := filepath.Join(t.TempDir(), "saved")
	copyTree(t, logStore, saved)
	d.damage(t, dir)
	check()
	mustRemoveAll(t, logStore)
	copyTree(t, saved, logStore)
}

// expectRefused starts s and expects it to exit 1 with a refusal that
// says why, never a crash and never a node that serves.
func (s *server) expectRefused(what string, extra ...string) {
	s.t.Helper()
	code, out := s.startRefused(extra...)
	if code != 1 || !(strings.Contains(out, "refusing to start") || strings.Contains(out, " is corrupt; restore from a backup")) {
		s.t.Errorf("%s: exit %d, want 1 with a refusal; output:\n%s", what, code, out)
	}
	for _, crash := range []string{"panic", "SIGBUS", "goroutine "} {
		if strings.Contains(out, crash) {
			s.t.Errorf("%s: the output has %q:\n%s", what, crash, out)
		}
	}
	s.t.Logf("%s: exit %d: %s", what, code, refusalLine(out))
}

// refusalLine is the line of out that says why the server exited, cut
// after its first sentence.
func refusalLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "addrwatchd: ") {
			if i := strings.Index(line, ". "); i > 0 {
				return line[:i+1]
			}
			return line
		}
	}
	return "(no line from addrwatchd)"
}

func newestSegment(t *testing.T, dir string) string {
	t.Helper()
	segments, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no WAL segments under %s (%v)", dir, err)
	}
	return slices.Max(segments)
}

func truncateSegment(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := os.Truncate(newestSegment(t, dir), size); err != nil {
		t.Fatal(err)
	}
}

// damageMiddle overwrites n bytes halfway through the data of path (a
// WAL segment's frames, or a bolt file) with a pattern no store writes.
func damageMiddle(t *testing.T, path string, n int) {
	t.Helper()
	end := int64(0)
	if strings.HasSuffix(path, ".wal") {
		end = walDataEnd(t, path) // the rest is preallocated zeros
	} else {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		end = info.Size()
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(damagePattern(n), end/2); err != nil {
		t.Fatal(err)
	}
}

// damagePattern is n bytes no store writes.
func damagePattern(n int) []byte { return []byte(strings.Repeat("\xa5\x5a", n/2)) }

// damageAt overwrites n bytes from every place path holds needle.
func damageAt(t *testing.T, path string, needle []byte, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for from := 0; ; found++ {
		at := bytes.Index(b[from:], needle)
		if at < 0 {
			break
		}
		copy(b[from+at:min(from+at+n, len(b))], damagePattern(n))
		from += at + len(needle)
	}
	if found == 0 {
		t.Fatalf("%s does not hold %q", path, needle)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustRemoveAll(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files under from to to, keeping their modes.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		return copySparse(path, target, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copySparse copies a file without writing its blocks of zeros: a WAL
// segment is 64 MiB preallocated, mostly zeros.
func copySparse(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	defer f.Close()
	const block = 64 << 10
	zeros := make([]byte, block)
	for at := 0; at < len(b); at += block {
		chunk := b[at:min(at+block, len(b))]
		if bytes.Equal(chunk, zeros[:len(chunk)]) {
			continue
		}
		if _, err := f.WriteAt(chunk, int64(at)); err != nil {
			return err
		}
	}
	return f.Truncate(int64(len(b)))
}
