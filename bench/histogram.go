package main

import (
	"maps"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to one minute with three
// significant digits: every percentile is within 0.1% of the true value,
// whatever the spread, which a fixed-bucket histogram or a sample cannot
// promise for p99.9.
const (
	latencyLowestUS  = 1
	latencyHighestUS = int64(time.Minute / time.Microsecond)
	latencySigFigs   = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyLowestUS, latencyHighestUS, latencySigFigs)
}

// recordLatency records d, clamped into the histogram's range: a request
// slower than a minute is counted as a minute rather than dropped.
func recordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	us := max(d.Microseconds(), latencyLowestUS)
	h.RecordValue(min(us, latencyHighestUS))
}

// latencySummary is the percentiles the report prints.
type latencySummary struct {
	P50, P90, P99, P999, Max, Mean time.Duration
}

// summarize reads the percentiles of h; exactMax, when known, replaces the
// histogram's max, which is rounded up to its bucket's edge.
func summarize(h *hdrhistogram.Histogram, exactMax time.Duration) latencySummary {
	if h.TotalCount() == 0 {
		return latencySummary{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	s := latencySummary{
		P50:  us(h.ValueAtQuantile(50)),
		P90:  us(h.ValueAtQuantile(90)),
		P99:  us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)),
		Max:  us(h.Max()),
		Mean: time.Duration(h.Mean() * float64(time.Microsecond)),
	}
	if exactMax > 0 {
		s.Max = exactMax
	}
	return s
}

// opStats counts one operation (one request kind) of a scenario.
type opStats struct {
	hist     *hdrhistogram.Histogram
	requests int64
	errors   int64
	byError  map[string]int64 // failure key ("409 STALE_VERSION") → count
	max      time.Duration
}

func newOpStats() *opStats {
	return &opStats{hist: newHistogram(), byError: map[string]int64{}}
}

func (o *opStats) record(d time.Duration, failure string) {
	recordLatency(o.hist, d)
	o.requests++
	o.max = max(o.max, d)
	if failure != "" {
		o.errors++
		o.byError[failure]++
	}
}

func (o *opStats) merge(from *opStats) {
	o.hist.Merge(from.hist)
	o.requests += from.requests
	o.errors += from.errors
	o.max = max(o.max, from.max)
	for k, v := range from.byError {
		o.byError[k] += v
	}
}

// recorder is one worker's statistics. Each worker has its own, so workers
// never wait on each other; the once-a-second sampler is the only other
// party that takes the lock.
type recorder struct {
	mu       sync.Mutex
	ops      map[string]*opStats
	interval *opStats // since the last sample, all operations together
}

func newRecorder() *recorder {
	return &recorder{ops: map[string]*opStats{}, interval: newOpStats()}
}

func (r *recorder) record(op string, d time.Duration, failure string) {
	r.mu.Lock()
	o := r.ops[op]
	if o == nil {
		o = newOpStats()
		r.ops[op] = o
	}
	o.record(d, failure)
	r.interval.record(d, failure)
	r.mu.Unlock()
}

// drainInterval adds the interval's counts to into and starts a new one.
func (r *recorder) drainInterval(into *opStats) {
	r.mu.Lock()
	into.merge(r.interval)
	r.interval.hist.Reset()
	r.interval.requests, r.interval.errors, r.interval.max = 0, 0, 0
	clear(r.interval.byError)
	r.mu.Unlock()
}

// mergeOps combines the workers' per-operation stats; order lists the
// operations by name, so two runs print their rows in the same order.
func mergeOps(recs []*recorder) (total *opStats, ops map[string]*opStats, order []string) {
	total, ops = newOpStats(), map[string]*opStats{}
	for _, r := range recs {
		r.mu.Lock()
		for name, o := range r.ops {
			m := ops[name]
			if m == nil {
				m = newOpStats()
				ops[name] = m
			}
			m.merge(o)
			total.merge(o)
		}
		r.mu.Unlock()
	}
	order = slices.Sorted(maps.Keys(ops))
	return total, ops, order
}
