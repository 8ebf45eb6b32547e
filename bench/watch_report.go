package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// watchResult is what a bench watch run measured.
type watchResult struct {
	blocks []blockSample
	// The server's resident memory with the accounts but no cards, and
	// with every card observed once.
	rssBefore, rssAfter         float64
	rssBeforeRead, rssAfterRead bool
	// From the last card added until every address was observed, and the
	// follower's requests to btcd meanwhile.
	firstObserved time.Duration
	firstRequests int64
	failures      int64 // addresses the follower failed to read during the blocks
}

// watchReport is the --json document of bench watch. Latencies are in
// microseconds; a figure that could not be read is null.
type watchReport struct {
	Config           watchReportConfig `json:"config"`
	BlockLatency     latencyFigures    `json:"block_latency"`
	MempoolLatency   latencyFigures    `json:"mempool_latency"`
	RequestsPerBlock perBlockFigures   `json:"btcd_requests_per_block"`
	CPUPerBlock      *perBlockFigures  `json:"cpu_seconds_per_block"`
	RSSBefore        *float64          `json:"rss_before_cards_bytes"`
	RSSAfter         *float64          `json:"rss_after_cards_bytes"`
	RSSPerAddress    *float64          `json:"rss_bytes_per_address"`
	FirstObservedS   float64           `json:"first_observed_s"`
	FirstRequests    int64             `json:"first_observed_btcd_requests"`
	Touched          int               `json:"touched"`
	ConfirmedSeen    int               `json:"confirmed_seen"`
	FollowerFailures int64             `json:"follower_failures"`
	// SharedBlocks counts the blocks whose span took in the end of
	// another sweep (their sweeps above 1).
	SharedBlocks int              `json:"blocks_with_another_sweep"`
	Blocks       []watchBlockJSON `json:"blocks"`
}

type watchReportConfig struct {
	Server          string  `json:"server"`
	Addresses       int     `json:"addresses"`
	Accounts        int     `json:"accounts"`
	Blocks          int     `json:"blocks"`
	BlockTxs        int     `json:"block_txs"`
	WatchedPerBlock int     `json:"watched_per_block"`
	ChainPollS      float64 `json:"chain_poll_s"`
}

// latencyFigures are nearest-rank percentiles over the blocks: with 50
// blocks, p99 is the slowest.
type latencyFigures struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50_us"`
	P99     float64 `json:"p99_us"`
	Max     float64 `json:"max_us"`
}

type perBlockFigures struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

type watchBlockJSON struct {
	Height           int64    `json:"height"`
	Hash             string   `json:"hash"`
	Touched          int      `json:"touched"`
	ConfirmedSeen    int      `json:"confirmed_seen"`
	LatencyUS        float64  `json:"latency_us"`
	MempoolLatencyUS float64  `json:"mempool_latency_us"`
	Requests         int64    `json:"btcd_requests"`
	CPUSeconds       *float64 `json:"cpu_seconds"`
	Sweeps           int64    `json:"sweeps"`
}

// nearestRank is the p-quantile (0 < p ≤ 1) of xs by nearest rank: the
// smallest value with at least p of the values at or below it.
func nearestRank(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
}

func latencyOf(ds []time.Duration) latencyFigures {
	us := make([]float64, len(ds))
	for i, d := range ds {
		us[i] = micros(d)
	}
	return latencyFigures{Samples: len(us), P50: nearestRank(us, 0.5), P99: nearestRank(us, 0.99), Max: nearestRank(us, 1)}
}

func perBlockOf(xs []float64) perBlockFigures {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return perBlockFigures{Mean: sum / float64(max(1, len(xs))), Max: nearestRank(xs, 1)}
}

// buildWatchReport turns a run's samples into the figures.
func buildWatchReport(cfg *config, res *watchResult) watchReport {
	r := watchReport{
		Config: watchReportConfig{Server: cfg.watch.server, Addresses: cfg.watch.addresses, Accounts: cfg.accounts, Blocks: cfg.watch.blocks,
			BlockTxs: cfg.watch.blockTxs, WatchedPerBlock: cfg.watch.watchedPerBlock(), ChainPollS: cfg.watch.chainPoll.Seconds()},
		FirstObservedS: res.firstObserved.Seconds(), FirstRequests: res.firstRequests, FollowerFailures: res.failures,
		Blocks: []watchBlockJSON{},
	}
	var latencies, mempool []time.Duration
	var requests, cpu []float64
	cpuRead := len(res.blocks) > 0
	for _, b := range res.blocks {
		latencies, mempool = append(latencies, b.latency), append(mempool, b.mempoolLatency)
		requests = append(requests, float64(b.requests))
		r.Touched += b.touched
		r.ConfirmedSeen += b.confirmed
		jb := watchBlockJSON{Height: b.height, Hash: b.hash, Touched: b.touched, ConfirmedSeen: b.confirmed,
			LatencyUS: micros(b.latency), MempoolLatencyUS: micros(b.mempoolLatency), Requests: b.requests, Sweeps: b.sweeps}
		if b.sweeps > 1 {
			r.SharedBlocks++
		}
		if b.cpuRead {
			jb.CPUSeconds = &b.cpuSeconds
			cpu = append(cpu, b.cpuSeconds)
		}
		cpuRead = cpuRead && b.cpuRead
		r.Blocks = append(r.Blocks, jb)
	}
	r.BlockLatency, r.MempoolLatency, r.RequestsPerBlock = latencyOf(latencies), latencyOf(mempool), perBlockOf(requests)
	if cpuRead {
		c := perBlockOf(cpu)
		r.CPUPerBlock = &c
	}
	if res.rssBeforeRead {
		r.RSSBefore = &res.rssBefore
	}
	if res.rssAfterRead {
		r.RSSAfter = &res.rssAfter
	}
	if res.rssBeforeRead && res.rssAfterRead {
		per := (res.rssAfter - res.rssBefore) / float64(cfg.watch.addresses)
		r.RSSPerAddress = &per
	}
	return r
}

