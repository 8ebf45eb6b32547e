package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

// snapshotThenMore leaves a one-node data dir with acct-1 in its newest
// snapshot and acct-2 only in the log after it.
func snapshotThenMore(t *testing.T, kind persistence.LogStore) (dir, addr string) {
	t.Helper()
	dir, addr = t.TempDir(), freeRaftAddr(t)
	tn := startNodeWith(t, Config{NodeID: "node1", RaftAddr: addr, DataDir: dir, Logger: discardLogger(), RaftLog: kind})
	populate(t, tn)
	if err := tn.node.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	mustSucceed(t, tn.propose(createAccount("acct-2")), 201)
	tn.close()
	return dir, addr
}

// openWith opens a node on dir with cfg's flags and a logger into logs.
func openWith(t *testing.T, dir, addr string, recoverFromSnapshot bool, logs *bytes.Buffer) (*Node, *registry.Registry, error) {
	t.Helper()
	return openStore(t, dir, addr, "", recoverFromSnapshot, logs)
}

// openStore is openWith with a --raft-log.
func openStore(t *testing.T, dir, addr string, kind persistence.LogStore, recoverFromSnapshot bool, logs *bytes.Buffer) (*Node, *registry.Registry, error) {
	t.Helper()
	accounts := registry.New(discardLogger())
	n, err := Open(withTestTLS(t, Config{NodeID: "node1", RaftAddr: addr, DataDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		RecoverFromSnapshot: recoverFromSnapshot, RaftLog: kind}), accounts)
	if err != nil {
		accounts.Shutdown()
		return nil, nil, err
	}
	return n, accounts, nil
}

// TestOpenRefusesALostLog deletes the log store (raft.db, or the WAL's
// directory), or empties it, beside a snapshot. Before, the node restored
// the snapshot, elected itself and served without acct-2, logging only
// INFO lines. Now Open refuses and says what is missing and what to do;
// --recover-from-snapshot starts from the snapshot with a warning that
// says what the snapshot holds.
func TestOpenRefusesALostLog(t *testing.T) {
	for _, kind := range []persistence.LogStore{persistence.LogWAL, persistence.LogBolt} {
		for _, damage := range []string{"deleted", "emptied"} {
			t.Run(string(kind)+"/"+damage, func(t *testing.T) { testOpenRefusesALostLog(t, kind, damage) })
		}
	}
}

func testOpenRefusesALostLog(t *testing.T, kind persistence.LogStore, damage string) {
	dir, addr := snapshotThenMore(t, kind)
	path := filepath.Join(dir, map[persistence.LogStore]string{persistence.LogWAL: persistence.WALDir, persistence.LogBolt: persistence.BoltFile}[kind])
	if err := loseLogStore(path, damage); err != nil {
		t.Fatal(err)
	}

	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	list, err := snaps.List()
	if err != nil || len(list) == 0 {
		t.Fatalf("no snapshot: %v", err)
	}
	snapshot := fmt.Sprintf("index %d, term %d", list[0].Index, list[0].Term)

	var logs bytes.Buffer
	n, accounts, err := openStore(t, dir, addr, kind, false, &logs)
	if err == nil {
		n.Close()
		accounts.Shutdown()
		t.Fatalf("Open started on a snapshot without its log; log:\n%s", logs.String())
	}
	if !errors.Is(err, ErrStateLost) {
		t.Fatalf("Open: %v, want ErrStateLost", err)
	}
	wants := []string{path, "--recover-from-snapshot", "Restore the data dir from a backup"}
	if damage == "emptied" { // a deleted store is refused before the snapshots are read
		wants = append(wants, snapshot)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}

	logs.Reset()
	n, accounts, err = openStore(t, dir, addr, kind, true, &logs)
	if err != nil {
		t.Fatalf("Open with RecoverFromSnapshot: %v", err)
	}
	tn := &testNode{t: t, dir: dir, addr: addr, node: n, accounts: accounts}
	t.Cleanup(tn.close)
	tn.awaitLeading()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), fmt.Sprintf("index=%d term=%d", list[0].Index, list[0].Term)) {
		t.Errorf("no warning naming the snapshot; log:\n%s", logs.String())
	}
	ids := accountIDs(t, accounts)
	if !ids["acct-1"] || ids["acct-2"] {
		t.Fatalf("after starting from the snapshot the accounts are %v, want acct-1 alone", ids)
	}
	// The node goes on from the snapshot's term and restarts as
	// usual, flag or not.
	mustSucceed(t, tn.propose(createAccount("acct-3")), 201)
	if term := tn.status().Term; term <= list[0].Term {
		t.Errorf("term %d after starting from a term-%d snapshot", term, list[0].Term)
	}
	tn.close()
	tn = startNode(t, dir, addr)
	if ids := accountIDs(t, tn.accounts); !ids["acct-1"] || !ids["acct-3"] {
		t.Fatalf("after a plain restart the accounts are %v", ids)
	}
}

