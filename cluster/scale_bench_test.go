package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/persistence"
)

// BenchmarkNodeCostPerAccount measures what one account costs a node, for
// the capacity model in SCALE.md: the live heap of a node holding n
// accounts (state, actor and indexes) and of the accounts' state alone,
// snapshot bytes, and the time per account of encoding alone, of the part
// of a snapshot during which no write applies (FSM.Snapshot), of a whole
// snapshot, a restore and a restart. Each fill is run once whatever b.N:
//
//	go test ./cluster -run '^$' -bench NodeCostPerAccount -benchtime 1x
//
// ADDRWATCH_SCALE_ACCOUNTS sets n (default 20,000).
func BenchmarkNodeCostPerAccount(b *testing.B) {
	n := 20_000
	if s := os.Getenv("ADDRWATCH_SCALE_ACCOUNTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("ADDRWATCH_SCALE_ACCOUNTS: %v", err)
		}
	}
	for _, fill := range []struct {
		name  string
		build func(tb testing.TB, id string) *actors.Account
	}{
		{"new-account", newAccountWithKey},
		{"base-10-cards", baseAccountWithCards},
	} {
		b.Run(fill.name, func(b *testing.B) {
			for b.Loop() {
				measureNodeCost(b, n, fill.build)
			}
		})
	}
}

// newAccountWithKey is an account as created, with one API key.
func newAccountWithKey(tb testing.TB, id string) *actors.Account {
	a, res := actors.Apply(nil, createAccount(id))
	if _, err := res.Outcome(); err != nil {
		tb.Fatal(err)
	}
	a, res = actors.Apply(a, &actors.Command{Account: id, At: t0 + int64(time.Second), Principal: ownerPrincipal,
		Payload: &actors.CreateKey{KeyID: id + "-key", Name: "agent", Capability: actors.LevelWrite, Hash: hashOf("awk." + id)}})
	if _, err := res.Outcome(); err != nil {
		tb.Fatal(err)
	}
	return a
}

func measureNodeCost(b *testing.B, n int, build func(testing.TB, string) *actors.Account) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("acct-%06d", i)
	}
	// The accounts' state alone, as built by the rules.
	before := liveHeap()
	state := make([]*actors.Account, n)
	for i, id := range ids {
		state[i] = build(b, id)
	}
	stateHeap := float64(liveHeap()-before) / float64(n)

	dir := b.TempDir()
	backup := filepath.Join(dir, "backup.awsnap")
	start := time.Now()
	encoded := make([][]byte, len(state))
	for i, a := range state {
		e, err := persistence.EncodeAccount(a)
		if err != nil {
			b.Fatal(err)
		}
		encoded[i] = e
	}
	encode := time.Since(start)
	size := writeAccounts(b, backup, encoded)
	state, encoded = nil, nil

	// A node restoring them, then holding them.
	data, addr := filepath.Join(dir, "node"), freeRaftAddr(b)
	before = liveHeap()
	tn := startNode(b, data, addr)
	start = time.Now()
	if err := tn.node.RestoreFile(backup); err != nil {
		b.Fatalf("RestoreFile: %v", err)
	}
	restore := time.Since(start)
	os.Remove(backup)
	nodeHeap := float64(liveHeap()-before) / float64(n)

	// A snapshot of them all (one write first, so there is something new
	// to snapshot).
	if _, err := tn.node.Propose(context.Background(), createAccount("acct-extra")); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if err := tn.node.Snapshot(); err != nil {
		b.Fatalf("Snapshot: %v", err)
	}
	snapshot := time.Since(start)
	tn.close()

	start = time.Now()
	tn = startNode(b, data, addr)
	restart := time.Since(start)
	if got := tn.accounts.Len(); got != n+1 {
		b.Fatalf("restarted with %d accounts, want %d", got, n+1)
	}
	// The part of a snapshot raft runs on the FSM goroutine, while no
	// write can apply: FSM.Snapshot, every account encoded in its actor.
	start = time.Now()
	if _, err := tn.node.fsm.Snapshot(); err != nil {
		b.Fatal(err)
	}
	stall := time.Since(start)
	tn.close()

	b.ReportMetric(float64(n), "accounts")
	b.ReportMetric(nodeHeap, "node-heap-B/account")
	b.ReportMetric(stateHeap, "state-heap-B/account")
	b.ReportMetric(float64(size)/float64(n), "snapshot-B/account")
	b.ReportMetric(float64(snapshot.Microseconds())/float64(n), "snapshot-µs/account")
	b.ReportMetric(float64(encode.Microseconds())/float64(n), "encode-µs/account")
	b.ReportMetric(float64(stall.Microseconds())/float64(n), "stall-µs/account")
	b.ReportMetric(float64(restore.Microseconds())/float64(n), "restore-µs/account")
	b.ReportMetric(float64(restart.Microseconds())/float64(n), "restart-µs/account")
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// writeAccounts writes encoded accounts into a backup file (the snapshot
// format) and returns its size.
func writeAccounts(b *testing.B, path string, encoded [][]byte) int64 {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sw, err := persistence.NewSnapshotWriter(f)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range encoded {
		if err := sw.WriteAccount(e); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		b.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return info.Size()
}
