package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSummarizeUniform(t *testing.T) {
	t.Parallel()
	// 1..10,000 µs, once each: the k-th percentile is k·100 µs.
	o := newOpStats()
	for us := 1; us <= 10000; us++ {
		o.record(time.Duration(us)*time.Microsecond, "")
	}
	s := summarize(o.hist, o.max)
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"p50", s.P50, 5000 * time.Microsecond},
		{"p90", s.P90, 9000 * time.Microsecond},
		{"p99", s.P99, 9900 * time.Microsecond},
		{"p99.9", s.P999, 9990 * time.Microsecond},
		{"max", s.Max, 10000 * time.Microsecond},
		{"mean", s.Mean, 5000 * time.Microsecond},
	} {
		if !within(c.got, c.want, 0.001) {
			t.Errorf("%s = %v, want %v within 0.1%%", c.name, c.got, c.want)
		}
	}
}

func TestSummarizeTail(t *testing.T) {
	t.Parallel()
	// 990 fast requests and 10 slow ones: p99 is still fast, p99.9 and max
	// are the stall. An average (about 6 ms) describes neither.
	o := newOpStats()
	for range 990 {
		o.record(time.Millisecond, "")
	}
	for range 10 {
		o.record(500*time.Millisecond, "")
	}
	s := summarize(o.hist, o.max)
	if !within(s.P99, time.Millisecond, 0.001) || !within(s.P999, 500*time.Millisecond, 0.001) || s.Max != 500*time.Millisecond {
		t.Fatalf("p99 %v p99.9 %v max %v", s.P99, s.P999, s.Max)
	}
}

func TestSummarizeEmptyAndClamped(t *testing.T) {
	t.Parallel()
	if s := summarize(newHistogram(), 0); s != (latencySummary{}) {
		t.Fatalf("empty histogram summarized as %+v", s)
	}
	o := newOpStats()
	o.record(0, "")                    // below the range: counted as 1 µs
	o.record(2*time.Minute, "timeout") // above it: counted as a minute
	if o.hist.TotalCount() != 2 || o.max != 2*time.Minute {
		t.Fatalf("count %d max %v", o.hist.TotalCount(), o.max)
	}
}

func TestMergeOpsAcrossWorkers(t *testing.T) {
	t.Parallel()
	a, b := newRecorder(), newRecorder()
	a.record("GET /v1/me", time.Millisecond, "")
	a.record("PUT …/sheet (upsert)", 3*time.Millisecond, "409 STALE_VERSION")
	b.record("GET /v1/me", 2*time.Millisecond, "")
	b.record("PUT …/sheet (upsert)", 4*time.Millisecond, "409 STALE_VERSION")
	b.record("PUT …/sheet (upsert)", 5*time.Millisecond, "")
	total, ops, order := mergeOps([]*recorder{a, b})
	if total.requests != 5 || total.errors != 2 || total.byError["409 STALE_VERSION"] != 2 || total.max != 5*time.Millisecond {
		t.Fatalf("total: %d requests, %d errors %v, max %v", total.requests, total.errors, total.byError, total.max)
	}
	if strings.Join(order, "|") != "GET /v1/me|PUT …/sheet (upsert)" {
		t.Fatalf("order %q", order)
	}
	put := toOpResult("PUT", ops["PUT …/sheet (upsert)"], 2*time.Second)
	if put.Requests != 3 || put.Errors != 2 || put.Throughput != 1.5 {
		t.Fatalf("put row %+v", put)
	}
}

func TestDrainIntervalResets(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	r.record("op", time.Millisecond, "500")
	into := newOpStats()
	r.drainInterval(into)
	if into.requests != 1 || into.errors != 1 {
		t.Fatalf("drained %+v", into)
	}
	again := newOpStats()
	r.drainInterval(again)
	if again.requests != 0 || again.hist.TotalCount() != 0 || len(again.byError) != 0 {
		t.Fatalf("a second drain found %d requests", again.requests)
	}
	if r.ops["op"].requests != 1 {
		t.Fatal("draining the interval lost the run's totals")
	}
}

func TestFailureKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		resp response
		want string
	}{
		{response{status: 200}, ""},
		{response{status: 204}, ""},
		{response{status: 409, body: []byte(`{"code":"STALE_VERSION","error":"…"}`)}, "409 STALE_VERSION"},
		{response{status: 429, body: []byte(`{"code":"RATE_LIMITED","error":"…"}`)}, "429 RATE_LIMITED"},
		{response{status: 503, body: []byte(`{"error":"etcdserver: too many requests","code":14}`)}, "503 code 14"},
		{response{status: 502, body: []byte(`<html>bad gateway</html>`)}, "502"},
	}
	for _, c := range cases {
		if got := c.resp.failure(); got != c.want {
			t.Errorf("failure of %d %s = %q, want %q", c.resp.status, c.resp.body, got, c.want)
		}
	}
}

func TestFormatting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "-"}, {87 * time.Microsecond, "87µs"}, {1234 * time.Microsecond, "1.23ms"},
		{45600 * time.Microsecond, "45.6ms"}, {456 * time.Millisecond, "456ms"}, {1200 * time.Millisecond, "1.20s"},
	} {
		if got := fmtLatency(c.d); got != c.want {
			t.Errorf("fmtLatency(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func sampleResults() []*result {
	lat := latencySummary{P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 5 * time.Millisecond, P999: 9 * time.Millisecond, Max: 12 * time.Millisecond}
	return []*result{
		{Scenario: "sheet-put", Mode: "closed loop", Connections: 4, Targets: 1, Elapsed: 2 * time.Second,
			Total:  opResult{Op: "total", Requests: 2000, Errors: 3, Throughput: 1000, Latency: lat, ErrorsBy: map[string]int64{"429 RATE_LIMITED": 3}},
			Ops:    []opResult{{Op: "PUT …/sheet (upsert)", Requests: 2000, Errors: 3, Throughput: 1000, Latency: lat}},
			Series: []sample{{At: time.Second, Throughput: 990, P99: 5 * time.Millisecond}, {At: 2 * time.Second, Throughput: 1010, P99: 4 * time.Millisecond}}},
		{Scenario: "reads", Mode: "open loop at 500 req/s", Connections: 4, Elapsed: time.Second,
			Total: opResult{Op: "total", Requests: 500, Throughput: 500, Latency: lat},
			Ops: []opResult{{Op: "GET /v1/me", Requests: 250, Throughput: 250, Latency: lat},
				{Op: "GET …/sheet?view=sparse", Requests: 250, Throughput: 250, Latency: lat}}},
	}
}

func TestTableIsAligned(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printTable(&b, sampleResults())
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 5 { // header, sheet-put, reads total, two reads rows
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	// Right-aligned numbers: every row ends in the max column, at the
	// same width.
	width := len([]rune(lines[0]))
	for _, l := range lines {
		if len([]rune(l)) != width {
			t.Fatalf("ragged table:\n%s", b.String())
		}
	}
	if !strings.Contains(lines[1], "2,000") || !strings.Contains(lines[1], "5.00ms") || !strings.HasPrefix(lines[2], "reads") || !strings.Contains(lines[2], "all requests") {
		t.Fatalf("table:\n%s", b.String())
	}
}

func TestDetailsHint429(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printDetails(&b, sampleResults())
	if !strings.Contains(b.String(), "429 RATE_LIMITED") || !strings.Contains(b.String(), "--limits off") {
		t.Fatalf("no 429 hint in:\n%s", b.String())
	}
}

func TestJSONReport(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	cfg := &config{targets: []string{"http://127.0.0.1:8080"}, accounts: 4, connections: 4, duration: 2 * time.Second}
	if err := writeJSONReport(&b, cfg, sampleResults()); err != nil {
		t.Fatal(err)
	}
	var rep jsonReport
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	s := rep.Scenarios[0]
	if len(rep.Scenarios) != 2 || s.Total.P99 != 5000 || s.Total.ErrorsBy["429 RATE_LIMITED"] != 3 || len(s.PerSecond) != 2 || rep.Config.DurationS != 2 {
		t.Fatalf("round trip: %+v", rep)
	}
}
