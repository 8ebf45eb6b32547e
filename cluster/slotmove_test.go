package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// accountsInSlot returns n account IDs that all fall in slot s.
func accountsInSlot(s Slot, n int) []string {
	var ids []string
	for i := 0; len(ids) < n; i++ {
		if id := fmt.Sprintf("mover-%d", i); SlotOf(id) == s {
			ids = append(ids, id)
		}
	}
	return ids
}

// nameRegister is the model of one card's name: a write sets it, a read
// returns it.
var nameRegister = porcupine.Model{
	Init: func() any { return "Card card" }, // createCard's name
	Step: func(state, input, output any) (bool, any) {
		in := input.(nameOp)
		if in.write {
			return true, in.name
		}
		return output.(string) == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		if in := input.(nameOp); in.write {
			return "write " + in.name
		}
		return fmt.Sprintf("read %v", output)
	},
}

type nameOp struct {
	write bool
	name  string
}

// cardLoad writes and reads one account's card from every running member
// and records what each call did, for porcupine.
type cardLoad struct {
	c       *shardedCluster
	start   time.Time
	mu      sync.Mutex
	ops     map[string][]porcupine.Operation // by account
	away    atomic.Int64                     // calls refused as the slot moved
	written atomic.Int64
}

func (l *cardLoad) now() int64 { return time.Since(l.start).Nanoseconds() }

func (l *cardLoad) record(account string, op porcupine.Operation) {
	l.mu.Lock()
	l.ops[account] = append(l.ops[account], op)
	l.mu.Unlock()
}

// isAway reports a refusal because the account's slot is moving: nothing
// was applied.
func isAway(err error) bool {
	return errors.Is(err, clustererr.ErrSlotAway)
}

// isRefusal reports a rule's refusal: nothing was applied.
func isRefusal(err error) bool {
	_, refused := errors.AsType[*actors.Error](err)
	return refused
}

// write updates the card's name through whichever member leads its group.
// It returns the card's new version, or "" when the version must be read
// again.
func (l *cardLoad) write(ctx context.Context, account, version string, i int) string {
	name := fmt.Sprintf("%s-%d", account, i)
	cmd := &actors.Command{Account: account, At: t0 + int64(i), Principal: ownerPrincipal,
		Payload: &actors.UpdatePortfolioCard{CardID: "card", ExpectedVersion: version, CardFields: actors.CardFields{Name: &name}}}
	call := l.now()
	for _, m := range l.c.running() {
		res, err := m.groups.Propose(ctx, cmd)
		switch {
		case errors.Is(err, ErrNotLeader):
			continue
		case isAway(err):
			l.away.Add(1)
			time.Sleep(10 * time.Millisecond)
			return version
		case isRefusal(err):
			return "" // stale: read the version again
		case err != nil:
			// The outcome is unknown: it may apply at any time from now on.
			l.record(account, porcupine.Operation{ClientId: 0, Input: nameOp{write: true, name: name}, Call: call, Return: math.MaxInt64})
			return ""
		}
		l.record(account, porcupine.Operation{ClientId: 0, Input: nameOp{write: true, name: name}, Call: call, Return: l.now()})
		l.written.Add(1)
		return res.Body.(actors.CardEnvelope).Card.Version
	}
	time.Sleep(10 * time.Millisecond)
	return version
}

// read reads the card's name and version, linearizably.
func (l *cardLoad) read(ctx context.Context, account string, client int) string {
	call := l.now()
	for _, m := range l.c.running() {
		res, err := m.groups.QueryLinearizable(ctx, ownerCred(account), actors.GetPortfolioCardQuery{CardID: "card"})
		switch {
		case errors.Is(err, ErrNotLeader):
			continue
		case isAway(err):
			l.away.Add(1)
			time.Sleep(10 * time.Millisecond)
			return ""
		case err != nil:
			return ""
		}
		card := res.Body.(actors.CardEnvelope).Card
		l.record(account, porcupine.Operation{ClientId: client, Input: nameOp{}, Output: card.Name, Call: call, Return: l.now()})
		return card.Version
	}
	time.Sleep(10 * time.Millisecond)
	return ""
}