// loseLogStore deletes the log store at path (a file or the WAL's
// directory), or empties it: a file cut to nothing, a directory with
// nothing left in it.
func loseLogStore(path, damage string) error {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case damage == "deleted":
		return os.RemoveAll(path)
	case !info.IsDir():
		return os.Truncate(path, 0)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(path, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// TestOpenRefusesALogWithoutItsStart removes snapshots/ after the log was
// compacted: raft would have applied what is left of the log to an empty
// state. Open refuses, and no flag overrides it.
func TestOpenRefusesALogWithoutItsStart(t *testing.T) {
	dir, addr := t.TempDir(), freeRaftAddr(t)
	tn := startNode(t, dir, addr)
	keepNoTrailingLogs(t, tn.node)
	populate(t, tn)
	if err := tn.node.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	mustSucceed(t, tn.propose(createAccount("acct-2")), 201)
	tn.close()
	if err := os.RemoveAll(filepath.Join(dir, "snapshots")); err != nil {
		t.Fatal(err)
	}
	for _, recoverFromSnapshot := range []bool{false, true} {
		var logs bytes.Buffer
		n, accounts, err := openWith(t, dir, addr, recoverFromSnapshot, &logs)
		if err == nil {
			n.Close()
			accounts.Shutdown()
			t.Fatalf("Open (recover %v) started on a log whose first entries are gone", recoverFromSnapshot)
		}
		if !errors.Is(err, ErrStateLost) || !strings.Contains(err.Error(), "there is no snapshot: entries 1 to") {
			t.Fatalf("Open (recover %v): %v", recoverFromSnapshot, err)
		}
	}
}

// TestOpenAcceptsAnEmptyLogBesideASnapshot: raft itself leaves the log
// empty beside a snapshot (here by compacting everything; also after
// installing a snapshot on some stores, and after RecoverCluster). With
// the current term in place that is a normal start, not a lost log.
func TestOpenAcceptsAnEmptyLogBesideASnapshot(t *testing.T) {
	dir, addr := t.TempDir(), freeRaftAddr(t)
	tn := startNode(t, dir, addr)
	keepNoTrailingLogs(t, tn.node)
	populate(t, tn)
	want := listJSON(t, tn, "acct-1")
	if err := tn.node.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if last, err := tn.node.stores.Log.LastIndex(); err != nil || last != 0 {
		t.Fatalf("the log still ends at %d (%v) after compacting everything", last, err)
	}
	tn.close()
	tn = startNode(t, dir, addr)
	if got := listJSON(t, tn, "acct-1"); got != want {
		t.Fatalf("state after the restart:\n got %s\nwant %s", got, want)
	}
}

// keepNoTrailingLogs makes the node's next snapshot compact its whole log.
func keepNoTrailingLogs(t *testing.T, n *Node) {
	t.Helper()
	rc := n.raft.ReloadableConfig()
	rc.TrailingLogs = 0
	if err := n.raft.ReloadConfig(rc); err != nil {
		t.Fatalf("ReloadConfig: %v", err)
	}
}

func TestSnapshotTaken(t *testing.T) {
	at, known := snapshotTaken("2-5-1795604127178")
	if !known || at.UnixMilli() != 1795604127178 {
		t.Fatalf("snapshotTaken = %v, %v", at, known)
	}
	for _, id := range []string{"", "2-5", "a-b-c", "2-5-0", "2-5-17-9"} {
		if _, known := snapshotTaken(id); known {
			t.Errorf("snapshotTaken(%q) claims a time", id)
		}
	}
}

// TestThreeNodeRejoinWithAnEmptyDataDir is the way back the start check
// names for a node of a cluster that lost its raft.db: empty its data dir
// and start it with --join under the same id and address. The cluster
// still counts it, and the leader sends it everything.
func TestThreeNodeRejoinWithAnEmptyDataDir(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	populateLeader(t, leader, "acct-1", addresses[:3], t0)
	lost := without(c.members, leader)[0]
	c.converge(leader, []*member{lost})
	lost.stop(t)
	if err := os.RemoveAll(lost.dir); err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, leader.propose(t, createAccount("acct-2")), 201)
	c.openJoining(lost)
	c.converge(leader, without(c.members, leader))
}
