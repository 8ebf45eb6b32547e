package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// refusingLog is a log store that, while refusing, fails every write:
// what a follower's stalled or full disk looks like to raft, whose
// follower then answers the leader's AppendEntries with Success=false.
type refusingLog struct {
	raft.LogStore
	refusing atomic.Bool
}

var errRefusedWrite = errors.New("test: the log store refuses writes")

// refusalStall is how long a refused write takes, as on a stalled disk:
// the leader sends its next append meanwhile, so a refusal comes back
// with another append in flight behind it.
const refusalStall = 10 * time.Millisecond

func (r *refusingLog) StoreLog(l *raft.Log) error { return r.StoreLogs([]*raft.Log{l}) }

func (r *refusingLog) StoreLogs(logs []*raft.Log) error {
	if r.refusing.Load() {
		time.Sleep(refusalStall)
		return errRefusedWrite
	}
	return r.LogStore.StoreLogs(logs)
}

func (r *refusingLog) IsMonotonic() bool { return isMonotonic(r.LogStore) }

// TestThreeNodeFollowerCatchesUpAfterRefusedAppends: a follower that
// refuses the leader's appends for a moment, again and again while
// writes flow, catches up with the leader once it stores again, and the
// leader still shuts down.
//
// hashicorp/raft's pipelined replication (its default) can wedge after a
// refused append (hashicorp/raft#612): the leader's pipeline decoder
// stops on the refusal while the sender, picking at random among ready
// cases, sends once more and waits forever to hand the request to the
// decoder of a connection nobody reads any more. Heartbeats go on, so the
// follower never calls an election, but it never receives another entry,
// and the leader's Shutdown waits for that sender for good. In a sharded
// cluster a leadership transfer's stale-term answer stops the decoder the
// same way: the drain test saw a node's replica of the meta group stop
// short of the drain and hand the draining node a group, and a cleanup
// hang until the 15-minute test timeout.
func TestThreeNodeFollowerCatchesUpAfterRefusedAppends(t *testing.T) {
	under, stores := logsUnderVerifier(func(s raft.LogStore) *refusingLog { return &refusingLog{LogStore: s} })
	c := startClusterWith(t, clusterOptions{underVerifier: under})
	leader := c.leader()
	follower := without(c.live(), leader)[0]

	// Writers keep appends in flight on the leader's pipeline while the
	// follower refuses them, a few milliseconds at a time.
	ctx, stopWriting := context.WithCancel(context.Background())
	var writers sync.WaitGroup
	var written atomic.Int64
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if _, err := leader.node.Propose(ctx, createAccount(fmt.Sprintf("acct-w%d-%d", w, i))); err == nil {
					written.Add(1)
				}
			}
		}()
	}
	refusing := stores(follower.id)
	for range 30 {
		refusing.refusing.Store(true)
		time.Sleep(15 * time.Millisecond)
		refusing.refusing.Store(false)
		time.Sleep(60 * time.Millisecond)
	}
	stopWriting()
	writers.Wait()
	if written.Load() == 0 {
		t.Fatal("no write was acknowledged while the follower refused appends")
	}

	// Waited on by hand rather than with eventually: on failure the
	// leader's Close below must still be reached and bounded, not left
	// to the cleanup, where a wedged leader would hang the package.
	want := leader.node.raft.LastIndex()
	caughtUp := false
	for deadline := time.Now().Add(testTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if follower.node.raft.AppliedIndex() >= want {
			caughtUp = true
			break
		}
	}
	if !caughtUp {
		t.Errorf("%s applied %d of the leader's %d entries %v after it stored again", follower.id, follower.node.raft.AppliedIndex(), want, testTimeout)
	}
	closed := make(chan error, 1)
	node := leader.node
	leader.node = nil // the cleanup must not close it a second time
	go func() { closed <- node.Close() }()
	select {
	case err := <-closed:
		leader.accounts.Shutdown()
		if err != nil {
			t.Errorf("Close %s: %v", leader.id, err)
		}
	case <-time.After(testTimeout):
		t.Fatalf("the leader's Close has not returned after %v: its replication to %s is wedged", testTimeout, follower.id)
	}
}
