package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/addrwatch/addrwatch/notify/egress"
)

// notifyResult is what a bench notify run measured.
type notifyResult struct {
	setup  watchResult // watch's set-up figures: the first observation
	blocks []notifyBlockSample
	burst  *burstSample // nil without the throughput phase
	// What the receivers got over the whole run.
	byKind      map[string]int
	redelivered int
	refused     int
	problems    []string
	wrongBlock  int
	logTail     string // the servers' logs' ends, when the run failed
}

// missing counts the webhooks expected and never received.
func (r *notifyResult) missing() int {
	n := 0
	for _, b := range r.blocks {
		n += b.missing
	}
	if r.burst != nil {
		n += r.burst.missing
	}
	return n
}

// failed: a webhook missing, refused (its signature did not verify, or
// its body was no event) or naming another block.
func (r *notifyResult) failed() bool {
	return r.missing() > 0 || r.refused > 0 || r.wrongBlock > 0
}

// notifyReport is the --json document of bench notify. Latencies are in
// microseconds.
type notifyReport struct {
	Config notifyReportConfig `json:"config"`
	// BlockToWebhook runs from btcd's announcement of a block to each
	// tx_confirmed webhook's arrival; BroadcastToSeen from a payment's
	// broadcast to its tx_seen webhook's.
	BlockToWebhook  hookLatency       `json:"block_to_webhook"`
	BroadcastToSeen hookLatency       `json:"broadcast_to_tx_seen"`
	Payments        int               `json:"payments"`
	WebhooksByKind  map[string]int    `json:"webhooks_by_kind"`
	Missing         int               `json:"missing"`
	Refused         int               `json:"refused"`
	Problems        []string          `json:"problems"`
	Redelivered     int               `json:"redelivered"`
	WrongBlock      int               `json:"wrong_block"`
	FirstObservedS  float64           `json:"first_observed_s"`
	Blocks          []notifyBlockJSON `json:"blocks"`
	Burst           *burstReport      `json:"burst"` // null without the throughput phase
}

type notifyReportConfig struct {
	Server          string  `json:"server"`
	Nodes           int     `json:"nodes"`
	Addresses       int     `json:"addresses"`
	Accounts        int     `json:"accounts"`
	Blocks          int     `json:"blocks"`
	BlockTxs        int     `json:"block_txs"`
	WatchedPerBlock int     `json:"watched_per_block"`
	BurstAccounts   int     `json:"burst_accounts"`
	BurstChannels   int     `json:"burst_channels"`
	BurstAddresses  int     `json:"burst_addresses"`
	SlowAnswerS     float64 `json:"slow_answer_s"`
}

// hookLatency are nearest-rank percentiles over webhooks.
type hookLatency struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50_us"`
	P90     float64 `json:"p90_us"`
	P99     float64 `json:"p99_us"`
	Max     float64 `json:"max_us"`
}

type notifyBlockJSON struct {
	Height   int64       `json:"height"`
	Hash     string      `json:"hash"`
	Payments int         `json:"payments"`
	Missing  int         `json:"missing"`
	Latency  hookLatency `json:"block_to_webhook"`
}

