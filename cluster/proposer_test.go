package cluster

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/persistence"
)

// gatedFSM reports how many commands each entry carried and holds every
// apply until the test lets it go.
type gatedFSM struct {
	entries chan int
	release chan struct{}
}

func (f *gatedFSM) Apply(l *raft.Log) any {
	cmds, err := persistence.DecodeCommands(l.Data)
	if err != nil {
		panic(err)
	}
	f.entries <- len(cmds)
	<-f.release
	return make([]applied, len(cmds))
}

func (f *gatedFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, errors.New("not in this test") }
func (f *gatedFSM) Restore(io.ReadCloser) error         { return errors.New("not in this test") }

// inmemLeader starts a one-voter raft group in memory and waits until it
// leads.
func inmemLeader(t *testing.T, f raft.FSM) *raft.Raft {
	t.Helper()
	c := raft.DefaultConfig()
	c.LocalID = "solo"
	c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond
	c.LogLevel = "ERROR"
	addr, transport := raft.NewInmemTransport("")
	store := raft.NewInmemStore()
	r, err := raft.NewRaft(c, f, store, store, raft.NewInmemSnapshotStore(), transport)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown() })
	if err := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "solo", Address: addr}}}).Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testTimeout)
	for r.State() != raft.Leader {
		if time.Now().After(deadline) {
			t.Fatal("never became leader")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return r
}

// waitQueued waits until at least n commands wait in the proposer's queue.
func waitQueued(t *testing.T, p *proposer, n int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for len(p.queue) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d commands queued behind the entry in flight, want %d", len(p.queue), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestProposerGathersCommandsWhileAnEntryIsInFlight: commands that arrive
// while an entry is on its way through raft wait for it and then share
// one entry, instead of each going out as an entry of its own.
func TestProposerGathersCommandsWhileAnEntryIsInFlight(t *testing.T) {
	f := &gatedFSM{entries: make(chan int, 16), release: make(chan struct{})}
	p := newProposer(inmemLeader(t, f), newApplyMetrics())
	t.Cleanup(p.close)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	errs := make(chan error, 4)
	propose := func(id string) {
		_, err := p.propose(ctx, createAccount(id))
		errs <- err
	}
	go propose("first")
	if n := <-f.entries; n != 1 {
		t.Fatalf("first entry carried %d commands, want 1", n)
	}
	// The first entry is held in apply: the next three must wait (the
	// proposer holds the first of them while it waits for the slot).
	for _, id := range []string{"second", "third", "fourth"} {
		go propose(id)
	}
	waitQueued(t, p, 2)
	select {
	case n := <-f.entries:
		t.Fatalf("a second entry (%d commands) went out while the first was in flight", n)
	case <-time.After(50 * time.Millisecond):
	}
	f.release <- struct{}{}
	if n := <-f.entries; n != 3 {
		t.Fatalf("the queued commands went out in an entry of %d, want all 3 together", n)
	}
	f.release <- struct{}{}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("propose: %v", err)
		}
	}
}

// TestProposerRefusesWhatIsQueuedWhenItStops: commands still queued when
// the proposer stops never reached raft, so they are refused as "not the
// leader" (safe to retry) rather than left to time out as unknown.
func TestProposerRefusesWhatIsQueuedWhenItStops(t *testing.T) {
	f := &gatedFSM{entries: make(chan int, 16), release: make(chan struct{})}
	p := newProposer(inmemLeader(t, f), newApplyMetrics())

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	go p.propose(ctx, createAccount("in-flight"))
	<-f.entries
	errs := make(chan error, 2)
	for _, id := range []string{"queued-1", "queued-2"} {
		go func() {
			_, err := p.propose(ctx, createAccount(id))
			errs <- err
		}()
	}
	waitQueued(t, p, 1)
	p.close()
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrNotLeader) {
			t.Fatalf("a queued command got %v, want ErrNotLeader", err)
		}
	}
	close(f.release)
}