// reportWatch prints the figures (stdout, or stderr under --json) and the
// JSON. A run that measured no block failed.
func reportWatch(cfg *config, res *watchResult, stdout, stderr io.Writer) int {
	r := buildWatchReport(cfg, res)
	printWatchReport(stderrOrStdout(cfg, stdout, stderr), r)
	if cfg.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(stderr, "bench: --json:", err)
			return exitFailed
		}
	}
	if len(res.blocks) == 0 {
		fmt.Fprintln(stderr, "bench: watch measured no block")
		return exitFailed
	}
	return 0
}

func printWatchReport(w io.Writer, r watchReport) {
	c := r.Config
	fmt.Fprintf(w, "\nwatch: %s addresses in %d accounts, %d of %d blocks measured, %d transactions before each (%d to watched addresses), --chain-poll %s\n",
		commas(int64(c.Addresses)), c.Accounts, len(r.Blocks), c.Blocks, c.BlockTxs, c.WatchedPerBlock, time.Duration(c.ChainPollS*float64(time.Second)))
	rows := [][]string{{"", "p50", "p99", "max"}}
	for _, l := range []struct {
		name string
		f    latencyFigures
	}{{"block announced → balances readable", r.BlockLatency}, {"mempool payment → readable", r.MempoolLatency}} {
		rows = append(rows, []string{"  " + l.name, fmtMicros(l.f.P50), fmtMicros(l.f.P99), fmtMicros(l.f.Max)})
	}
	writeColumns(w, rows, 1)
	fmt.Fprintf(w, "  requests to btcd per block: mean %s, max %s (%.1f an address)\n",
		commas(int64(math.Round(r.RequestsPerBlock.Mean))), commas(int64(r.RequestsPerBlock.Max)), r.RequestsPerBlock.Mean/float64(max(1, c.Addresses)))
	if r.SharedBlocks > 0 {
		fmt.Fprintf(w, "  of which %d block(s) also took in the end of another sweep, counted in their requests and CPU\n", r.SharedBlocks)
	}
	if r.CPUPerBlock != nil {
		fmt.Fprintf(w, "  server CPU per block: mean %.2f s, max %.2f s\n", r.CPUPerBlock.Mean, r.CPUPerBlock.Max)
	} else {
		fmt.Fprintln(w, "  server CPU per block: not read (no /metrics with the admin token)")
	}
	if r.RSSPerAddress != nil {
		fmt.Fprintf(w, "  server resident memory: %s before the cards, %s with every address observed: %s a watched address\n",
			fmtBytes(*r.RSSBefore), fmtBytes(*r.RSSAfter), fmtBytes(*r.RSSPerAddress))
	} else {
		fmt.Fprintln(w, "  server resident memory: not read (no /metrics with the admin token)")
	}
	fmt.Fprintf(w, "  every address first observed %.1f s after the last card was added (%s requests to btcd)\n", r.FirstObservedS, commas(r.FirstRequests))
	fmt.Fprintf(w, "  watched addresses paid: %d, seen confirmed in their block: %d; addresses the follower failed to read: %d\n",
		r.Touched, r.ConfirmedSeen, r.FollowerFailures)
}

func fmtMicros(us float64) string { return fmtLatency(time.Duration(us * float64(time.Microsecond))) }

// fmtCPU prints a block's CPU seconds, or says they were not read.
func fmtCPU(seconds float64, read bool) string {
	if !read {
		return "unread"
	}
	return fmt.Sprintf("%.2f s", seconds)
}

// fmtBytes prints a byte count in B, KB or MB (powers of 1000), signed:
// memory can shrink between two readings.
func fmtBytes(b float64) string {
	switch a := math.Abs(b); {
	case a >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.1f KB", b/1e3)
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}
