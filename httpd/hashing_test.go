package httpd

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

func TestHashSlotsAreHalfTheCoresAndAtLeastOne(t *testing.T) {
	for procs, want := range map[int]int{1: 1, 2: 1, 3: 1, 4: 2, 16: 8} {
		h := newHashSlots(procs)
		if cap(h.running) != want || cap(h.queued) != want*(1+hashWaitersPerSlot) {
			t.Errorf("GOMAXPROCS %d: %d running, %d queued; want %d and %d", procs, cap(h.running), cap(h.queued), want, want*(1+hashWaitersPerSlot))
		}
	}
}

// Finding: eight bcrypt sign-ins at once took every core. No more hashes
// than the slots run at once, a bounded number wait, and the rest are
// turned away at once with 503 and Retry-After.
func TestHashSlotsBoundWhatRunsAndWhatWaits(t *testing.T) {
	t.Parallel()
	h := newHashSlots(4) // two slots, eighteen in all
	release := make(chan struct{})
	var running, most atomic.Int32
	hash := func() {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
	}
	total := cap(h.queued)
	var wg sync.WaitGroup
	errs := make(chan *actors.Error, total)
	for range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- typedErr(h.run(hash))
		}()
	}
	// Wait (without a clock) until every one holds its place in the queue
	// and the slots are all taken.
	for len(h.queued) < total || running.Load() < int32(cap(h.running)) {
		runtime.Gosched()
	}
	if err := typedErr(h.run(func() { t.Error("a hash past the queue ran") })); err != errHashingBusy || err.RetryAfter < 1 || StatusOf(err.Code) != 503 {
		t.Fatalf("hash past the queue: %v, want 503 with Retry-After", err)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a queued hash failed: %v", err)
		}
	}
	if got := most.Load(); got != int32(cap(h.running)) {
		t.Fatalf("%d hashes ran at once, want the %d slots", got, cap(h.running))
	}
	if len(h.queued) != 0 || len(h.running) != 0 {
		t.Fatalf("slots not given back: %d queued, %d running", len(h.queued), len(h.running))
	}
}

// A hash that cannot get a slot within waitMax is turned away rather than
// left waiting.
func TestHashSlotsWaitIsBounded(t *testing.T) {
	t.Parallel()
	h := newHashSlots(1)
	h.waitMax = time.Millisecond
	h.running <- struct{}{} // the only slot is busy
	if err := h.run(func() { t.Error("ran without a slot") }); err != errHashingBusy {
		t.Fatalf("run with no free slot: %v, want errHashingBusy", err)
	}
	if len(h.queued) != 0 {
		t.Fatal("a turned-away hash kept its place in the queue")
	}
}

// The operator's hashes are not turned away by a full queue: they wait for
// a slot as long as their request may, and still run one per slot.
func TestHashSlotsOperatorWaitsPastAFullQueue(t *testing.T) {
	t.Parallel()
	h := newHashSlots(1)
	for range cap(h.queued) {
		h.queued <- struct{}{} // the public queue is full
	}
	h.running <- struct{}{} // and the slot is busy
	done := make(chan *actors.Error)
	ran := false
	go func() { done <- typedErr(h.runForOperator(context.Background(), func() { ran = true })) }()
	<-h.running // the slot frees up
	if err := <-done; err != nil || !ran {
		t.Fatalf("operator hash: %v, ran %v", err, ran)
	}
	h.running <- struct{}{}
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.runForOperator(c, func() { t.Error("ran after its request ended") }); err != errHashingBusy {
		t.Fatalf("operator hash after its request ended: %v", err)
	}
}
