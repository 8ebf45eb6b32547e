package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/addrwatch/addrwatch/persistence"
)

// fiveAccountsNoSnapshot leaves a stopped one-node data dir of kind whose
// five accounts are only in the log: no snapshot yet, as on a node that
// has taken fewer than 8,192 writes.
func fiveAccountsNoSnapshot(t *testing.T, kind persistence.LogStore) (dir, addr string) {
	t.Helper()
	dir, addr = t.TempDir(), freeRaftAddr(t)
	tn := startNodeWith(t, Config{NodeID: "node1", RaftAddr: addr, DataDir: dir, Logger: discardLogger(), RaftLog: kind})
	tn.awaitLeading()
	for i := 1; i <= 5; i++ {
		mustSucceed(t, tn.propose(createAccount(fmt.Sprintf("acct-%d", i))), 201)
	}
	tn.close()
	return dir, addr
}

// dropLogTail removes the last n entries of a stopped node's log, as a
// segment or file cut short would, whatever the store.
func dropLogTail(t *testing.T, dir string, n uint64) {
	t.Helper()
	s, err := persistence.OpenStores(dir, "", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	last, err := s.Log.LastIndex()
	if err != nil || last <= n {
		t.Fatalf("last index %d (%v), want more than %d", last, err, n)
	}
	if err := s.Log.DeleteRange(last-n+1, last); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesALogShorterThanItsRecord: a node's log lost before its
// first snapshot, or cut short. Before the data dir's record, Open started
// on what was left: with the log deleted it bootstrapped a new, empty
// cluster, and with the tail gone it served fewer accounts; neither said
// a word. Now Open refuses, saying how far the log had reached, and
// --recover-from-snapshot accepts a shorter log (with a warning), but not
// an empty one with no snapshot: nothing is left to start from.
func TestOpenRefusesALogShorterThanItsRecord(t *testing.T) {
	for _, kind := range []persistence.LogStore{persistence.LogWAL, persistence.LogBolt} {
		t.Run(string(kind)+"/deleted", func(t *testing.T) {
			dir, addr := fiveAccountsNoSnapshot(t, kind)
			for _, name := range []string{persistence.WALDir, persistence.BoltFile} {
				if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			for _, recoverFromSnapshot := range []bool{false, true} {
				var logs bytes.Buffer
				n, accounts, err := openStore(t, dir, addr, kind, recoverFromSnapshot, &logs)
				if err == nil {
					ids := accountIDs(t, accounts)
					n.Close()
					accounts.Shutdown()
					t.Fatalf("recover=%v: Open started without its log, serving %d accounts", recoverFromSnapshot, len(ids))
				}
				if !errors.Is(err, ErrStateLost) {
					t.Fatalf("recover=%v: %v, want a refusal", recoverFromSnapshot, err)
				}
				if !strings.Contains(err.Error(), "Restore the data dir from a backup") {
					t.Errorf("recover=%v: the refusal does not say the way back: %v", recoverFromSnapshot, err)
				}
			}
		})
		t.Run(string(kind)+"/cut short", func(t *testing.T) {
			dir, addr := fiveAccountsNoSnapshot(t, kind)
			dropLogTail(t, dir, 2)
			var logs bytes.Buffer
			n, accounts, err := openStore(t, dir, addr, kind, false, &logs)
			if err == nil {
				ids := accountIDs(t, accounts)
				n.Close()
				accounts.Shutdown()
				t.Fatalf("Open started on a log cut short, serving %d accounts", len(ids))
			}
			if !errors.Is(err, ErrStateLost) || !strings.Contains(err.Error(), "recorded") || !strings.Contains(err.Error(), "--recover-from-snapshot") {
				t.Fatalf("%v, want ErrStateLost saying what was recorded and the flag", err)
			}

			n, accounts, err = openStore(t, dir, addr, kind, true, &logs)
			if err != nil {
				t.Fatalf("with --recover-from-snapshot: %v", err)
			}
			tn := &testNode{t: t, dir: dir, addr: addr, node: n, accounts: accounts}
			tn.awaitLeading()
			// The two entries dropped are the last creates, or a create and
			// a checkpoint on a machine slow enough to take one.
			left := len(accountIDs(t, accounts))
			if left < 3 || left > 4 {
				t.Errorf("%d accounts after accepting the loss of two entries, want three or four", left)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "recorded=") {
				t.Errorf("no warning of the loss; log:\n%s", logs.String())
			}
			mustSucceed(t, tn.propose(createAccount("acct-6")), 201)
			tn.close()
			// The record now follows the log again: a plain restart serves.
			tn = startNode(t, dir, addr)
			if ids := accountIDs(t, tn.accounts); len(ids) != left+1 || !ids["acct-6"] {
				t.Fatalf("after a plain restart the accounts are %v", ids)
			}
		})
	}
}

// TestDataDirRecordsItsReach: bootstrap records that the data dir holds
// raft state, the record follows the applied index while the node runs
// and reaches the last applied entry at a clean stop.
func TestDataDirRecordsItsReach(t *testing.T) {
	dir, addr := t.TempDir(), freeRaftAddr(t)
	tn := startNodeWith(t, Config{NodeID: "node1", RaftAddr: addr, DataDir: dir, Logger: discardLogger()})
	if r := readRecordFile(t, dir); r.Reaches < 1 {
		t.Fatalf("after bootstrap the record says %d, want at least 1", r.Reaches)
	}
	tn.awaitLeading()
	mustSucceed(t, tn.propose(createAccount("acct-1")), 201)
	applied := tn.node.raft.AppliedIndex()
	tn.close()
	// The leader may apply a checkpoint or two after the read above; the
	// record holds at least the create, and never more than the log.
	r := readRecordFile(t, dir)
	stores, err := persistence.OpenStores(dir, "", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	last, err := stores.Log.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	if r.Reaches < applied || r.Reaches > last {
		t.Fatalf("after a clean stop the record says %d, want from the create's applied index %d to the log's last %d", r.Reaches, applied, last)
	}
}

func readRecordFile(t *testing.T, dir string) persistence.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, persistence.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	var r persistence.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("record %q: %v", b, err)
	}
	return r
}
