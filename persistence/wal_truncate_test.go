package persistence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// walLogs appends entries first..last to w.
func walLogs(t *testing.T, w *WAL, first, last uint64, term uint64) {
	t.Helper()
	var logs []*raft.Log
	for i := first; i <= last; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte{byte(i), byte(term)}})
	}
	if err := w.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
}

// A follower whose uncommitted tail a new leader replaced (raft deletes
// the tail, then appends the leader's entries) must start again. raft-wal
// v0.4.0 marks the old tail segment sealed without writing its index block
// (hashicorp/raft-wal#31), so after a restart every entry of that segment
// read "sealed segment has no index block" and raft panicked at start.
func TestWALReopensAfterATailTruncation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), WALDir)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWAL(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	walLogs(t, w, 1, 100, 1)
	if err := w.DeleteRange(81, 100); err != nil { // the tail a new leader replaces
		t.Fatal(err)
	}
	walLogs(t, w, 81, 90, 2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	w, err = OpenWAL(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer w.Close()
	for i := uint64(1); i <= 90; i++ {
		var l raft.Log
		if err := w.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d after the reopen: %v", i, err)
		}
		term := uint64(1)
		if i > 80 {
			term = 2
		}
		if l.Term != term || l.Data[0] != byte(i) || l.Data[1] != byte(term) {
			t.Fatalf("entry %d after the reopen: term %d data %v", i, l.Term, l.Data)
		}
	}
	if last, _ := w.LastIndex(); last != 90 {
		t.Fatalf("last index %d, want 90", last)
	}
	// And it takes appends after the reopen.
	walLogs(t, w, 91, 95, 2)
}