// run writes to account (client 0) and reads it (client 1) until ctx ends.
func (l *cardLoad) run(ctx context.Context, wg *sync.WaitGroup, account string) {
	wg.Go(func() {
		version := ""
		for i := 1; ctx.Err() == nil; i++ {
			if version == "" {
				version = l.read(ctx, account, 0)
				continue
			}
			version = l.write(ctx, account, version, i)
		}
	})
	wg.Go(func() {
		for ctx.Err() == nil {
			l.read(ctx, account, 1)
		}
	})
}

// TestSlotMovesUnderLoad: a slot holding four accounts moves to another
// group while every account is written and read without pause. Calls
// during the move are refused as retryable; none gets a wrong answer: each
// account's history of acknowledged writes and reads is linearizable
// (porcupine), so no acknowledged write is lost. Afterwards the accounts
// live in the destination on every node and nowhere in the source.
func TestSlotMovesUnderLoad(t *testing.T) {
	c := startSharded(t, 2)
	c.spreadLeaders()
	s := SlotOf("mover-0")
	moving := accountsInSlot(s, 4)
	staying := []string{"stays-1", "stays-2"}
	for _, id := range append(append([]string(nil), moving...), staying...) {
		mustSucceed(t, c.propose(createAccount(id)), 201)
		mustSucceed(t, c.propose(createCard(id, "card", addresses[0], t0)), 201)
	}
	from, err := c.members[0].groups.GroupOf(moving[0])
	if err != nil {
		t.Fatal(err)
	}
	to := 1 - from

	load := &cardLoad{c: c, start: time.Now(), ops: map[string][]porcupine.Operation{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, id := range append(append([]string(nil), moving...), staying...) {
		load.run(ctx, &wg, id)
	}
	time.Sleep(300 * time.Millisecond)
	before := load.written.Load()

	var move Move
	c.eventually("the move begins on the meta leader", func() error {
		for _, m := range c.running() {
			if mv, err := m.groups.MoveSlot(s, to); err == nil {
				move = mv
				return nil
			}
		}
		return errors.New("no member leads the meta group")
	})
	c.eventually("the move ends", func() error {
		for _, m := range c.running() {
			d, _ := m.groups.Directory()
			if int(d.Slots[s]) != to || len(d.Moves) != 0 {
				return fmt.Errorf("%s: slot in group %d, moves %v", m.id, d.Slots[s], d.Moves)
			}
			if got := m.groups.Group(from).fsm.slots.droppedBy(s); got != move.ID {
				return fmt.Errorf("%s: the source has dropped move %d, want %d", m.id, got, move.ID)
			}
		}
		return nil
	})
	during := load.written.Load()
	time.Sleep(300 * time.Millisecond)
	cancel()
	wg.Wait()

	if load.away.Load() == 0 {
		t.Error("no call met the move: the load did not overlap it")
	}
	if before == 0 || load.written.Load() == during {
		t.Fatalf("writes: %d before the move, %d by its end, %d in all: the load stalled", before, during, load.written.Load())
	}
	for account, ops := range load.ops {
		if res := porcupine.CheckOperations(nameRegister, ops); !res {
			t.Errorf("account %s: the history of %d operations is not linearizable", account, len(ops))
		}
	}
	for _, m := range c.running() {
		for _, id := range moving {
			if got := m.groups.Accounts(from).IDs(func(a string) bool { return a == id }); len(got) != 0 {
				t.Errorf("%s: the source group still holds %s", m.id, id)
			}
			if got := m.groups.Accounts(to).IDs(func(a string) bool { return a == id }); len(got) != 1 {
				t.Errorf("%s: the destination group lacks %s", m.id, id)
			}
		}
	}
	t.Logf("%d writes acknowledged (%d before the move, %d by its end), %d calls refused while the slot moved",
		load.written.Load(), before, during, load.away.Load())
}
