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
	reorgs []reorgSample
	// Each node's resident memory with the accounts but no cards, and
	// with every card observed once.
	rssBefore, rssAfter []metricReading
	// From the last card added until every address was observed, and the
	// requests to the source meanwhile.
	firstObserved time.Duration
	firstRequests requestCounts
	failures      int64 // addresses the follower failed to read during the blocks
	audit         *auditResult
	logTail       string // the servers' logs' ends, when the audit failed
}

// reorgsUnseen counts the reorgs the records did not show in time.
func (r *watchResult) reorgsUnseen() int {
	n := 0
	for _, s := range r.reorgs {
		if !s.seen {
			n++
		}
	}
	return n
}

// watchReport is the --json document of bench watch. Latencies are in
// microseconds; a figure that could not be read is null.
type watchReport struct {
	Config watchReportConfig `json:"config"`
	// Source is what the servers followed (--source). The requests to
	// it are counted by the source itself where it keeps a count (the
	// Electrum and Esplora test servers: RequestsCountedBy "source"),
	// otherwise (btcd) by the follower, whose count is in
	// FollowerRequestsPerBlock for every source. The fields keep their
	// btcd_ names whatever the source.
	Source            string         `json:"source"`
	RequestsCountedBy string         `json:"requests_counted_by"`
	BlockLatency      latencyFigures `json:"block_latency"`
	// KilledBlockLatency is over the blocks in which the leader was
	// killed, which BlockLatency leaves out.
	KilledBlockLatency latencyFigures  `json:"killed_block_latency"`
	MempoolLatency     latencyFigures  `json:"mempool_latency"`
	RequestsPerBlock   perBlockFigures `json:"btcd_requests_per_block"`
	// FollowerRequestsPerBlock counts the follower's reads (chain.Source
	// calls), which cost a source one request or several.
	FollowerRequestsPerBlock perBlockFigures  `json:"follower_requests_per_block"`
	CPUPerBlock              *perBlockFigures `json:"cpu_seconds_per_block"`
	// The RSS figures are the largest node's per address; NodesRSS has
	// every node's.
	RSSBefore        *float64        `json:"rss_before_cards_bytes"`
	RSSAfter         *float64        `json:"rss_after_cards_bytes"`
	RSSPerAddress    *float64        `json:"rss_bytes_per_address"`
	NodesRSS         []nodeRSSReport `json:"nodes_rss"`
	FirstObservedS   float64         `json:"first_observed_s"`
	FirstRequests    int64           `json:"first_observed_btcd_requests"`
	FirstFollower    int64           `json:"first_observed_follower_requests"`
	Touched          int             `json:"touched"`
	ConfirmedSeen    int             `json:"confirmed_seen"`
	FollowerFailures int64           `json:"follower_failures"`
	// SharedBlocks counts the blocks whose span took more than one sweep:
	// the block's change told in parts, or the end of another sweep.
	SharedBlocks int              `json:"blocks_with_another_sweep"`
	Blocks       []watchBlockJSON `json:"blocks"`
	Reorgs       reorgReport      `json:"reorgs"`
	Audit        *auditResult     `json:"audit"` // null when the run was interrupted
}

type nodeRSSReport struct {
	Node          string   `json:"node"`
	Before        *float64 `json:"before_cards_bytes"`
	After         *float64 `json:"after_cards_bytes"`
	PerAddressRSS *float64 `json:"bytes_per_address"`
}

// reorgReport is what the reorgs measured: how soon after a branch's
// last block the records showed it, over those they showed within
// reorgCheckMax, and how many they did not.
type reorgReport struct {
	Count   int            `json:"count"`
	Unseen  int            `json:"unseen"`
	Latency latencyFigures `json:"latency"`
}

