package cluster

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/persistence"
)

// A sharded node's backup: one file of every account of every group, in
// the format of a one-group backup, so that it restores into a new
// cluster of one group (addrwatchd --restore, POST /admin/v1/restore).
// Each group's part is a fresh snapshot of this node's replica of it,
// taken once the replica has applied everything its group's leader had
// committed when the backup began (so every write acknowledged before is
// in); each account is as some committed point of its own group left it,
// and no rule spans two accounts, so that is all a backup needs.
//
// A slot's accounts are taken from the group the directory gives the
// slot, and only where that group's snapshot does not hold the slot away,
// so that every account is in the file once. While a slot moves, its
// accounts are in neither group for certain: the backup is refused
// (ErrSlotMoving) and can be taken again once the move ends.

// Backup writes a backup of every account of every group to w.
func (g *Groups) Backup(w io.Writer) error {
	before, known := g.meta.directory()
	if !known {
		return ErrNoDirectory
	}
	if len(before.Moves) > 0 {
		return fmt.Errorf("%w: a backup waits until no slot is moving", ErrSlotMoving)
	}
	var accounts []*actors.Account
	version := actors.FeatureVersion(1)
	for id, n := range g.nodes {
		if err := g.catchUp(id); err != nil {
			return fmt.Errorf("cluster: group %d: %w", id, err)
		}
		part, v, err := n.latestSnapshotAccounts()
		if err != nil {
			return fmt.Errorf("cluster: group %d: %w", id, err)
		}
		for _, a := range part {
			if int(before.Slots[SlotOf(a.ID)]) == id {
				accounts = append(accounts, a)
			}
		}
		version = max(version, v)
	}
	after, _ := g.meta.directory()
	if len(after.Moves) > 0 || !slices.Equal(after.Slots, before.Slots) {
		return fmt.Errorf("%w: a slot moved during the backup; take it again", ErrSlotMoving)
	}
	slices.SortFunc(accounts, func(a, b *actors.Account) int { return strings.Compare(a.ID, b.ID) })
	sw, err := persistence.NewSnapshotWriterFor(w, version)
	if err != nil {
		return err
	}
	for _, a := range accounts {
		b, err := persistence.EncodeAccount(a)
		if err != nil {
			return err
		}
		if err := sw.WriteAccount(b); err != nil {
			return err
		}
	}
	return sw.Close()
}

// catchUpWait bounds the wait for a replica to apply its leader's commits.
const catchUpWait = 10 * time.Second

// catchUp waits until this node's replica of group id has applied what
// its leader had committed at the call.
func (g *Groups) catchUp(id int) error {
	index, err := g.commitIndex(id)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(catchUpWait)
	for g.nodes[id].raft.AppliedIndex() < index {
		if time.Now().After(deadline) {
			return fmt.Errorf("this node's replica did not reach index %d in %s", index, catchUpWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// latestSnapshotAccounts takes a snapshot now and returns its accounts,
// leaving out those of slots it holds away, and its feature version.
func (n *Node) latestSnapshotAccounts() ([]*actors.Account, actors.FeatureVersion, error) {
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil, 0, err
	}
	snaps, err := n.stores.Snapshot.List()
	if err != nil {
		return nil, 0, err
	}
	if len(snaps) == 0 {
		return nil, 0, errors.New("no snapshot to back up yet")
	}
	_, rc, err := n.stores.Snapshot.Open(snaps[0].ID)
	if err != nil {
		return nil, 0, err
	}
	defer rc.Close()
	accounts, meta, version, err := persistence.ReadSnapshotVersioned(rc)
	if err != nil {
		return nil, 0, err
	}
	var slots slotState
	if err := slots.restore(meta); err != nil {
		return nil, 0, err
	}
	return slices.DeleteFunc(accounts, func(a *actors.Account) bool { return slots.away(SlotOf(a.ID)) }), version, nil
}
