package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// printTable writes the final table: per scenario a total row and, when
// the scenario sends more than one kind of request, a row per kind.
// README.md explains every column.
func printTable(w io.Writer, results []*result) {
	rows := [][]string{{"scenario", "operation", "requests", "req/s", "errors", "p50", "p90", "p99", "p99.9", "max"}}
	row := func(scenario, op string, o opResult) {
		rows = append(rows, []string{scenario, op,
			commas(o.Requests), commas(int64(o.Throughput + 0.5)), commas(o.Errors),
			fmtLatency(o.Latency.P50), fmtLatency(o.Latency.P90), fmtLatency(o.Latency.P99),
			fmtLatency(o.Latency.P999), fmtLatency(o.Latency.Max)})
	}
	for _, r := range results {
		if len(r.Ops) == 1 {
			row(r.Scenario, r.Ops[0].Op, r.Total)
			continue
		}
		row(r.Scenario, "all requests", r.Total)
		for _, o := range r.Ops {
			row("", "  "+o.Op, o)
		}
	}
	writeColumns(w, rows, 2)
}

// writeColumns prints rows as aligned columns: the first textColumns
// left-aligned, the numbers after them right-aligned.
func writeColumns(w io.Writer, rows [][]string, textColumns int) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < textColumns {
				b.WriteString(cell + pad)
			} else {
				b.WriteString(pad + cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// printDetails writes what the table has no room for: each scenario's
// mode and length, its errors by status and code, and hints for the
// errors that have a known cause.
func printDetails(w io.Writer, results []*result) {
	hints := map[string]bool{}
	for _, r := range results {
		fmt.Fprintf(w, "%s: %s, %d connections, %s", r.Scenario, r.Mode, r.Connections, r.Elapsed.Round(time.Millisecond))
		if r.Targets > 0 {
			fmt.Fprintf(w, ", %d target(s)", r.Targets)
		}
		fmt.Fprintln(w)
		if r.Unsent > 0 {
			fmt.Fprintf(w, "  %s of %s scheduled requests were never sent: the server fell too far behind --rate\n", commas(r.Unsent), commas(r.Planned))
		}
		for _, k := range sortedByCount(r.Total.ErrorsBy) {
			fmt.Fprintf(w, "  error %-28s %s\n", k, commas(r.Total.ErrorsBy[k]))
			if hint := hintFor(k); hint != "" {
				hints[hint] = true
			}
		}
	}
	for _, h := range slices.Sorted(maps.Keys(hints)) {
		fmt.Fprintln(w, "hint:", h)
	}
}

// errorHints are the failures with a known cause and what to do.
var errorHints = map[string]string{
	"429": "429 RATE_LIMITED means the server enforces the spec's limits (20 Sheet requests/min per IP, 30 Sheet writes/min per account); " +
		"for load tests start it with `--limits off`.",
	"transport: connection refused": "nothing listens at a target: start the server (`make run`, or `bin/addrwatchd --limits off`) or fix --targets.",
	"transport: timeout":            "requests timed out: the server is overloaded or stuck; lower --connections or --rate, or raise --timeout.",
	"409 STALE_VERSION": "409 STALE_VERSION means another client changed the same Sheet, card or Space: several connections share an account " +
		"(--accounts below --connections) or something else writes to these accounts. Each one is re-read and counted here.",
	"503": "503 HTTP_ERROR: no leader, or a write whose outcome is unknown; check the cluster with `bin/addrwatch cluster status`.",

	// The site's pages.
	"303":                 "303 See Other from a site page means the session cookie was refused (expired, signed out or never valid) and the page sent the browser to sign in.",
	"200 unexpected body": "a 200 without the page asked for (site: the panel's \"API keys\" heading): the server answered with another page.",
}

// hintFor returns the hint for a failure key, or "".
func hintFor(failure string) string {
	for prefix, hint := range errorHints {
		if strings.HasPrefix(failure, prefix) {
			return hint
		}
	}
	return ""
}

func sortedByCount(m map[string]int64) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(a, b)
	})
	return keys
}

// jsonReport is the --json document. Durations are microseconds.
type jsonReport struct {
	Config    jsonConfig   `json:"config"`
	Scenarios []jsonResult `json:"scenarios"`
}

type jsonConfig struct {
	Targets     []string `json:"targets"`
	Accounts    int      `json:"accounts"`
	Connections int      `json:"connections"`
	DurationS   float64  `json:"duration_s,omitempty"`
	Requests    int64    `json:"requests,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
}

type jsonResult struct {
	Scenario  string      `json:"scenario"`
	Mode      string      `json:"mode"`
	Elapsed   float64     `json:"elapsed_s"`
	Planned   int64       `json:"planned,omitempty"`
	Unsent    int64       `json:"unsent,omitempty"`
	Total     jsonOp      `json:"total"`
	Ops       []jsonOp    `json:"operations"`
	PerSecond []jsonPoint `json:"per_second"`
}

type jsonOp struct {
	Op         string           `json:"op"`
	Requests   int64            `json:"requests"`
	Errors     int64            `json:"errors"`
	Throughput float64          `json:"throughput_rps"`
	P50        float64          `json:"p50_us"`
	P90        float64          `json:"p90_us"`
	P99        float64          `json:"p99_us"`
	P999       float64          `json:"p999_us"`
	Max        float64          `json:"max_us"`
	Mean       float64          `json:"mean_us"`
	ErrorsBy   map[string]int64 `json:"errors_by,omitempty"`
}

type jsonPoint struct {
	AtS        float64 `json:"at_s"`
	Throughput float64 `json:"throughput_rps"`
	P99        float64 `json:"p99_us"`
	Errors     int64   `json:"errors"`
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func toJSONOp(o opResult) jsonOp {
	j := jsonOp{Op: o.Op, Requests: o.Requests, Errors: o.Errors, Throughput: o.Throughput,
		P50: micros(o.Latency.P50), P90: micros(o.Latency.P90), P99: micros(o.Latency.P99),
		P999: micros(o.Latency.P999), Max: micros(o.Latency.Max), Mean: micros(o.Latency.Mean)}
	if len(o.ErrorsBy) > 0 {
		j.ErrorsBy = o.ErrorsBy
	}
	return j
}

func writeJSONReport(w io.Writer, cfg *config, results []*result) error {
	rep := jsonReport{Config: jsonConfig{Targets: cfg.targets, Accounts: cfg.accounts, Connections: cfg.connections, Requests: cfg.requests, Rate: cfg.rate}}
	if cfg.requests == 0 {
		rep.Config.DurationS = cfg.duration.Seconds()
	}
	for _, r := range results {
		jr := jsonResult{Scenario: r.Scenario, Mode: r.Mode, Elapsed: r.Elapsed.Seconds(), Planned: r.Planned, Unsent: r.Unsent, Total: toJSONOp(r.Total), Ops: []jsonOp{}, PerSecond: []jsonPoint{}}
		for _, o := range r.Ops {
			jr.Ops = append(jr.Ops, toJSONOp(o))
		}
		for _, p := range r.Series {
			jr.PerSecond = append(jr.PerSecond, jsonPoint{AtS: p.At.Seconds(), Throughput: p.Throughput, P99: micros(p.P99), Errors: p.Errors})
		}
		rep.Scenarios = append(rep.Scenarios, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// fmtLatency prints a latency with three significant digits in a unit
// that keeps it short: 87µs, 1.23ms, 45.6ms, 1.20s.
func fmtLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

// commas groups thousands: 1234567 → 1,234,567.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// trimFloat prints 2000 as "2000" and 12.5 as "12.5".
func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
