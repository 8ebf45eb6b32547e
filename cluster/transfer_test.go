package cluster

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// TestTransferringLeaderServesNothing: a leadership transfer elects its
// target at once, inside the old leader's lease, so a leader that kept
// answering default reads while it handed over could answer from state the
// new leader has moved past (the fault test saw reads 150 ms stale). The
// leader's traffic to the target is held here, so the transfer hangs until
// raft gives it up: all that while the leader must not serve, and once the
// transfer has failed it serves again.
func TestTransferringLeaderServesNothing(t *testing.T) {
	var held atomic.Value // [2]string{from id, to raft address} whose writes wait
	held.Store([2]string{})
	opts := clusterOptions{dial: func(from *member) DialFunc {
		return func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			pair := [2]string{from.id, addr}
			return &holdableConn{Conn: c, held: func() bool { return held.Load().([2]string) == pair }}, nil
		}
	}}
	c := startClusterWith(t, opts)
	// Cleanups run last-registered first: nothing is held when the
	// cluster closes, even after a failure.
	t.Cleanup(func() { held.Store([2]string{}) })
	leader := c.leader()
	populateLeader(t, leader, "acct-1", addresses[:2], t0)
	target := without(c.members, leader)[0]
	c.converge(leader, without(c.members, leader))

	held.Store([2]string{leader.id, target.raftAddr})
	var transfer sync.WaitGroup
	var transferErr error
	transfer.Add(1)
	go func() {
		defer transfer.Done()
		transferErr = leader.node.TransferLeadership(target.id)
	}()
	eventually(t, leader.id+" to stop serving while it hands over", func() (bool, string) {
		return !leader.node.Serving(), ""
	})
	transfer.Wait()
	held.Store([2]string{})
	if transferErr == nil {
		t.Fatalf("the transfer to %s succeeded though nothing reached it", target.id)
	}
	// Named, so the admin API says what happened instead of a bare 503
	// (raft's own error is the string "leadership transfer timeout").
	if !errors.Is(transferErr, clustererr.ErrTransferIncomplete) {
		t.Fatalf("the failed transfer's error %v is not ErrTransferIncomplete", transferErr)
	}
	eventually(t, leader.id+" to serve again after the failed transfer", func() (bool, string) {
		return leader.node.Serving(), ""
	})
}

// holdableConn is a node connection whose writes wait while held says so,
// and are then dropped with the connection: what was held (the transfer's
// TimeoutNow among it) never arrives late.
type holdableConn struct {
	net.Conn
	held func() bool
}

func (c *holdableConn) Write(p []byte) (int, error) {
	if !c.held() {
		return c.Conn.Write(p)
	}
	for c.held() {
		time.Sleep(time.Millisecond)
	}
	c.Conn.Close()
	return 0, net.ErrClosed
}
