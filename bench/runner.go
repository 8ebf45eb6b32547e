package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// worker is one connection's request stream. A worker owns its state (its
// Sheet's revision, the card it created), so it needs no locks: next builds
// the request, done reads the answer. Exactly one request per next, so the
// histogram holds one sample per HTTP round trip, and a follow-up (a
// re-read after 409 STALE_VERSION) is a request of its own.
type worker interface {
	next() *request
	done(req *request, resp *response)
}

// clock is time as the runner sees it; the tests drive a fake one.
type clock interface {
	Now() time.Time
	SleepUntil(t time.Time)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}

// pacer decides whether a worker may send another request, and in open
// loop when it should have been sent.
type pacer interface {
	// next returns ok=false when the run is over; intended is zero in
	// closed loop.
	next() (intended time.Time, ok bool)
}

// closedPacer lets every worker send as soon as its previous answer is in,
// for a duration or up to a count. Latency is then service time, and the
// offered load is whatever the server's speed allows: a slow server is
// sent less, so its stalls are under-sampled (coordinated omission). Use
// it to find the ceiling; use openPacer to judge latency at a given load.
type closedPacer struct {
	ctx      context.Context
	clock    clock
	deadline time.Time
	limit    int64 // 0: run until deadline
	claimed  atomic.Int64
}

func (p *closedPacer) next() (time.Time, bool) {
	if p.ctx.Err() != nil {
		return time.Time{}, false
	}
	if p.limit > 0 {
		return time.Time{}, p.claimed.Add(1) <= p.limit
	}
	return time.Time{}, p.clock.Now().Before(p.deadline)
}

// openPacer is the open-loop schedule: request i is due at start + i/rate,
// whatever happened to earlier requests. A worker that picks up a ticket
// late (every connection was busy) still times it from the due time, so a
// server stall shows up in the latency of every request that should have
// been sent during it, not just the one that was in flight: the
// coordinated-omission correction of wrk2 and HdrHistogram.
type openPacer struct {
	ctx     context.Context
	clock   clock
	start   time.Time
	rate    float64 // tickets per second
	limit   int64   // tickets in the run
	giveUp  time.Time
	claimed atomic.Int64
}

// openLoopGrace is how much longer than planned an open-loop run may take
// when the server cannot keep up, before the tickets still unsent are
// abandoned and reported as such.
func openLoopGrace(planned time.Duration) time.Duration { return planned + 10*time.Second }

func newOpenPacer(ctx context.Context, c clock, rate float64, limit int64) *openPacer {
	start := c.Now()
	planned := time.Duration(float64(limit) / rate * float64(time.Second))
	return &openPacer{ctx: ctx, clock: c, start: start, rate: rate, limit: limit, giveUp: start.Add(planned + openLoopGrace(planned))}
}

// due is ticket i's intended send time.
func (p *openPacer) due(i int64) time.Time {
	return p.start.Add(time.Duration(float64(i) * float64(time.Second) / p.rate))
}

func (p *openPacer) next() (time.Time, bool) {
	if p.ctx.Err() != nil || p.clock.Now().After(p.giveUp) {
		return time.Time{}, false
	}
	i := p.claimed.Add(1) - 1
	if i >= p.limit {
		return time.Time{}, false
	}
	return p.due(i), true
}

// loadSpec is one scenario's run.
type loadSpec struct {
	name     string
	workers  []worker
	send     func(w int, req *request, resp *response)
	clock    clock
	duration time.Duration
	requests int64   // 0: run for duration
	rate     float64 // 0: closed loop
	progress *progress
	every    time.Duration // sample interval; 0 means a second
}

// result is what one scenario measured.
type result struct {
	Scenario    string
	Mode        string
	Connections int
	Targets     int
	Elapsed     time.Duration
	Total       opResult
	Ops         []opResult
	Series      []sample
	Planned     int64 // open loop: requests scheduled
	Unsent      int64 // open loop: scheduled but abandoned because the server fell behind
}

// opResult is one row of the report.
type opResult struct {
	Op         string
	Requests   int64
	Errors     int64
	Throughput float64 // requests (successes and errors) per second of the run
	Latency    latencySummary
	ErrorsBy   map[string]int64
}

// sample is one interval (normally a second) of a run, for the progress
// line and the plot.
type sample struct {
	At         time.Duration // end of the interval, since the start
	Throughput float64
	P99        time.Duration
	Errors     int64
}

