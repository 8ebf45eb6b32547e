package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/persistence"
)

// A data group's share of a slot's move (slotmove.go) is part of its
// replicated state: three kinds of entry in its own log, applied in log
// order with its account commands, so that every replica refuses the same
// commands.
//
//   - freeze: the slot is moving out. From this entry on, the group
//     applies no command to the slot's accounts and serves no read of
//     them; it still holds them, unchanged, for the destination to copy.
//   - install: accounts of a slot moving in, copied from the source's
//     frozen state. Until the last install of the move, the slot is still
//     not served here.
//   - drop: once the slot belongs to the destination, the source forgets
//     its accounts.

// slotEntry is one of those entries, in JSON inside a cluster entry
// (persistence.EncodeClusterEntry).
type slotEntry struct {
	Op       string            `json:"slot_op"` // "freeze", "install", "drop"
	Slot     Slot              `json:"slot"`
	Move     uint64            `json:"move"`
	Accounts []json.RawMessage `json:"accounts,omitempty"` // install: persistence.EncodeAccount
	Last     bool              `json:"last,omitempty"`     // install: the move's last install
}

func (e slotEntry) encode() ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return persistence.EncodeClusterEntry(b), nil
}

// slotState is what a group's log has said of moving slots. It rides in
// the group's snapshots as their cluster metadata.
type slotState struct {
	mu sync.RWMutex
	slotRecord
}

// slotRecord is slotState's content, as snapshots carry it.
type slotRecord struct {
	// Out: slots frozen by a move out (the move's ID). The group serves
	// none of their accounts, before and after it drops them.
	Out map[Slot]uint64 `json:"out,omitempty"`
	// Dropped: the move whose drop has applied, per slot moved out.
	Dropped map[Slot]uint64 `json:"dropped,omitempty"`
	// In: slots whose install has begun and not ended (the move's ID).
	In map[Slot]uint64 `json:"in,omitempty"`
	// Arrived: the last move whose installs all applied, per slot.
	Arrived map[Slot]uint64 `json:"arrived,omitempty"`
}

// snapshotMeta is the cluster metadata of a group's snapshot. Snapshots
// from before sharding carry none, or the old node directory, which has
// no "slots".
type snapshotMeta struct {
	Slots *slotRecord `json:"slots,omitempty"`
}

// away reports whether the group must neither serve nor change s's
// accounts.
func (st *slotState) away(s Slot) bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	_, out := st.Out[s]
	_, in := st.In[s]
	return out || in
}

// any reports whether the log has said anything of moving slots.
func (st *slotState) any() bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.Out)+len(st.Dropped)+len(st.In)+len(st.Arrived) > 0
}

// outSlots are the slots frozen by a move out, with the move's ID.
func (st *slotState) outSlots() map[Slot]uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return maps.Clone(st.Out)
}

// frozenBy is the move that froze s here, or 0.
func (st *slotState) frozenBy(s Slot) uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.Out[s]
}

// droppedBy is the move whose drop of s has applied here, or 0.
func (st *slotState) droppedBy(s Slot) uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.Dropped[s]
}

// arrivedBy is the last move whose installs of s all applied here, or 0.
func (st *slotState) arrivedBy(s Slot) uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.Arrived[s]
}

// apply applies one slot entry to the state and to accounts. It runs on
// the FSM goroutine, between account commands, in log order.
func (st *slotState) apply(e slotEntry, accounts *registry.Registry) error {
	if int(e.Slot) >= SlotCount || e.Move == 0 {
		return fmt.Errorf("slot entry for slot %d, move %d", e.Slot, e.Move)
	}
	// A step of a move older than one this group has seen the end of is
	// late (a retry that raced the move's end) and changes nothing: an
	// install after the slot arrived would put back the frozen copies of
	// accounts written since.
	if e.Move <= st.arrivedBy(e.Slot) || (e.Op != "install" && e.Move < st.frozenBy(e.Slot)) {
		return fmt.Errorf("slot %d: %s of move %d, which has ended", e.Slot, e.Op, e.Move)
	}
	if e.Op == "drop" && st.frozenBy(e.Slot) != e.Move {
		return fmt.Errorf("slot %d: drop of move %d, which did not freeze it", e.Slot, e.Move)
	}
	switch e.Op {
	case "freeze":
		st.update(func(r *slotRecord) { r.Out[e.Slot] = e.Move })
	case "install":
		installed := make([]*actors.Account, 0, len(e.Accounts))
		for _, raw := range e.Accounts {
			var a actors.Account
			if err := json.Unmarshal(raw, &a); err != nil {
				return fmt.Errorf("slot %d: install: %w", e.Slot, err)
			}
			if a.ID == "" || SlotOf(a.ID) != e.Slot {
				return fmt.Errorf("slot %d: install of account %q of another slot", e.Slot, a.ID)
			}
			installed = append(installed, &a)
		}
		accounts.Install(installed)
		st.update(func(r *slotRecord) {
			if e.Last {
				delete(r.In, e.Slot)
				delete(r.Out, e.Slot) // a slot may come back to a group it left
				delete(r.Dropped, e.Slot)
				r.Arrived[e.Slot] = e.Move
			} else {
				r.In[e.Slot] = e.Move
			}
		})
	case "drop":
		accounts.Remove(accounts.IDs(func(id string) bool { return SlotOf(id) == e.Slot }))
		st.update(func(r *slotRecord) { r.Dropped[e.Slot] = e.Move })
	default:
		return fmt.Errorf("unknown slot op %q", e.Op)
	}
	return nil
}

// update changes the record under the lock, its maps made when missing.
func (st *slotState) update(change func(r *slotRecord)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, m := range []*map[Slot]uint64{&st.Out, &st.Dropped, &st.In, &st.Arrived} {
		if *m == nil {
			*m = map[Slot]uint64{}
		}
	}
	change(&st.slotRecord)
}

// meta is the snapshot's cluster metadata: nil when no slot ever moved.
func (st *slotState) meta() ([]byte, error) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if len(st.Out)+len(st.Dropped)+len(st.In)+len(st.Arrived) == 0 {
		return nil, nil
	}
	return json.Marshal(snapshotMeta{Slots: &slotRecord{Out: maps.Clone(st.Out), Dropped: maps.Clone(st.Dropped), In: maps.Clone(st.In), Arrived: maps.Clone(st.Arrived)}})
}

// restore replaces the state with a snapshot's cluster metadata.
func (st *slotState) restore(meta []byte) error {
	var m snapshotMeta
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil {
			return fmt.Errorf("cluster metadata: %w", err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.slotRecord = slotRecord{}
	if m.Slots != nil {
		st.slotRecord = *m.Slots
	}
	return nil
}
