package deliver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/send"
)

// fakeClock is a clock a test moves by hand: After fires when Advance
// passes its time.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	c  chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), c: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waiters = slices.DeleteFunc(c.waiters, func(w fakeWaiter) bool {
		if w.at.After(c.now) {
			return false
		}
		w.c <- c.now
		return true
	})
}

// fakeEntry is an outbox entry as the fake store keeps it.
type fakeEntry struct {
	id, channel, card string
	attempts          int
	nextAt            time.Time
	done              bool
}

// fakeStore is one or more accounts' outboxes with the state's rules: per
// channel and card, only the first entry not done is due, when its time
// has come; a result counts only for the entry's next attempt.
type fakeStore struct {
	mu       sync.Mutex
	outbox   map[string][]*fakeEntry // by account
	leading  uint64
	gained   uint64 // Leadership's count of leaderships gained
	serves   bool
	reads    int
	records  [][]actors.DeliveryResult // every Record, applied or refused
	refuse   func(results []actors.DeliveryResult) error
	recorded chan []actors.DeliveryResult
}

func newFakeStore() *fakeStore {
	return &fakeStore{outbox: map[string][]*fakeEntry{}, leading: 1, serves: true, recorded: make(chan []actors.DeliveryResult, 1000)}
}

// put adds an entry to account's outbox, due at at.
func (s *fakeStore) put(account, channel, card string, n int, at time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("nd_%s_%s_%d", channel, card, n)
	s.outbox[account] = append(s.outbox[account], &fakeEntry{id: id, channel: channel, card: card, nextAt: at})
	return id
}

func (s *fakeStore) Leadership() (uint64, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leading, s.gained
}

func (s *fakeStore) Accounts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.outbox {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (s *fakeStore) Serves(string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serves
}

var errNotLeader = errors.New("not the leader")

func (s *fakeStore) Due(_ context.Context, account string, now time.Time) (actors.DueDeliveries, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if !s.serves {
		return actors.DueDeliveries{}, errNotLeader
	}
	var out actors.DueDeliveries
	heads := map[[2]string]bool{}
	for _, e := range s.outbox[account] {
		q := [2]string{e.channel, e.card}
		if e.done || heads[q] {
			continue
		}
		heads[q] = true
		if e.nextAt.After(now) {
			if at := e.nextAt.UnixNano(); out.NextAt == 0 || at < out.NextAt {
				out.NextAt = at
			}
			continue
		}
		out.Due = append(out.Due, actors.DueDelivery{EntryID: e.id, Attempt: e.attempts + 1,
			Event:   actors.ChainEvent{CardID: e.card, Kind: actors.ChainTxSeen, TxID: e.id},
			Channel: actors.NotifyChannelTarget{ID: e.channel, Kind: actors.ChannelWebhook, Enabled: true}})
	}
	return out, nil
}

func (s *fakeStore) Record(_ context.Context, account string, results []actors.DeliveryResult) error {
	s.mu.Lock()
	defer func() { s.recorded <- results }()
	defer s.mu.Unlock()
	s.records = append(s.records, slices.Clone(results))
	if !s.serves {
		return errNotLeader
	}
	if s.refuse != nil {
		if err := s.refuse(results); err != nil {
			return err
		}
	}
	for _, r := range results {
		for _, e := range s.outbox[account] {
			if e.id != r.EntryID || e.done || r.Attempt != e.attempts+1 {
				continue
			}
			e.attempts = r.Attempt
			if r.Delivered {
				e.done = true
			} else {
				e.nextAt = time.Unix(0, r.At).Add(30 * time.Second)
			}
		}
	}
	return nil
}

// delivered reports whether every entry of account is done.
func (s *fakeStore) allDone(account string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.outbox[account] {
		if !e.done {
			return false
		}
	}
	return true
}

func (s *fakeStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

func (s *fakeStore) recordCalls() [][]actors.DeliveryResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// sent is one try the fake sender saw.
type sent struct {
	account, entry, channel, card string
	attempt                       int
}

// fakeSender delivers at once, unless the channel has a gate: then each
// try waits for a value on it (or the test's end). outcome, when set,
// decides the outcome. limits, when set, are the budgets (on the test's
// clock): Room asks them, and each try spends them (after its gate),
// refused with rate_limited as the real senders are when they have no
// room.
type fakeSender struct {
	mu      sync.Mutex
	tries   []sent
	gates   map[string]chan struct{}
	started chan sent
	outcome func(d actors.DueDelivery) send.Outcome
	limits  *egress.Limits
	// refused counts the tries the budgets refused.
	refused int
}

func newFakeSender() *fakeSender {
	return &fakeSender{gates: map[string]chan struct{}{}, started: make(chan sent, 1000)}
}

func (f *fakeSender) gate(channel string) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := make(chan struct{})
	f.gates[channel] = g
	return g
}

func (f *fakeSender) Send(ctx context.Context, account string, d actors.DueDelivery) send.Outcome {
	s := sent{account: account, entry: d.EntryID, channel: d.Channel.ID, card: d.Event.CardID, attempt: d.Attempt}
	f.mu.Lock()
	f.tries = append(f.tries, s)
	gate := f.gates[d.Channel.ID]
	outcome := f.outcome
	limits := f.limits
	f.mu.Unlock()
	f.started <- s
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return send.Outcome{Class: send.ClassConnection, Detail: "stopped"}
		}
	}
	if limits != nil {
		if wait := limits.Take(account, d.Channel.ID); wait > 0 {
			f.mu.Lock()
			f.refused++
			f.mu.Unlock()
			return send.Outcome{Class: send.ClassRateLimited, RetryAfter: wait, Detail: "too many requests"}
		}
	}
	if outcome != nil {
		return outcome(d)
	}
	return send.Outcome{Delivered: true, Status: 200, Latency: 3 * time.Millisecond}
}

