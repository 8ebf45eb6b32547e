package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/persistence"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// boltDataDir makes a data dir on bolt holding entries 1..n, as a node
// stopped on it would leave it.
func boltDataDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	s, err := persistence.OpenStores(dir, persistence.LogBolt, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var entries []*raft.Log
	for i := 1; i <= n; i++ {
		entries = append(entries, &raft.Log{Index: uint64(i), Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}})
	}
	if err := s.Log.StoreLogs(entries); err != nil {
		t.Fatal(err)
	}
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMigrateLogPrintsProgressAndSummary(t *testing.T) {
	dir := boltDataDir(t, 1500)
	got := runCLI(t, nil, "migrate-log", "--data", dir)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	for _, want := range []string{
		"copied 0 of 1500 entries\n",
		"copied 1500 of 1500 entries\n",
		"migrated " + dir + " to the WAL: 1500 of 1500 entries and the stable store copied and checked\n",
		"  log:    " + dir + "/wal\n",
		"Start the node as before",
	} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("stdout %q\nwant it to contain %q", got.stdout, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "wal")); err != nil {
		t.Errorf("no wal after the migration: %v", err)
	}
}

// TestMigrateLogRefusals checks that each refusal exits 1 with the reason
// and leaves the data dir as it was.
func TestMigrateLogRefusals(t *testing.T) {
	t.Run("no raft.db", func(t *testing.T) {
		got := runCLI(t, nil, "migrate-log", "--data", t.TempDir())
		if got.code != exitFailure || got.stderr != "error: "+persistence.ErrNoBoltLog.Error()+"\n" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
	})
	t.Run("node running", func(t *testing.T) {
		dir := boltDataDir(t, 3)
		running, err := persistence.OpenStores(dir, persistence.LogBolt, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer running.Close()
		got := runCLI(t, nil, "migrate-log", "--data", dir)
		if got.code != exitFailure || got.stderr != "error: "+persistence.ErrNodeRunning.Error()+"\n" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "raft.db")); err != nil {
			t.Errorf("raft.db after the refusal: %v", err)
		}
	})
	t.Run("wal exists", func(t *testing.T) {
		dir := boltDataDir(t, 3)
		if err := os.Mkdir(filepath.Join(dir, "wal"), 0o700); err != nil {
			t.Fatal(err)
		}
		got := runCLI(t, nil, "migrate-log", "--data", dir)
		if got.code != exitFailure || got.stderr != "error: "+persistence.ErrWALExists.Error()+"\n" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
	})
	t.Run("no --data", func(t *testing.T) {
		got := runCLI(t, nil, "migrate-log")
		if got.code != exitUsage || !strings.Contains(got.stderr, "--data is required") {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
	})
}
