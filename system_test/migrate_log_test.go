package system_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// migrateStopped runs `addrwatch migrate-log` on a stopped node's data dir
// and checks the dir holds the WAL and keeps raft.db as a backup.
func migrateStopped(t *testing.T, s *server) {
	t.Helper()
	r := owCLIOK(t, nil, "migrate-log", "--data", s.Dir)
	if !strings.Contains(r.stdout, "copied") {
		t.Fatalf("migrate-log printed no progress:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "wal")); err != nil {
		t.Fatalf("no wal dir after migrate-log: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "raft.db")); !os.IsNotExist(err) {
		t.Fatalf("raft.db is still in place: %v", err)
	}
	if backups, _ := filepath.Glob(filepath.Join(s.Dir, "raft.db.migrated-*")); len(backups) != 1 {
		t.Fatalf("backups of raft.db: %v", backups)
	}
}

// A node with data on bolt, migrated with migrate-log and restarted, starts
// on the WAL and serves the same state; migrate-log refuses while it runs.
func TestMigrateLogRoundTrip(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--raft-log", "bolt")
	a := s.createAccount(t, "base")
	for i := range 5 {
		owOwnerCard(t, s, a.OwnerSecret, owAddress(500+i), "before")
	}
	before := do(t, "GET", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, nil)
	expect(t, before, http.StatusOK, "")

	if r := owCLI(t, nil, "migrate-log", "--data", s.Dir); r.code != 1 || !strings.Contains(r.stderr, "running") {
		t.Fatalf("migrate-log on a running node: exit %d\n%s", r.code, r.stderr)
	}
	s.stop()
	migrateStopped(t, s)
	s.start("--raft-log", "bolt") // the flag names the store of new data dirs only
	if !strings.Contains(s.logs.String(), "raft log: wal") {
		t.Fatalf("the migrated node does not say it runs on the WAL:\n%s", s.logs.String())
	}
	after := do(t, "GET", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, nil)
	expect(t, after, http.StatusOK, "")
	if string(after.Body) != string(before.Body) {
		t.Fatalf("state after the migration differs:\n%s\n---\n%s", before.Body, after.Body)
	}
	owOwnerCard(t, s, a.OwnerSecret, owAddress(505), "after")
}

// A follower of a cluster on bolt, migrated and restarted, rejoins: it
// applies what the cluster wrote while it was down and after.
func TestMigrateLogFollowerRejoins(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--raft-log", "bolt")
	leader, followers := leaderAndFollowers(t, nodes)
	a := leader.createAccount(t, "base")
	owOwnerCard(t, leader, a.OwnerSecret, owAddress(520), "before")
	f := followers[0]
	f.stop()
	owOwnerCard(t, leader, a.OwnerSecret, owAddress(521), "while it was down")
	migrateStopped(t, f)
	f.start(f.extra...)
	owOwnerCard(t, leader, a.OwnerSecret, owAddress(522), "after")
	want := statusOf(t, leader).AppliedIndex
	deadline := time.Now().Add(20 * time.Second)
	for statusOf(t, f).AppliedIndex < want {
		if time.Now().After(deadline) {
			t.Fatalf("the migrated follower applied %d, the leader %d", statusOf(t, f).AppliedIndex, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(f.logs.String(), "raft log: wal") {
		t.Fatalf("the migrated follower does not say it runs on the WAL")
	}
}
