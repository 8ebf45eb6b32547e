package cluster

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

// Data dirs written before nodes trusted each other through mutual TLS
// hold a node directory: log entries of format 2 announcing a leader's
// listeners with a forwarding secret, and the same directory as the
// cluster metadata of every snapshot and backup. These tests build both
// byte for byte as that code wrote them.

const oldSecret = "9bd266b7d1c4f0a8e3b5a6c7d8e9f00112233445566778899aabbccddeeff001"

// oldDirectoryEntry is a leader's announcement as it was appended to the
// log: the cluster entry format byte, then its JSON.
func oldDirectoryEntry(nodeID string) []byte {
	body := fmt.Sprintf(`{"node_id":%q,"addrs":{"http":"127.0.0.1:8080","admin":"127.0.0.1:8081"},"secret":%q}`, nodeID, oldSecret)
	return append([]byte{2}, body...)
}

// oldSnapshot encodes reg's accounts with the old directory, secret
// included, as the snapshot's cluster metadata.
func oldSnapshot(t *testing.T, reg *registry.Registry) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw, err := persistence.NewSnapshotWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	err = reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		b, err := persistence.EncodeAccount(a)
		if err != nil {
			return a, err
		}
		return a, sw.WriteAccount(b)
	}, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"secret":%q,"nodes":{"n1":{"http":"127.0.0.1:8080","admin":"127.0.0.1:8081"}}}`, oldSecret)
	if err := sw.CloseWithMeta([]byte(meta)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// holdsSecret reports whether a snapshot or backup still carries the old
// directory's secret, or any "secret" field.
func holdsSecret(b []byte) bool {
	return bytes.Contains(b, []byte(oldSecret)) || bytes.Contains(b, []byte(`"secret"`))
}

func TestOldDirectoryEntriesApplyAndLeaveNoSecret(t *testing.T) {
	f := newFSM(t)
	responses := f.ApplyBatch([]*raft.Log{
		logEntry(t, 1, createAccount("acct-1")),
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: oldDirectoryEntry("n1")},
		logEntry(t, 3, createCard("acct-1", "c1", addresses[0], t0+1)),
	})
	if r, isResults := responses[2].([]applied); !isResults || len(r) != 1 || r[0].Status != 201 {
		t.Fatalf("the command after an old directory entry: %#v", responses[2])
	}
	if responses[1] != nil {
		t.Fatalf("the old directory entry answered %#v", responses[1])
	}
	if holdsSecret(snapshotBytes(t, f)) {
		t.Fatal("a snapshot after an old directory entry carries the forwarding secret")
	}
}

func TestOldSnapshotRestoresAndLeavesNoSecret(t *testing.T) {
	f := newFSM(t)
	f.ApplyBatch([]*raft.Log{logEntry(t, 1, createAccount("acct-1"), createCard("acct-1", "c1", addresses[0], t0+1))})
	old := oldSnapshot(t, f.accounts)

	g := newFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(old))); err != nil {
		t.Fatalf("Restore of an old snapshot: %v", err)
	}
	want := queryJSON(t, f, ownerCred("acct-1"), actors.ListPortfolioQuery{})
	if got := queryJSON(t, g, ownerCred("acct-1"), actors.ListPortfolioQuery{}); got != want {
		t.Fatalf("after restoring an old snapshot:\n got %s\nwant %s", got, want)
	}
	if holdsSecret(snapshotBytes(t, g)) {
		t.Fatal("the snapshot after restoring an old one still carries the forwarding secret")
	}
}

// TestOldDataDirStartsAndDropsTheSecret gives a node an old snapshot (as a
// restored backup) and old directory entries in its log, before and after
// that snapshot, then restarts it: it starts, replays, serves, and its next
// backup holds no secret.
func TestOldDataDirStartsAndDropsTheSecret(t *testing.T) {
	dir, addr := t.TempDir(), freeRaftAddr(t)
	tn := startNode(t, dir, addr)
	mustSucceed(t, tn.propose(createAccount("acct-1")), 201)
	if err := tn.node.raft.Apply(oldDirectoryEntry("node1"), testTimeout).Error(); err != nil {
		t.Fatalf("append an old directory entry: %v", err)
	}
	backup := filepath.Join(t.TempDir(), "old.snap")
	if err := os.WriteFile(backup, oldSnapshot(t, tn.accounts), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tn.node.RestoreFile(backup); err != nil {
		t.Fatalf("install an old snapshot: %v", err)
	}
	if err := tn.node.raft.Apply(oldDirectoryEntry("node1"), testTimeout).Error(); err != nil {
		t.Fatalf("append an old directory entry: %v", err)
	}
	mustSucceed(t, tn.propose(createCard("acct-1", "c1", addresses[0], t0+1)), 201)
	want := listJSON(t, tn, "acct-1")
	tn.close()

	again := startNode(t, dir, addr)
	if got := listJSON(t, again, "acct-1"); got != want {
		t.Fatalf("after a restart on the old data dir:\n got %s\nwant %s", got, want)
	}
	mustSucceed(t, again.propose(createCard("acct-1", "c2", addresses[1], t0+2)), 201)
	var buf bytes.Buffer
	if err := again.node.Backup(&buf); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if holdsSecret(buf.Bytes()) {
		t.Fatal("a backup taken after the restart carries the forwarding secret")
	}
}
