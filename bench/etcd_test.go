package main

import (
	"strings"
	"testing"
	"time"
)

func roundResult(throughput float64, p99 time.Duration) *result {
	return &result{Total: opResult{Throughput: throughput, Latency: latencySummary{P99: p99}}}
}

// Each round's ratio compares the two runs made back to back, and the
// median is of those ratios, not a ratio of medians.
func TestPrintRoundsGivesEachRoundAndTheMedian(t *testing.T) {
	t.Parallel()
	results := []*result{
		roundResult(2000, 40*time.Millisecond), roundResult(4000, 20*time.Millisecond), // 2.00×, 0.50×
		roundResult(3000, 50*time.Millisecond), roundResult(4500, 30*time.Millisecond), // 1.50×, 0.60×
		roundResult(1000, 40*time.Millisecond), roundResult(1800, 16*time.Millisecond), // 1.80×, 0.40×
	}
	var out strings.Builder
	printRounds(&out, results, 3)
	for _, want := range []string{
		"round 1: throughput 2.00×  p99 0.50×",
		"round 2: throughput 1.50×  p99 0.60×",
		"round 3: throughput 1.80×  p99 0.40×",
		"median:  throughput 1.80×  p99 0.50×",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 4}, 4}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
