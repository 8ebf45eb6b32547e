package cluster

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/persistence"
)

func slotLog(t *testing.T, index uint64, e slotEntry) *raft.Log {
	t.Helper()
	b, err := e.encode()
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

// exportSlot encodes the accounts of slot s held by f, as an install
// carries them.
func exportSlot(t *testing.T, f *fsm, s Slot) [][]byte {
	t.Helper()
	encoded, err := f.accounts.Export(f.accounts.IDs(func(id string) bool { return SlotOf(id) == s }), persistence.EncodeAccount, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return encoded
}

// TestFSMAppliesASlotMoveInLogOrder: commands before a freeze apply, and
// the same batch's commands after it are refused as retryable, on every
// replica alike; an install brings the accounts, frozen as they were, to
// another group, which serves them only once the last install applied;
// the source then drops them.
func TestFSMAppliesASlotMoveInLogOrder(t *testing.T) {
	src, dst := newFSM(t), newFSM(t)
	ids := accountsInSlot(SlotOf("mover-0"), 2)
	s := SlotOf(ids[0])
	src.ApplyBatch([]*raft.Log{logEntry(t, 1, createAccount(ids[0]), createAccount(ids[1]), createAccount("elsewhere"))})

	res := src.ApplyBatch([]*raft.Log{
		logEntry(t, 2, createCard(ids[0], "before", addresses[0], t0+1)),
		slotLog(t, 3, slotEntry{Op: "freeze", Slot: s, Move: 40}),
		logEntry(t, 4, createCard(ids[1], "after", addresses[1], t0+2), createCard("elsewhere", "after", addresses[1], t0+2)),
	})
	if r := res[0].([]applied)[0]; r.err != nil {
		t.Fatalf("the write before the freeze: %v", r.err)
	}
	if res[1] != nil {
		t.Fatalf("the freeze: %v", res[1])
	}
	after := res[2].([]applied)
	if after[0].err != clustererr.ErrSlotAway || after[1].err != nil {
		t.Fatalf("after the freeze: the moving account's write %v, another's %v", after[0].err, after[1].err)
	}
	if !src.slots.away(s) || src.slots.away(SlotOf("elsewhere")) {
		t.Fatal("the freeze marked the wrong slots away")
	}

	encoded := exportSlot(t, src, s)
	if len(encoded) != 2 {
		t.Fatalf("exported %d accounts, want 2", len(encoded))
	}
	install := func(index uint64, accounts [][]byte, last bool) any {
		e := slotEntry{Op: "install", Slot: s, Move: 40, Last: last}
		for _, a := range accounts {
			e.Accounts = append(e.Accounts, a)
		}
		return dst.ApplyBatch([]*raft.Log{slotLog(t, index, e)})[0]
	}
	if err := install(1, encoded[:1], false); err != nil {
		t.Fatal(err)
	}
	if !dst.slots.away(s) || dst.slots.arrivedBy(s) != 0 {
		t.Fatal("the destination serves the slot before its last install")
	}
	if err := install(2, encoded[1:], true); err != nil {
		t.Fatal(err)
	}
	if dst.slots.away(s) || dst.slots.arrivedBy(s) != 40 || dst.accounts.Len() != 2 {
		t.Fatalf("after the last install: away %v, arrived %d, %d accounts", dst.slots.away(s), dst.slots.arrivedBy(s), dst.accounts.Len())
	}
	want := queryJSON(t, src, ownerCred(ids[0]), actors.ListPortfolioQuery{})
	if got := queryJSON(t, dst, ownerCred(ids[0]), actors.ListPortfolioQuery{}); got != want || !strings.Contains(got, "before") {
		t.Fatalf("the installed account differs:\n got %s\nwant %s", got, want)
	}
	// The destination takes writes to the slot now.
	if r := dst.ApplyBatch([]*raft.Log{logEntry(t, 3, createCard(ids[1], "moved", addresses[1], t0+3))})[0].([]applied)[0]; r.err != nil {
		t.Fatalf("a write after the move: %v", r.err)
	}
	// A late install of the finished move would put back the frozen copy
	// of an account written since; it is refused and changes nothing.
	if err := install(4, encoded, true); err == nil {
		t.Fatal("an install of a finished move applied")
	}
	if got := queryJSON(t, dst, ownerCred(ids[1]), actors.ListPortfolioQuery{}); !strings.Contains(got, "moved") {
		t.Fatalf("the late install undid a write: %s", got)
	}

	if err := src.ApplyBatch([]*raft.Log{slotLog(t, 5, slotEntry{Op: "drop", Slot: s, Move: 39})})[0]; err == nil {
		t.Fatal("a drop of a move that did not freeze the slot applied")
	}
	if err := src.ApplyBatch([]*raft.Log{slotLog(t, 6, slotEntry{Op: "drop", Slot: s, Move: 40})})[0]; err != nil {
		t.Fatal(err)
	}
	if src.accounts.Len() != 1 || src.slots.droppedBy(s) != 40 || !src.slots.away(s) {
		t.Fatalf("after the drop: %d accounts, dropped %d, away %v", src.accounts.Len(), src.slots.droppedBy(s), src.slots.away(s))
	}
}

// TestFSMSlotStateRidesInSnapshots: a replica restored from a snapshot
// refuses and serves the same slots as the one that took it.
func TestFSMSlotStateRidesInSnapshots(t *testing.T) {
	f := newFSM(t)
	f.ApplyBatch([]*raft.Log{logEntry(t, 1, createAccount("acct-1")), slotLog(t, 2, slotEntry{Op: "freeze", Slot: 77, Move: 9})})
	data := snapshotBytes(t, f)
	g := newFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	if !g.slots.away(77) || g.slots.frozenBy(77) != 9 || !g.slotsMoved.Load() {
		t.Fatal("the restored replica forgot the frozen slot")
	}
	h := newFSM(t)
	h.ApplyBatch([]*raft.Log{logEntry(t, 1, createAccount("acct-1"))})
	plain := snapshotBytes(t, h)
	if err := g.Restore(io.NopCloser(bytes.NewReader(plain))); err != nil {
		t.Fatal(err)
	}
	if g.slots.away(77) || g.slotsMoved.Load() {
		t.Fatal("a snapshot without moves left a slot away")
	}
}

func TestFSMStopsOnASlotStepItDoesNotKnow(t *testing.T) {
	f := newFSM(t)
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown slot step applied without a panic")
		}
	}()
	f.ApplyBatch([]*raft.Log{slotLog(t, 1, slotEntry{Op: "split", Slot: 1, Move: 2})})
}