type burstReport struct {
	Accounts            int     `json:"accounts"`
	Channels            int     `json:"channels_per_account"`
	AddressesPerAccount int     `json:"addresses_per_account"`
	SlowAnswerS         float64 `json:"slow_answer_s"`
	Transactions        int     `json:"transactions"`
	FirstObservedS      float64 `json:"first_observed_s"`
	Expected            int     `json:"expected"`
	Received            int     `json:"received"`
	Missing             int     `json:"missing"`
	// The fast channels' webhooks: how many, the first's and the last's
	// arrival after the block's announcement, and their count over the
	// time from first to last.
	FastReceived int `json:"fast_received"`
	// SweptS is when the follower had observed every address the block
	// paid, after the announcement (every event in the outbox);
	// AfterSweptPerS the fast webhooks from then to the last, a second.
	SweptS         float64 `json:"swept_s"`
	AfterSweptPerS float64 `json:"after_swept_per_s"`
	FastFirstS     float64 `json:"fast_first_s"`
	FastLastS      float64 `json:"fast_last_s"`
	DeliveriesPerS float64 `json:"deliveries_per_s"`
	// PerSecond counts every webhook received in each second after the
	// announcement, the slow channel's too.
	PerSecond    []int       `json:"per_second"`
	Fast         hookLatency `json:"fast_latency"`
	Slow         hookLatency `json:"slow_latency"`
	SlowExpected int         `json:"slow_expected"`
	SlowReceived int         `json:"slow_received"`
	Budget       burstBudget `json:"budget"`
	// Deliverer is the leader's deliverer's counts over the burst,
	// null when they could not be read.
	Deliverer *delivererDelta `json:"deliverer"`
}

// burstBudget is what the node's own budgets allow the phase's accounts:
// each a second once the bursts are spent (the smaller of the accounts'
// and the channels' sums), and the sends the full buckets allow at once.
type burstBudget struct {
	AccountsPerS float64 `json:"accounts_per_s"`
	ChannelsPerS float64 `json:"channels_per_s"`
	SteadyPerS   float64 `json:"steady_per_s"`
	AtOnce       int     `json:"at_once"`
}

type delivererDelta struct {
	Tries      int64            `json:"tries"`
	Delivered  int64            `json:"delivered"`
	HeldBack   int64            `json:"held_back"`
	Failed     map[string]int64 `json:"failed"`
	AckBatches int64            `json:"ack_batches"`
}

func hookLatencyOf(ds []time.Duration) hookLatency {
	us := make([]float64, len(ds))
	for i, d := range ds {
		us[i] = micros(d)
	}
	return hookLatency{Samples: len(us), P50: nearestRank(us, 0.5), P90: nearestRank(us, 0.9), P99: nearestRank(us, 0.99), Max: nearestRank(us, 1)}
}

// budgetOf is what the default budgets allow accounts of channels each.
func budgetOf(accounts, channels int) burstBudget {
	a, e := egress.AccountRateDefault, egress.EndpointRateDefault
	b := burstBudget{AccountsPerS: float64(accounts) * a.PerSecond, ChannelsPerS: float64(accounts*channels) * e.PerSecond,
		AtOnce: min(accounts*a.Burst, accounts*channels*e.Burst)}
	b.SteadyPerS = min(b.AccountsPerS, b.ChannelsPerS)
	return b
}

// perSecond counts the arrivals (times after a start) in each second.
func perSecond(ats []time.Duration) []int {
	var out []int
	for _, at := range ats {
		s := max(0, int(at/time.Second))
		for len(out) <= s {
			out = append(out, 0)
		}
		out[s]++
	}
	return out
}

// rateOf is how many arrivals a second came from the first to the last:
// their count over that span, 0 with fewer than two or no span.
func rateOf(ats []time.Duration) (first, last time.Duration, perS float64) {
	if len(ats) == 0 {
		return 0, 0, 0
	}
	first, last = slices.Min(ats), slices.Max(ats)
	if len(ats) < 2 || last <= first {
		return first, last, 0
	}
	return first, last, float64(len(ats)) / (last - first).Seconds()
}

