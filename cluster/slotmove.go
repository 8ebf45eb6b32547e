package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/persistence"
)

// Moving a slot between groups online (SCALE.md, "Moving a slot online").
//
// The meta group records the move; then each step is taken by the leader
// of the group whose log it goes through, when that node sees in its own
// replicas that the step before has applied. Every node runs every group,
// so the destination's leader copies the slot's accounts from its own
// replica of the source: nothing is shipped between nodes but raft's log.
//
//  1. meta: "move" slot s from group A to group B (Groups.MoveSlot).
//  2. A's leader: "freeze" s in A's log. A serves none of s's accounts
//     from then on, and holds them unchanged.
//  3. B's leader, once its replica of A has applied the freeze: "install"
//     s's accounts, as of the freeze, in B's log, in entries of at most
//     installEntryBytes; the last says so.
//  4. The meta leader, once its replica of B has applied the last install:
//     "flip" s to B. Requests for s's accounts go to B from then on.
//  5. A's leader, once the directory puts s elsewhere: "drop" s's
//     accounts from A.
//
// From the move's start to the flip, both groups refuse s's accounts with
// a retryable 503 (errSlotAway): a client waits about a second, never gets
// a wrong answer, and its retried write, carrying the same idempotency key,
// finds the key's record, which moved with the account. Each step is
// idempotent and resumes after a crash or a leader change: a new leader
// sees where its replicas stand and takes the next step.

// Timing of the steps.
const (
	moveTick      = 50 * time.Millisecond
	stepTimeout   = 30 * time.Second
	exportTimeout = 30 * time.Second
	// installEntryBytes bounds one install entry (one account may exceed
	// it, alone in its entry).
	installEntryBytes = 1 << 20
)

// MoveSlot begins moving slot s to group to and returns the move as the
// meta group recorded it. The steps then happen in the background on
// whichever nodes lead the groups involved. Only the meta group's leader
// can begin a move (ErrNotLeader elsewhere).
func (g *Groups) MoveSlot(s Slot, to int) (Move, error) {
	if g.meta.raft.State() != raft.Leader {
		return Move{}, ErrNotLeader
	}
	if err := g.meta.propose(metaCommand{Op: "move", Slot: s, To: to}); err != nil {
		return Move{}, err
	}
	d, _ := g.meta.directory()
	m, moving := d.Moves[s]
	if !moving || m.To != to {
		return Move{}, errMoveGone // the move already ended
	}
	return m, nil
}

// MetaLeader is the meta group's leadership as this node sees it: whether
// this node leads it, and else the leader's raft address when known.
func (g *Groups) MetaLeader() (leads bool, addr string, known bool) {
	if g.meta.raft.State() == raft.Leader {
		return true, "", false
	}
	a, _ := g.meta.raft.LeaderWithID()
	return false, string(a), a != ""
}

// mover runs this node's share of every move.
type mover struct {
	g        *Groups
	mu       sync.Mutex
	stepping map[string]bool // steps running now, by stepKey
}

func (g *Groups) driveMoves() {
	mv := &mover{g: g, stepping: map[string]bool{}}
	t := time.NewTicker(moveTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			mv.tick()
		case <-g.done:
			return
		}
	}
}

// tick starts every step this node can take now.
func (mv *mover) tick() {
	d, known := mv.g.meta.directory()
	if !known || d.Groups != len(mv.g.nodes) {
		return
	}
	for s, m := range d.Moves {
		from, to := mv.g.nodes[m.From], mv.g.nodes[m.To]
		switch {
		case from.fsm.slots.frozenBy(s) != m.ID:
			if from.serving() {
				mv.start(s, m, "freeze", func() error { return from.proposeSlotEntry(slotEntry{Op: "freeze", Slot: s, Move: m.ID}) })
			}
		case to.fsm.slots.arrivedBy(s) != m.ID:
			if to.serving() {
				mv.start(s, m, "install", func() error { return mv.install(s, m) })
			}
		default:
			if mv.g.meta.raft.State() == raft.Leader {
				mv.start(s, m, "flip", func() error { return mv.g.meta.propose(metaCommand{Op: "flip", Slot: s, Move: m.ID}) })
			}
		}
	}
	for id, n := range mv.g.nodes {
		if !n.serving() {
			continue
		}
		for s, moveID := range n.fsm.slots.outSlots() {
			_, moving := d.Moves[s]
			if int(d.Slots[s]) != id && !moving && n.fsm.slots.droppedBy(s) != moveID {
				mv.start(s, Move{ID: moveID, From: id}, "drop", func() error {
					return n.proposeSlotEntry(slotEntry{Op: "drop", Slot: s, Move: moveID})
				})
			}
		}
	}
}

// start runs step in the background unless it is already running; a step
// that fails is tried again at a later tick.
func (mv *mover) start(s Slot, m Move, step string, run func() error) {
	key := fmt.Sprintf("%d/%d/%s", s, m.ID, step)
	mv.mu.Lock()
	if mv.stepping[key] {
		mv.mu.Unlock()
		return
	}
	mv.stepping[key] = true
	mv.mu.Unlock()
	go func() {
		defer func() {
			mv.mu.Lock()
			delete(mv.stepping, key)
			mv.mu.Unlock()
		}()
		if err := run(); err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, errMoveGone) {
			mv.g.cfg.Logger.Warn("a slot move's step failed; it will be tried again", "slot", s, "move", m.ID, "step", step, "err", err)
			return
		}
		mv.g.cfg.Logger.Debug("slot move step", "slot", s, "move", m.ID, "step", step)
	}()
}

// install copies slot s's accounts from this node's replica of the source
// group, frozen by move m, into the destination's log.
func (mv *mover) install(s Slot, m Move) error {
	source, dest := mv.g.accounts[m.From], mv.g.nodes[m.To]
	ids := source.IDs(func(id string) bool { return SlotOf(id) == s })
	encoded, err := source.Export(ids, persistence.EncodeAccount, exportTimeout)
	if err != nil {
		return err
	}
	for first := true; first || len(encoded) > 0; first = false {
		n, size := 0, 0
		for n < len(encoded) && (n == 0 || size+len(encoded[n]) <= installEntryBytes) {
			size += len(encoded[n])
			n++
		}
		chunk := make([]json.RawMessage, n)
		for i := range n {
			chunk[i] = encoded[i]
		}
		encoded = encoded[n:]
		e := slotEntry{Op: "install", Slot: s, Move: m.ID, Accounts: chunk, Last: len(encoded) == 0}
		if err := dest.proposeSlotEntry(e); err != nil {
			return err
		}
	}
	return nil
}

// proposeSlotEntry commits a step of a slot's move through this group's
// log, on its leader.
func (n *Node) proposeSlotEntry(e slotEntry) error {
	if !n.serving() {
		return ErrNotLeader
	}
	b, err := e.encode()
	if err != nil {
		return err
	}
	f := n.raft.Apply(b, stepTimeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return ErrNotLeader
		}
		return err
	}
	if err, isErr := f.Response().(error); isErr {
		return err
	}
	return nil
}