type watchReportConfig struct {
	Server          string  `json:"server"`
	Addresses       int     `json:"addresses"`
	Accounts        int     `json:"accounts"`
	Blocks          int     `json:"blocks"`
	BlockTxs        int     `json:"block_txs"`
	WatchedPerBlock int     `json:"watched_per_block"`
	ChainPollS      float64 `json:"chain_poll_s"`
	Nodes           int     `json:"nodes"`
	Reorgs          int     `json:"reorgs"`
	LeaderKills     int     `json:"leader_kills"`
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
	FollowerRequests int64    `json:"follower_requests"`
	CPUSeconds       *float64 `json:"cpu_seconds"`
	Sweeps           int64    `json:"sweeps"`
	Killed           string   `json:"leader_killed,omitempty"`
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
			BlockTxs: cfg.watch.blockTxs, WatchedPerBlock: cfg.watch.watchedPerBlock(), ChainPollS: cfg.watch.chainPoll.Seconds(),
			Nodes: cfg.watch.nodes, Reorgs: cfg.watch.reorgs, LeaderKills: cfg.watch.leaderKills},
		Source: cfg.watch.source, RequestsCountedBy: countedBy(res.firstRequests),
		FirstObservedS: res.firstObserved.Seconds(), FirstRequests: res.firstRequests.atSource(), FirstFollower: res.firstRequests.follower,
		FollowerFailures: res.failures, Blocks: []watchBlockJSON{}, Audit: res.audit,
	}
	var latencies, killedLatencies, mempool []time.Duration
	var requests, followerRequests, cpu []float64
	cpuRead := false
	for _, b := range res.blocks {
		mempool = append(mempool, b.mempoolLatency)
		if b.killed != "" {
			killedLatencies = append(killedLatencies, b.latency)
		} else {
			latencies = append(latencies, b.latency)
			requests = append(requests, float64(b.requests.atSource()))
			followerRequests = append(followerRequests, float64(b.requests.follower))
			cpuRead = true
		}
		r.Touched += b.touched
		r.ConfirmedSeen += b.confirmed
		jb := watchBlockJSON{Height: b.height, Hash: b.hash, Touched: b.touched, ConfirmedSeen: b.confirmed,
			LatencyUS: micros(b.latency), MempoolLatencyUS: micros(b.mempoolLatency),
			Requests: b.requests.atSource(), FollowerRequests: b.requests.follower, Sweeps: b.sweeps, Killed: b.killed}
		if b.sweeps > 1 {
			r.SharedBlocks++
		}
		if b.cpuRead {
			jb.CPUSeconds = &b.cpuSeconds
			cpu = append(cpu, b.cpuSeconds)
		}
		cpuRead = cpuRead && (b.cpuRead || b.killed != "")
		r.Blocks = append(r.Blocks, jb)
	}
	r.BlockLatency, r.KilledBlockLatency = latencyOf(latencies), latencyOf(killedLatencies)
	r.MempoolLatency, r.RequestsPerBlock, r.FollowerRequestsPerBlock = latencyOf(mempool), perBlockOf(requests), perBlockOf(followerRequests)
	if cpuRead {
		c := perBlockOf(cpu)
		r.CPUPerBlock = &c
	}
	r.NodesRSS, r.RSSBefore, r.RSSAfter, r.RSSPerAddress = rssReport(res.rssBefore, res.rssAfter, cfg.watch.addresses)
	var reorgLatencies []time.Duration
	for _, s := range res.reorgs {
		if s.seen {
			reorgLatencies = append(reorgLatencies, s.latency)
		}
	}
	r.Reorgs = reorgReport{Count: len(res.reorgs), Unseen: res.reorgsUnseen(), Latency: latencyOf(reorgLatencies)}
	return r
}

// countedBy says who counted the requests to the source: the source
// itself, or the follower where the source keeps no count.
func countedBy(r requestCounts) string {
	if r.counted {
		return "source"
	}
	return "follower"
}