// runLoad drives the workers until the pacer says stop and returns what
// they measured.
func runLoad(ctx context.Context, spec loadSpec) *result {
	if spec.clock == nil {
		spec.clock = realClock{}
	}
	if spec.every <= 0 {
		spec.every = time.Second
	}
	res := &result{Scenario: spec.name, Connections: len(spec.workers), Mode: "closed loop"}
	var p pacer
	if spec.rate > 0 {
		limit := spec.requests
		if limit == 0 {
			limit = int64(math.Ceil(spec.rate * spec.duration.Seconds()))
		}
		p = newOpenPacer(ctx, spec.clock, spec.rate, limit)
		res.Mode, res.Planned = "open loop at "+trimFloat(spec.rate)+" req/s", limit
	} else {
		p = &closedPacer{ctx: ctx, clock: spec.clock, deadline: spec.clock.Now().Add(spec.duration), limit: spec.requests}
	}

	recs := make([]*recorder, len(spec.workers))
	for i := range recs {
		recs[i] = newRecorder()
	}
	start := spec.clock.Now()
	s := &sampler{recs: recs, clock: spec.clock, start: start, last: start, every: spec.every, progress: spec.progress, name: spec.name}
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(spec.every)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				s.sample(false)
			}
		}
	}()

	var sent atomic.Int64
	var wg sync.WaitGroup
	for w, wk := range spec.workers {
		wg.Go(func() {
			var resp response
			for {
				intended, ok := p.next()
				if !ok {
					return
				}
				open := spec.rate > 0
				if open {
					spec.clock.SleepUntil(intended)
				}
				req := wk.next()
				sentAt := spec.clock.Now()
				spec.send(w, req, &resp)
				end := spec.clock.Now()
				from := sentAt
				if open {
					from = intended
				}
				recs[w].record(req.op, end.Sub(from), resp.failure())
				sent.Add(1)
				wk.done(req, &resp)
			}
		})
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	s.sample(true) // the last, partial interval
	s.progress.finish()

	res.Elapsed = spec.clock.Now().Sub(start)
	if res.Planned > 0 {
		res.Unsent = max(res.Planned-sent.Load(), 0)
	}
	res.Series = s.series
	total, ops, order := mergeOps(recs)
	res.Total = toOpResult("total", total, res.Elapsed)
	for _, name := range order {
		res.Ops = append(res.Ops, toOpResult(name, ops[name], res.Elapsed))
	}
	return res
}

func toOpResult(name string, o *opStats, elapsed time.Duration) opResult {
	r := opResult{Op: name, Requests: o.requests, Errors: o.errors, Latency: summarize(o.hist, o.max), ErrorsBy: o.byError}
	if elapsed > 0 {
		r.Throughput = float64(o.requests) / elapsed.Seconds()
	}
	return r
}

// sampler turns the workers' interval counts into one sample a second.
type sampler struct {
	recs     []*recorder
	clock    clock
	start    time.Time
	last     time.Time
	every    time.Duration
	series   []sample
	requests int64
	errors   int64
	progress *progress
	name     string
	hinted   map[string]bool
}

func (s *sampler) sample(final bool) {
	now := s.clock.Now()
	interval := newOpStats()
	for _, r := range s.recs {
		r.drainInterval(interval)
	}
	span := now.Sub(s.last)
	if final && span < s.every/2 {
		// The run ended just after a sample: a sliver this short would
		// plot as noise. Its requests are in the totals all the same.
		return
	}
	s.last = now
	smp := sample{At: now.Sub(s.start), P99: summarize(interval.hist, 0).P99, Errors: interval.errors}
	if span > 0 {
		smp.Throughput = float64(interval.requests) / span.Seconds()
	}
	s.series = append(s.series, smp)
	s.requests += interval.requests
	s.errors += interval.errors
	s.progress.line(fmt.Sprintf("  %-12s %6s  %10s req  %9s req/s  p99 %9s  errors %s",
		s.name, smp.At.Round(time.Second), commas(s.requests), commas(int64(smp.Throughput)), fmtLatency(smp.P99), commas(s.errors)))
	// Say what a known error means as soon as it shows up, not only in
	// the report: a run of nothing but 429s is not worth waiting for.
	for failure := range interval.byError {
		if hint := hintFor(failure); hint != "" && !s.hinted[hint] {
			if s.hinted == nil {
				s.hinted = map[string]bool{}
			}
			s.hinted[hint] = true
			s.progress.note("  hint: " + hint)
		}
	}
}

// progress is the live line on stderr: rewritten in place on a terminal,
// one line a second otherwise (make, CI logs).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	dirty bool
}

func (p *progress) line(s string) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", s)
		p.dirty = true
		return
	}
	fmt.Fprintln(p.w, s)
}

// note prints a line that stays, even on a terminal.
func (p *progress) note(s string) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirty { // keep the progress line; the note goes below it
		fmt.Fprintln(p.w)
		p.dirty = false
	}
	fmt.Fprintln(p.w, s)
}

// status shows a transient line on a terminal only: set-up counters that
// would be noise in a log.
func (p *progress) status(s string) {
	if p != nil && p.tty {
		p.line(s)
	}
}

func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirty {
		fmt.Fprintln(p.w)
		p.dirty = false
	}
}
