package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/cluster/clustererr"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/persistence"
)

// Operator actions beyond membership: leadership transfer, backups and
// restores, and the quorum check behind linearizable reads.

// TransferLeadership hands leadership to another voter (to id when given,
// else raft's pick) and waits for it.
//
// This node stops serving reads and writes before it asks raft to hand
// over, and serves again only if the transfer fails. A default read rests
// on the leader's lease: a deposed leader answers only until it has missed
// a quorum's heartbeats for LeaderLeaseTimeout, which is shorter than any
// election. A transfer elects its target at once, inside that lease, so a
// leader cut off from the cluster right after it asked for one would
// otherwise go on answering default reads from state the new leader has
// moved past (the fault test's transfer into a partition saw reads up to
// 150 ms stale). Requests that arrive meanwhile wait for the new leader as
// during an election, and are forwarded to it.
func (n *Node) TransferLeadership(id string) error {
	if n.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	n.transfers.Add(1)
	defer n.transfers.Add(-1)
	if id == "" {
		return transferError(n.raft.LeadershipTransfer().Error())
	}
	future := n.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return err
	}
	for _, s := range future.Configuration().Servers {
		if string(s.ID) == id {
			return transferError(n.raft.LeadershipTransferToServer(s.ID, s.Address).Error())
		}
	}
	return fmt.Errorf("%w: no server %q in the cluster", ErrUnknownServer, id)
}

// transferError names what raft said of a transfer: its errors are
// strings ("leadership transfer timeout"), which the edge could answer
// only with a 503 that says nothing.
func transferError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		return ErrNotLeader
	default:
		return fmt.Errorf("%w (%v)", clustererr.ErrTransferIncomplete, err)
	}
}

// ErrUnknownServer names a server the cluster does not have.
var ErrUnknownServer = clustererr.ErrUnknownServer

// Backup takes a snapshot now and streams it to w: a consistent file of
// every account, with the snapshot format's checksum, that Restore (or
// addrwatchd --restore) accepts.
func (n *Node) Backup(w io.Writer) error {
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return err
	}
	snaps, err := n.stores.Snapshot.List()
	if err != nil {
		return err
	}
	if len(snaps) == 0 {
		return errors.New("cluster: no snapshot to back up yet")
	}
	_, rc, err := n.stores.Snapshot.Open(snaps[0].ID)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return err
}

// RestoreFile replaces the cluster's state with a backup file. It checks
// the whole file first, then has raft install it as a snapshot on every
// node; only the leader can.
func (n *Node) RestoreFile(path string) error {
	if !n.serving() {
		return ErrNotLeader
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, _, err := persistence.ReadSnapshotWithMeta(f); err != nil {
		return fmt.Errorf("cluster: backup %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	cfg := n.raft.GetConfiguration()
	if err := cfg.Error(); err != nil {
		return err
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: info.Size(), Configuration: cfg.Configuration(), ConfigurationIndex: cfg.Index()}
	return n.raft.Restore(meta, f, restoreTimeout)
}

const restoreTimeout = 10 * time.Minute

// leaderCheck batches quorum checks for linearizable reads: a read waits
// for a check that started after it arrived, and every read waiting when a
// check starts shares it, so concurrent reads cost one round trip.
type leaderCheck struct {
	raft    *raft.Raft
	mu      sync.Mutex
	waiting []chan error
	running bool
}

func (l *leaderCheck) verify(ctx context.Context) error {
	done := make(chan error, 1)
	l.mu.Lock()
	l.waiting = append(l.waiting, done)
	if !l.running {
		l.running = true
		go l.run()
	}
	l.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *leaderCheck) run() {
	for {
		l.mu.Lock()
		batch := l.waiting
		l.waiting = nil
		if len(batch) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		err := l.raft.VerifyLeader().Error()
		if err != nil {
			err = ErrNotLeader
		}
		for _, done := range batch {
			done <- err
		}
	}
}