// rssReport is every node's memory per watched address, and the
// figures of the node that grew most.
func rssReport(before, after []metricReading, addresses int) (nodes []nodeRSSReport, worstBefore, worstAfter, worstPer *float64) {
	for i := range min(len(before), len(after)) {
		n := nodeRSSReport{Node: fmt.Sprintf("n%d", i+1)}
		if before[i].read {
			n.Before = &before[i].value
		}
		if after[i].read {
			n.After = &after[i].value
		}
		if before[i].read && after[i].read {
			per := (after[i].value - before[i].value) / float64(addresses)
			n.PerAddressRSS = &per
			if worstPer == nil || per > *worstPer {
				worstBefore, worstAfter, worstPer = n.Before, n.After, n.PerAddressRSS
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, worstBefore, worstAfter, worstPer
}

// writeReport prints a command's text (stdout, or stderr under --json)
// and, under --json, its document on stdout. It reports whether the
// document could be written.
func writeReport(cfg *config, stdout, stderr io.Writer, text func(io.Writer), doc any) bool {
	text(stderrOrStdout(cfg, stdout, stderr))
	if !cfg.jsonOut {
		return true
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintln(stderr, "bench: --json:", err)
		return false
	}
	return true
}

// reportWatch prints the figures (stdout, or stderr under --json) and the
// JSON. A run that measured no block failed.
func reportWatch(cfg *config, res *watchResult, stdout, stderr io.Writer) int {
	r := buildWatchReport(cfg, res)
	if !writeReport(cfg, stdout, stderr, func(w io.Writer) { printWatchReport(w, r) }, r) {
		return exitFailed
	}
	if len(res.blocks) == 0 {
		fmt.Fprintln(stderr, "bench: watch measured no block")
		return exitFailed
	}
	if a := res.audit; a != nil && a.worst().faults() > 0 || res.reorgsUnseen() > 0 {
		fmt.Fprintf(stderr, "bench: watch FAILED: the records disagree with btcd (missed, double-counted, phantom or wrong-state payments, or reorgs never shown)\n%s\n", res.logTail)
		return exitFailed
	}
	return 0
}

func printWatchReport(w io.Writer, r watchReport) {
	c := r.Config
	fmt.Fprintf(w, "\nwatch: %s addresses in %d accounts, %d of %d blocks measured, %d transactions before each (%d to watched addresses), following %s, --chain-poll %s\n",
		commas(int64(c.Addresses)), c.Accounts, len(r.Blocks), c.Blocks, c.BlockTxs, c.WatchedPerBlock, r.Source, time.Duration(c.ChainPollS*float64(time.Second)))
	rows := [][]string{{"", "p50", "p99", "max"}}
	for _, l := range []struct {
		name string
		f    latencyFigures
	}{{"block announced → balances readable", r.BlockLatency}, {"mempool payment → readable", r.MempoolLatency}} {
		rows = append(rows, []string{"  " + l.name, fmtMicros(l.f.P50), fmtMicros(l.f.P99), fmtMicros(l.f.Max)})
	}
	writeColumns(w, rows, 1)
	fmt.Fprintf(w, "  requests to %s per block: mean %s, max %s (%.1f an address), %s\n",
		r.Source, fmtMean(r.RequestsPerBlock), commas(int64(r.RequestsPerBlock.Max)), r.RequestsPerBlock.Mean/float64(max(1, c.Addresses)), countedByText(r))
	if r.SharedBlocks > 0 {
		fmt.Fprintf(w, "  of which %d block(s) took more than one sweep (the block's change told in parts, or the end of another sweep), all counted in their requests and CPU\n", r.SharedBlocks)
	}
	if r.CPUPerBlock != nil {
		fmt.Fprintf(w, "  server CPU per block: mean %.2f s, max %.2f s\n", r.CPUPerBlock.Mean, r.CPUPerBlock.Max)
	} else {
		fmt.Fprintln(w, "  server CPU per block: not read (no /metrics with the admin token)")
	}
	for _, n := range r.NodesRSS {
		if n.PerAddressRSS == nil {
			fmt.Fprintf(w, "  %s resident memory: not read (no /metrics with the admin token)\n", n.Node)
			continue
		}
		fmt.Fprintf(w, "  %s resident memory: %s before the cards, %s with every address observed: %s a watched address\n",
			n.Node, fmtBytes(*n.Before), fmtBytes(*n.After), fmtBytes(*n.PerAddressRSS))
	}
	fmt.Fprintf(w, "  every address first observed %.1f s after the last card was added (%s requests to %s)\n", r.FirstObservedS, commas(r.FirstRequests), r.Source)
	fmt.Fprintf(w, "  watched addresses paid: %d, seen confirmed in their block: %d; addresses the follower failed to read: %d\n",
		r.Touched, r.ConfirmedSeen, r.FollowerFailures)
	printFaults(w, r)
}

// countedByText says who counted the requests to the source, and the
// follower's own count when that was not the follower.
func countedByText(r watchReport) string {
	if r.RequestsCountedBy == "follower" {
		return "as the follower counted its reads"
	}
	return fmt.Sprintf("as the %s test server counted them; the follower's reads: mean %s, max %s",
		r.Source, fmtMean(r.FollowerRequestsPerBlock), commas(int64(r.FollowerRequestsPerBlock.Max)))
}

func fmtMean(f perBlockFigures) string { return commas(int64(math.Round(f.Mean))) }

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

// fmtLatencyIf prints a latency, or says it was not seen.
func fmtLatencyIf(d time.Duration, seen bool) string {
	if !seen {
		return "never (within " + reorgCheckMax.String() + ")"
	}
	return fmtLatency(d)
}
