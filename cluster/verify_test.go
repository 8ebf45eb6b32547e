package cluster

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/addrwatch/addrwatch/persistence"
)

// corruptingLog is a log store that, once armed, stores the next command
// entry with one byte of its Data flipped: what a disk that damages a
// write looks like to the node. raft's own copy of the entry (the one it
// applies, from the cache) stays intact, as it would with a real disk.
type corruptingLog struct {
	raft.LogStore
	mu      sync.Mutex
	armed   bool
	damaged uint64 // index of the damaged entry, 0 until one is
}

func (c *corruptingLog) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
}

func (c *corruptingLog) damagedIndex() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.damaged
}

func (c *corruptingLog) StoreLog(l *raft.Log) error { return c.StoreLogs([]*raft.Log{l}) }

func (c *corruptingLog) StoreLogs(logs []*raft.Log) error {
	c.mu.Lock()
	if c.armed {
		for i, l := range logs {
			if l.Type != raft.LogCommand || len(l.Data) == 0 {
				continue
			}
			bad := *l
			bad.Data = slices.Clone(l.Data)
			bad.Data[len(bad.Data)-1] ^= 0x01
			logs = slices.Clone(logs)
			logs[i] = &bad
			c.armed, c.damaged = false, l.Index
			break
		}
	}
	c.mu.Unlock()
	return c.LogStore.StoreLogs(logs)
}

func (c *corruptingLog) IsMonotonic() bool { return isMonotonic(c.LogStore) }

// TestLogVerificationReportsADamagedFollowerEntry damages one command
// entry as one follower stores it, has the leader write a checkpoint, and
// expects that follower, and only it, to report the mismatch in its
// status and its metrics, while every node keeps the same accounts (the
// checkpoint reaches no FSM). It runs on both log stores.
func TestLogVerificationReportsADamagedFollowerEntry(t *testing.T) {
	for _, store := range []persistence.LogStore{persistence.LogWAL, persistence.LogBolt} {
		t.Run(string(store), func(t *testing.T) { testLogVerificationReportsADamagedEntry(t, store) })
	}
}

func testLogVerificationReportsADamagedEntry(t *testing.T, store persistence.LogStore) {
	under, stores := logsUnderVerifier(func(s raft.LogStore) *corruptingLog { return &corruptingLog{LogStore: s} })
	c := startClusterWith(t, clusterOptions{raftLog: store, underVerifier: under})
	leader := c.leader()
	followers := without(c.live(), leader)
	damaged, healthy := followers[0], followers[1]

	addresses := concurrentAddresses(3)
	populateLeader(t, leader, "acct-verify", addresses[:1], 1)
	stores(damaged.id).arm()
	addCards(t, leader, "acct-verify", "after", addresses[1:], 2)
	eventually(t, "the damaged entry stored on "+damaged.id, func() (bool, string) {
		return stores(damaged.id).damagedIndex() != 0, "no entry damaged yet"
	})
	bad := stores(damaged.id).damagedIndex()
	c.converge(leader, c.live())

	if err := leader.node.checkpoint(); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	eventually(t, "a failed verification on "+damaged.id, func() (bool, string) {
		v := damaged.status(t).LogVerification
		return v.Failures == 1, fmt.Sprintf("%+v", v)
	})
	f := damaged.status(t).LogVerification.LastFailure
	if f == nil || f.FirstIndex > bad || f.LastIndex < bad || f.Kind != "storage" || f.LeaderChecksum == f.NodeChecksum {
		t.Fatalf("last failure %+v does not name the range of damaged entry %d", f, bad)
	}
	if got := metricValue(t, damaged.node, "addrwatch_raft_log_verify_failures_total"); got != 1 {
		t.Errorf("%s: addrwatch_raft_log_verify_failures_total = %v, want 1", damaged.id, got)
	}
	for _, m := range []*member{leader, healthy} {
		eventually(t, m.id+" verifies the damaged entry's range", func() (bool, string) {
			v := m.status(t).LogVerification
			return v.LastVerifiedIndex >= bad, fmt.Sprintf("%+v", v)
		})
		if v := m.status(t).LogVerification; v.Failures != 0 || v.LastFailure != nil {
			t.Errorf("%s reports a failure on an intact log: %+v", m.id, v)
		}
		if got := metricValue(t, m.node, "addrwatch_raft_log_verify_checkpoints_total"); got < 1 {
			t.Errorf("%s: addrwatch_raft_log_verify_checkpoints_total = %v, want at least 1", m.id, got)
		}
	}
	c.converge(leader, c.live())
}