func buildBurstReport(s *burstSample) *burstReport {
	r := &burstReport{Accounts: s.accounts, Channels: s.channels, AddressesPerAccount: s.addresses, SlowAnswerS: s.slowAnswer.Seconds(),
		Transactions: s.transactions, FirstObservedS: s.firstObserved.Seconds(), Expected: s.expected, Received: len(s.fast) + len(s.slow),
		Missing: s.missing, FastReceived: len(s.fast), PerSecond: perSecond(slices.Concat(s.fast, s.slow)),
		Fast: hookLatencyOf(s.fast), Slow: hookLatencyOf(s.slow), SlowExpected: s.slowExpected, SlowReceived: len(s.slow),
		Budget: budgetOf(s.accounts, s.channels)}
	first, last, rate := rateOf(s.fast)
	r.FastFirstS, r.FastLastS, r.DeliveriesPerS = first.Seconds(), last.Seconds(), rate
	r.SweptS = s.swept.Seconds()
	if s.swept > 0 && last > s.swept {
		after := 0
		for _, at := range s.fast {
			if at >= s.swept {
				after++
			}
		}
		r.AfterSweptPerS = float64(after) / (last - s.swept).Seconds()
	}
	if s.statsRead {
		d := &delivererDelta{Tries: s.after.Sent - s.before.Sent, Delivered: s.after.Delivered - s.before.Delivered,
			HeldBack: s.after.HeldBack - s.before.HeldBack, AckBatches: s.after.AckBatches - s.before.AckBatches, Failed: map[string]int64{}}
		for class, n := range s.after.Failed {
			if n > s.before.Failed[class] {
				d.Failed[class] = n - s.before.Failed[class]
			}
		}
		r.Deliverer = d
	}
	return r
}

// buildNotifyReport turns a run's samples into the figures.
func buildNotifyReport(cfg *config, res *notifyResult) notifyReport {
	nc := cfg.notify
	r := notifyReport{
		Config: notifyReportConfig{Server: cfg.watch.server, Nodes: cfg.watch.nodes, Addresses: cfg.watch.addresses, Accounts: cfg.accounts,
			Blocks: cfg.watch.blocks, BlockTxs: cfg.watch.blockTxs, WatchedPerBlock: cfg.watch.watchedPerBlock(),
			BurstAccounts: nc.burstAccounts, BurstChannels: nc.burstChannels, BurstAddresses: nc.burstAddresses, SlowAnswerS: nc.slowAnswer.Seconds()},
		WebhooksByKind: res.byKind, Missing: res.missing(), Refused: res.refused, Problems: res.problems, Redelivered: res.redelivered,
		WrongBlock: res.wrongBlock, FirstObservedS: res.setup.firstObserved.Seconds(), Blocks: []notifyBlockJSON{},
	}
	if r.WebhooksByKind == nil {
		r.WebhooksByKind = map[string]int{}
	}
	if r.Problems == nil {
		r.Problems = []string{}
	}
	var confirmed, seen []time.Duration
	for _, b := range res.blocks {
		confirmed, seen = append(confirmed, b.confirmed...), append(seen, b.seen...)
		r.Payments += b.payments
		r.Blocks = append(r.Blocks, notifyBlockJSON{Height: b.height, Hash: b.hash, Payments: b.payments, Missing: b.missing, Latency: hookLatencyOf(b.confirmed)})
	}
	r.BlockToWebhook, r.BroadcastToSeen = hookLatencyOf(confirmed), hookLatencyOf(seen)
	if res.burst != nil {
		r.Burst = buildBurstReport(res.burst)
	}
	return r
}

// reportNotify prints the figures (stdout, or stderr under --json) and
// the JSON. A run that measured no block, or missed or refused a
// webhook, failed.
func reportNotify(cfg *config, res *notifyResult, stdout, stderr io.Writer) int {
	r := buildNotifyReport(cfg, res)
	if !writeReport(cfg, stdout, stderr, func(w io.Writer) { printNotifyReport(w, r) }, r) {
		return exitFailed
	}
	if len(res.blocks) == 0 {
		fmt.Fprintln(stderr, "bench: notify measured no block")
		return exitFailed
	}
	if res.failed() {
		fmt.Fprintf(stderr, "bench: notify FAILED: %d webhooks missing, %d refused, %d naming another block\n%s\n", r.Missing, r.Refused, r.WrongBlock, res.logTail)
		return exitFailed
	}
	return 0
}