// TestMetaFSMMovesASlot: a move begins once per slot, to another group
// that exists, and its flip hands the slot over.
func TestMetaFSMMovesASlot(t *testing.T) {
	f := &metaFSM{}
	d, _ := NewDirectory(3)
	f.Apply(metaEntry(t, 1, metaCommand{Op: "directory", Directory: &d}))
	from := int(d.Slots[100])
	to := (from + 1) % 3
	for name, c := range map[string]struct {
		cmd  metaCommand
		want error
	}{
		"to a group that does not exist": {metaCommand{Op: "move", Slot: 100, To: 3}, ErrNoSuchGroup},
		"to where it is":                 {metaCommand{Op: "move", Slot: 100, To: from}, ErrSlotAtTarget},
		"a flip of no move":              {metaCommand{Op: "flip", Slot: 100, Move: 2}, errMoveGone},
	} {
		if res := f.Apply(metaEntry(t, 2, c.cmd)); !errors.Is(res.(error), c.want) {
			t.Errorf("%s: %v, want %v", name, res, c.want)
		}
	}
	if res := f.Apply(metaEntry(t, 5, metaCommand{Op: "move", Slot: 100, To: to})); res != nil {
		t.Fatal(res)
	}
	if res := f.Apply(metaEntry(t, 6, metaCommand{Op: "move", Slot: 100, To: (from + 2) % 3})); !errors.Is(res.(error), ErrSlotMoving) {
		t.Fatalf("a second move of a moving slot: %v", res)
	}
	if m := f.dir.Load().Moves[100]; m != (Move{ID: 5, From: from, To: to}) || f.dir.Load().check() != nil {
		t.Fatalf("the move recorded: %+v", m)
	}
	if res := f.Apply(metaEntry(t, 7, metaCommand{Op: "flip", Slot: 100, Move: 4})); !errors.Is(res.(error), errMoveGone) {
		t.Fatalf("a flip of another move: %v", res)
	}
	if res := f.Apply(metaEntry(t, 8, metaCommand{Op: "flip", Slot: 100, Move: 5})); res != nil {
		t.Fatal(res)
	}
	if got := f.dir.Load(); int(got.Slots[100]) != to || len(got.Moves) != 0 || int(d.Slots[100]) != from {
		t.Fatalf("after the flip: slot in %d, moves %v; the first directory's copy says %d", got.Slots[100], got.Moves, d.Slots[100])
	}
}