// metricValue gathers n's metrics and returns the value of the counter
// or gauge called name.
func metricValue(t *testing.T, n *Node, name string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, col := range n.Collectors() {
		if err := reg.Register(col); err != nil {
			t.Fatalf("register: %v", err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		m := f.GetMetric()[0]
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestCheckpointDue: a checkpoint follows enough new entries at once, or
// any new entry after the interval, and never an idle log.
func TestCheckpointDue(t *testing.T) {
	for _, tc := range []struct {
		last, covered uint64
		since         time.Duration
		want          bool
	}{
		{last: 10, covered: 10, since: time.Hour, want: false},
		{last: 11, covered: 10, since: time.Second, want: false},
		{last: 11, covered: 10, since: checkpointInterval, want: true},
		{last: 10 + checkpointEntries, covered: 10, since: 0, want: true},
		{last: 9 + checkpointEntries, covered: 10, since: 0, want: false},
	} {
		if got := checkpointDue(tc.last, tc.covered, tc.since); got != tc.want {
			t.Errorf("checkpointDue(%d, %d, %v) = %v, want %v", tc.last, tc.covered, tc.since, got, tc.want)
		}
	}
}

// TestLogVerificationToleratesARewrittenTail feeds two verifiers what a
// leader and a follower store: the follower held an uncommitted entry 3
// of an old leader, which the new leader's entry 3 replaced (raft's
// "clearing log suffix"). Its written checksum then differs from the
// leader's without any damage: that range is unverified, not a failure.
// The same difference with no entry removed is damage in flight.
func TestLogVerificationToleratesARewrittenTail(t *testing.T) {
	entry := func(index, term uint64, data string) *raft.Log {
		return &raft.Log{Index: index, Term: term, Type: raft.LogCommand, Data: []byte(data)}
	}
	for _, tc := range []struct {
		name         string
		rewrite      bool
		wantFailures uint64
	}{
		{name: "tail replaced by the new leader", rewrite: true, wantFailures: 0},
		{name: "different entry written", rewrite: false, wantFailures: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leader := &logVerification{log: discardLogger()}
			follower := &logVerification{log: discardLogger()}
			leaderLog, followerLog := leader.wrap(raft.NewInmemStore(), nil), follower.wrap(raft.NewInmemStore(), nil)
			t.Cleanup(leader.close)
			t.Cleanup(follower.close)
			store := func(s raft.LogStore, logs ...*raft.Log) {
				t.Helper()
				if err := s.StoreLogs(logs); err != nil {
					t.Fatal(err)
				}
			}
			store(leaderLog, entry(1, 1, "a"), entry(2, 1, "b"), entry(3, 2, "c"))
			checkpoint := &raft.Log{Index: 4, Term: 2, Type: raft.LogBarrier}
			store(leaderLog, checkpoint)

			store(followerLog, entry(1, 1, "a"), entry(2, 1, "b"), entry(3, 1, "old"))
			if tc.rewrite {
				if err := followerLog.DeleteRange(3, 3); err != nil {
					t.Fatal(err)
				}
				store(followerLog, entry(3, 2, "c"))
			}
			replicated := *checkpoint
			store(followerLog, &replicated)

			eventually(t, "both verifiers to report", func() (bool, string) {
				l, f := leader.status(), follower.status()
				return l.CheckpointsVerified == 1 && f.CheckpointsVerified+f.Failures+f.Unverified == 1, fmt.Sprintf("leader %+v, follower %+v", l, f)
			})
			if f := follower.status(); f.Failures != tc.wantFailures {
				t.Fatalf("follower reports %+v, want %d failures", f, tc.wantFailures)
			}
		})
	}
}
