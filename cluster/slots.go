package cluster

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// Placement of accounts on raft groups (SCALE.md, "Placement"). An account
// belongs to a slot by a fixed hash of its ID, and a slot to a group by the
// directory the meta group keeps. The hash never changes, since a changed
// hash would move every account; slots move between groups instead.

// SlotCount is the number of slots. Fixed for the life of a cluster: it is
// part of where every account lives.
const SlotCount = 4096

// MaxGroups bounds --groups: each group is a whole raft instance on every
// node, with its own heartbeats, log and fsyncs (SCALE.md, section 3).
const MaxGroups = 64

// Slot is a slot number, below SlotCount.
type Slot uint16

// SlotOf is the slot of an account: FNV-1a 64 of its ID, mod SlotCount.
func SlotOf(account string) Slot {
	h := fnv.New64a()
	h.Write([]byte(account)) // a hash.Hash never fails to write
	return Slot(h.Sum64() % SlotCount)
}

// Directory maps every slot to the group that holds its accounts. The zero
// value has no groups: no account has a place yet.
type Directory struct {
	Groups int `json:"groups"`
	// Slots[s] is the group of slot s; empty while Groups is 0.
	Slots []uint16 `json:"slots"`
	// Moves are the slots moving to another group (slotmove.go); a slot
	// stays in its group until its move flips it.
	Moves map[Slot]Move `json:"moves,omitempty"`
	// Draining are the nodes that lead no group (balance.go), sorted.
	Draining []string `json:"draining,omitempty"`
}

// draining reports whether the node id is draining.
func (d Directory) draining(id string) bool {
	_, found := slices.BinarySearch(d.Draining, id)
	return found
}

// Move is one slot's move between groups.
type Move struct {
	// ID is the meta log index that began the move: the steps of one move
	// carry it, so that a step of an earlier move of the same slot is
	// never taken for one of this move.
	ID   uint64 `json:"id"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// clone is a copy of d that shares nothing with it.
func (d Directory) clone() Directory {
	c := Directory{Groups: d.Groups, Slots: append([]uint16(nil), d.Slots...), Draining: slices.Clone(d.Draining)}
	if len(d.Moves) > 0 {
		c.Moves = make(map[Slot]Move, len(d.Moves))
		for s, m := range d.Moves {
			c.Moves[s] = m
		}
	}
	return c
}

// NewDirectory deals the slots out to groups groups in turn, so each group
// starts with an equal share (slot s to group s mod groups).
func NewDirectory(groups int) (Directory, error) {
	if groups < 1 || groups > MaxGroups {
		return Directory{}, fmt.Errorf("cluster: %d groups; a cluster has 1 to %d", groups, MaxGroups)
	}
	d := Directory{Groups: groups, Slots: make([]uint16, SlotCount)}
	for s := range d.Slots {
		d.Slots[s] = uint16(s % groups)
	}
	return d, nil
}

// ErrNoDirectory is returned while a node has not yet applied the meta
// group's directory (a new cluster before its first meta leader).
var ErrNoDirectory = clustererr.ErrNoDirectory

// GroupOf is the group that holds account.
func (d Directory) GroupOf(account string) (int, error) {
	if d.Groups == 0 {
		return 0, ErrNoDirectory
	}
	return int(d.Slots[SlotOf(account)]), nil
}

// check reports a directory that no node may act on: one that does not
// cover every slot, or names a group it does not have.
func (d Directory) check() error {
	if d.Groups < 1 || d.Groups > MaxGroups || len(d.Slots) != SlotCount {
		return fmt.Errorf("cluster: a directory of %d groups and %d slots", d.Groups, len(d.Slots))
	}
	for s, g := range d.Slots {
		if int(g) >= d.Groups {
			return fmt.Errorf("cluster: directory puts slot %d in group %d of %d", s, g, d.Groups)
		}
	}
	if !slices.IsSorted(d.Draining) {
		return fmt.Errorf("cluster: a directory whose draining nodes are out of order: %v", d.Draining)
	}
	for s, m := range d.Moves {
		if int(s) >= SlotCount || m.From != int(d.Slots[s]) || m.To == m.From || m.To < 0 || m.To >= d.Groups {
			return fmt.Errorf("cluster: directory moves slot %d from group %d to %d", s, m.From, m.To)
		}
	}
	return nil
}

// Counts is how many slots each group holds.
func (d Directory) Counts() []int {
	counts := make([]int, d.Groups)
	for _, g := range d.Slots {
		counts[g]++
	}
	return counts
}