func printNotifyReport(w io.Writer, r notifyReport) {
	c := r.Config
	fmt.Fprintf(w, "\nnotify: %s addresses in %d accounts, one webhook channel each; %d of %d blocks measured, %d transactions before each (%d to watched addresses), %d node(s)\n",
		commas(int64(c.Addresses)), c.Accounts, len(r.Blocks), c.Blocks, c.BlockTxs, c.WatchedPerBlock, c.Nodes)
	rows := [][]string{{"", "p50", "p90", "p99", "max", "webhooks"}}
	row := func(name string, l hookLatency) {
		rows = append(rows, []string{"  " + name, fmtMicros(l.P50), fmtMicros(l.P90), fmtMicros(l.P99), fmtMicros(l.Max), commas(int64(l.Samples))})
	}
	row("block announced → tx_confirmed webhook", r.BlockToWebhook)
	row("payment broadcast → tx_seen webhook", r.BroadcastToSeen)
	if b := r.Burst; b != nil {
		row("burst: block announced → webhook, fast channels", b.Fast)
		row(fmt.Sprintf("burst: the same, the slow channel (%s answers)", time.Duration(b.SlowAnswerS*float64(time.Second))), b.Slow)
	}
	writeColumns(w, rows, 1)
	fmt.Fprintf(w, "  webhooks received: %s; missing %d, refused (signature or body) %d, redelivered %d, naming another block %d\n",
		kindCounts(r.WebhooksByKind), r.Missing, r.Refused, r.Redelivered, r.WrongBlock)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  refused: %s\n", p)
	}
	b := r.Burst
	if b == nil {
		return
	}
	fmt.Fprintf(w, "  burst: %d accounts × %d channels × %d addresses, paid in %d transactions, one block: %s webhooks expected, %s received, %d missing\n",
		b.Accounts, b.Channels, b.AddressesPerAccount, b.Transactions, commas(int64(b.Expected)), commas(int64(b.Received)), b.Missing)
	fmt.Fprintf(w, "  burst: fast channels %s webhooks from %.2f s to %.2f s after the announcement: %s deliveries/s\n",
		commas(int64(b.FastReceived)), b.FastFirstS, b.FastLastS, commas(int64(b.DeliveriesPerS)))
	fmt.Fprintf(w, "  burst: the follower had observed every address the block paid %.2f s after the announcement; fast webhooks from then to the last: %s/s\n",
		b.SweptS, commas(int64(b.AfterSweptPerS)))
	fmt.Fprintf(w, "  burst: per second after the announcement: %s\n", intList(b.PerSecond))
	fmt.Fprintf(w, "  burst: the slow channel got %d of %d\n", b.SlowReceived, b.SlowExpected)
	fmt.Fprintf(w, "  burst: the budgets allow %s/s (accounts %s/s, channels %s/s) once %s sends at once are spent\n",
		commas(int64(b.Budget.SteadyPerS)), commas(int64(b.Budget.AccountsPerS)), commas(int64(b.Budget.ChannelsPerS)), commas(int64(b.Budget.AtOnce)))
	if d := b.Deliverer; d != nil {
		fmt.Fprintf(w, "  burst: the deliverer made %s tries, %s delivered, %s held back by the budgets, failed %v, in %s ack batches\n",
			commas(d.Tries), commas(d.Delivered), commas(d.HeldBack), d.Failed, commas(d.AckBatches))
	}
}

// kindCounts prints counts by kind in the kinds' order.
func kindCounts(m map[string]int) string {
	var parts []string
	for _, k := range []string{kindSeen, kindConfirmed, kindDeep} {
		parts = append(parts, fmt.Sprintf("%s %s", commas(int64(m[k])), k))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != kindSeen && k != kindConfirmed && k != kindDeep {
			parts = append(parts, fmt.Sprintf("%s %s", commas(int64(m[k])), k))
		}
	}
	return strings.Join(parts, ", ")
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = commas(int64(x))
	}
	return strings.Join(parts, " ")
}
