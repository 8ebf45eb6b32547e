package main

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeClock is time that moves only when told: SleepUntil jumps to the
// wake-up time, and the fake server below advances it by its service time.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeServer answers 200 after service of fake time.
func fakeServer(c *fakeClock, service time.Duration) func(int, *request, *response) {
	return func(_ int, _ *request, resp *response) {
		c.Advance(service)
		resp.status, resp.err = 200, nil
	}
}

func oneWorker() []worker { return []worker{&fixedWorker{req: request{op: "GET /x"}}} }

func TestOpenPacerSchedule(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	start := c.Now()
	p := newOpenPacer(context.Background(), c, 250, 5) // one every 4 ms
	for i := range 5 {
		due, ok := p.next()
		if !ok {
			t.Fatalf("ticket %d refused", i)
		}
		if want := start.Add(time.Duration(i) * 4 * time.Millisecond); !due.Equal(want) {
			t.Fatalf("ticket %d due at %v, want %v", i, due.Sub(start), want.Sub(start))
		}
	}
	if _, ok := p.next(); ok {
		t.Fatal("a sixth ticket of five was handed out")
	}
}

func TestOpenPacerFractionalRate(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	start := c.Now()
	p := newOpenPacer(context.Background(), c, 3, 4) // every 333.33 ms, without drift
	var last time.Time
	for range 4 {
		last, _ = p.next()
	}
	if got, want := last.Sub(start), time.Second; got != want {
		t.Fatalf("the fourth of 3/s is due at %v, want %v", got, want)
	}
}

func TestOpenLoopServerKeepsUp(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	start := c.Now()
	res := runLoad(context.Background(), loadSpec{name: "t", workers: oneWorker(), send: fakeServer(c, 5*time.Millisecond),
		clock: c, rate: 100, requests: 10, every: time.Hour})
	if res.Total.Requests != 10 || res.Unsent != 0 {
		t.Fatalf("sent %d, unsent %d; want 10 and 0", res.Total.Requests, res.Unsent)
	}
	// Each request waits for its due time, then takes 5 ms: the last is
	// due at 90 ms and done at 95 ms.
	if got := c.Now().Sub(start); got != 95*time.Millisecond {
		t.Fatalf("the run ended at %v, want 95ms: the schedule was not kept", got)
	}
	// The histogram's p50 is within its 0.1%; the max is exact.
	if l := res.Total.Latency; !within(l.P50, 5*time.Millisecond, 0.001) || l.Max != 5*time.Millisecond {
		t.Fatalf("latency p50 %v max %v, want 5ms each", l.P50, l.Max)
	}
}

// A server slower than the schedule: ticket i is due at 10i ms but is
// sent when the previous answer is in, at 25i ms, and answered at
// 25(i+1) ms. Timed from its due time its latency is 15i+25 ms; timed
// from when it was sent (coordinated omission) it would be 25 ms for all.
func TestOpenLoopCountsQueueingFromIntendedTime(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	res := runLoad(context.Background(), loadSpec{name: "t", workers: oneWorker(), send: fakeServer(c, 25*time.Millisecond),
		clock: c, rate: 100, requests: 10, every: time.Hour})
	l := res.Total.Latency
	if want := 160 * time.Millisecond; l.Max != want {
		t.Fatalf("max %v, want %v (15·9+25 ms)", l.Max, want)
	}
	// p50 of {25, 40, …, 160} is the fifth value, 85 ms, within the
	// histogram's 0.1%.
	if want := 85 * time.Millisecond; !within(l.P50, want, 0.001) {
		t.Fatalf("p50 %v, want %v", l.P50, want)
	}
}

func TestClosedLoopTimesServiceOnly(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	res := runLoad(context.Background(), loadSpec{name: "t", workers: oneWorker(), send: fakeServer(c, 25*time.Millisecond),
		clock: c, requests: 10, every: time.Hour})
	if res.Total.Requests != 10 || res.Total.Latency.Max != 25*time.Millisecond || res.Mode != "closed loop" {
		t.Fatalf("closed loop: %d requests, max %v, mode %q", res.Total.Requests, res.Total.Latency.Max, res.Mode)
	}
}

func TestClosedLoopStopsAtDeadline(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	res := runLoad(context.Background(), loadSpec{name: "t", workers: oneWorker(), send: fakeServer(c, 100*time.Millisecond),
		clock: c, duration: time.Second, every: time.Hour})
	if res.Total.Requests != 10 || res.Elapsed != time.Second {
		t.Fatalf("1s of 100ms requests: %d requests in %v, want 10 in 1s", res.Total.Requests, res.Elapsed)
	}
}

// When the server falls hopelessly behind, the run stops after its grace
// and says how many scheduled requests it never sent.
func TestOpenLoopGivesUpAndCountsUnsent(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	res := runLoad(context.Background(), loadSpec{name: "t", workers: oneWorker(), send: fakeServer(c, 100*time.Millisecond),
		clock: c, rate: 1000, duration: time.Second, every: time.Hour})
	if res.Planned != 1000 {
		t.Fatalf("planned %d, want 1000", res.Planned)
	}
	// 1s planned + 11s grace, 100 ms a request: about 120 sent.
	if res.Unsent < 850 || res.Total.Requests+res.Unsent != res.Planned {
		t.Fatalf("sent %d, unsent %d of %d", res.Total.Requests, res.Unsent, res.Planned)
	}
}

func TestRunLoadStopsOnCancel(t *testing.T) {
	t.Parallel()
	c := newFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	send := func(_ int, _ *request, resp *response) {
		if n++; n == 3 {
			cancel()
		}
		resp.status = 200
	}
	res := runLoad(ctx, loadSpec{name: "t", workers: oneWorker(), send: send, clock: c, requests: 1000, every: time.Hour})
	if res.Total.Requests != 3 {
		t.Fatalf("%d requests after a cancel at the third, want 3", res.Total.Requests)
	}
}

func TestSamplesPerInterval(t *testing.T) {
	t.Parallel()
	// Drive the sampler by hand: two intervals of different load.
	c := newFakeClock()
	rec := newRecorder()
	s := &sampler{recs: []*recorder{rec}, clock: c, start: c.Now(), last: c.Now(), every: time.Second}
	for range 100 {
		rec.record("op", 2*time.Millisecond, "")
	}
	c.Advance(time.Second)
	s.sample(false)
	for range 50 {
		rec.record("op", 8*time.Millisecond, "500")
	}
	c.Advance(time.Second)
	s.sample(false)
	c.Advance(100 * time.Millisecond)
	s.sample(true) // an empty sliver: dropped
	if len(s.series) != 2 {
		t.Fatalf("%d samples, want 2", len(s.series))
	}
	a, b := s.series[0], s.series[1]
	if a.Throughput != 100 || a.P99 != 2*time.Millisecond || a.Errors != 0 || a.At != time.Second {
		t.Fatalf("first sample %+v", a)
	}
	if b.Throughput != 50 || !within(b.P99, 8*time.Millisecond, 0.001) || b.Errors != 50 || b.At != 2*time.Second {
		t.Fatalf("second sample %+v", b)
	}
}

func within(got, want time.Duration, frac float64) bool {
	d := float64(got - want)
	return d <= frac*float64(want) && -d <= frac*float64(want)
}