func (f *fakeSender) Room(account string, ch actors.NotifyChannelTarget) send.Room {
	f.mu.Lock()
	limits := f.limits
	f.mu.Unlock()
	if limits == nil {
		return send.Unbounded()
	}
	acct, ep := limits.Room(account, ch.ID)
	return send.Room{Account: acct, Channel: ep, Budgets: limits}
}

func (f *fakeSender) refusals() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

func (f *fakeSender) sentTries() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tries)
}

// rig is a deliverer running on a fake store, sender and clock.
type rig struct {
	t      *testing.T
	store  *fakeStore
	sender *fakeSender
	clock  *fakeClock
	d      *Deliverer
	stop   func()
}

func newRig(t *testing.T, opts Options) *rig {
	r := &rig{t: t, store: newFakeStore(), sender: newFakeSender(), clock: newFakeClock()}
	opts.Now, opts.After = r.clock.Now, r.clock.After
	r.d = New(r.store, r.sender, opts)
	return r
}

// run starts the deliverer; it stops at the test's end.
func (r *rig) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.d.Run(ctx)
		close(done)
	}()
	r.stop = func() {
		cancel()
		<-done
	}
	r.t.Cleanup(r.stop)
}

// waitFor waits until cond holds, moving the clock on by step between
// looks (0: not at all). The deadline only stops a test that would hang:
// nothing here asserts how long anything took.
func (r *rig) waitFor(what string, step time.Duration, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("never: %s (tries %v, records %d, stats %+v)", what, r.sender.sentTries(), len(r.store.recordCalls()), r.d.Stats())
		}
		if step > 0 {
			r.clock.Advance(step)
		}
		time.Sleep(time.Millisecond)
	}
}

// started takes the next try the sender started.
func (r *rig) started() sent {
	r.t.Helper()
	select {
	case s := <-r.sender.started:
		return s
	case <-time.After(20 * time.Second):
		r.t.Fatalf("no try started (tries %v)", r.sender.sentTries())
		return sent{}
	}
}

// recorded takes the next Record call's results.
func (r *rig) recorded() []actors.DeliveryResult {
	r.t.Helper()
	select {
	case res := <-r.store.recorded:
		return res
	case <-time.After(20 * time.Second):
		r.t.Fatalf("nothing recorded (tries %v)", r.sender.sentTries())
		return nil
	}
}

// flushed takes the next Record call's results, moving the clock on by
// FlushAfter until it comes (the try's result may not be in its batch
// yet when the clock first moves).
func (r *rig) flushed() []actors.DeliveryResult {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case res := <-r.store.recorded:
			return res
		default:
		}
		r.clock.Advance(DefaultFlushAfter)
		time.Sleep(time.Millisecond)
	}
	r.t.Fatalf("nothing recorded (tries %v)", r.sender.sentTries())
	return nil
}

// quiet lets the deliverer's goroutines run a while, so that an assertion
// that something did not happen has had the chance to fail.
func quiet() { time.Sleep(20 * time.Millisecond) }
