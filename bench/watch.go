package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// bench watch answers "how soon after btcd announces a block can an owner
// read its effects, and what does following the chain cost the server?"
// (issue 31: 10,000 watched addresses, a block's effects readable within
// 1 s p99 of btcd announcing it, a mempool transaction within 1 s). It is
// self-contained: it starts a btcd regtest node and one addrwatchd that
// follows it (--source: btcd itself, or an Electrum or Esplora test
// server over it, watch_source.go), gives accounts --addresses watched
// addresses on their cards, and then mines --blocks blocks, each after
// --block-txs payments (watch_blocks.go says what one block does and
// measures).

// watchRun is one run of bench watch: the node, the servers, the
// accounts set up on them, and where the next payment to a watched
// address goes.
type watchRun struct {
	cfg        *config
	c          *client
	node       *regtest.Node
	source     *watchSource // what the servers follow: btcd, or a test server over it
	ann        *announcements
	cluster    *watchCluster
	leaderNode *watchNode // the node whose follower runs, as last found
	accounts   []*watchAccount
	targets    []watchTarget // every watched address, interleaved over the accounts
	next       int           // the index in targets of the next payment
	keys       []*regtest.Key
	paid       []*paidTx // every payment to a watched address, for the audit
	// sweepTook is how long the last block's sweep took, from the
	// block's announcement to its end: part of the follower's cycle.
	sweepTook time.Duration
}

func watchCommand(ctx context.Context, cfg *config, stdout, stderr io.Writer) int {
	res, err := runWatch(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "bench: watch:", err)
		return exitFailed
	}
	return reportWatch(cfg, res, stdout, stderr)
}

// runWatch starts the node and the servers, sets up the accounts, runs
// the blocks with their faults, audits every payment and stops
// everything it started. Interrupted, it returns the blocks measured so
// far, unaudited.
func runWatch(ctx context.Context, cfg *config, stderr io.Writer) (*watchResult, error) {
	dir, err := os.MkdirTemp("", "bench-watch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	w, err := startWatch(ctx, cfg, dir, nil, stderr)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	wc := w.cluster
	res := &watchResult{}
	if err := w.setup(ctx, res, stderr); err != nil {
		return nil, fmt.Errorf("setup: %w\n%s", err, wc.logTail())
	}
	if err := w.runBlocks(ctx, res, stderr); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, wc.logTail())
	}
	if ctx.Err() != nil {
		return res, nil
	}
	fmt.Fprintf(stderr, "watch: auditing %d payments to watched addresses on every node …\n", len(w.paid))
	audit, err := w.audit(ctx, stderr)
	if err != nil {
		return nil, fmt.Errorf("audit: %w\n%s", err, wc.logTail())
	}
	res.audit = &audit
	if audit.worst().faults() > 0 || len(res.reorgs) > 0 && res.reorgsUnseen() > 0 {
		res.logTail = wc.logTail()
	}
	return res, nil
}

// startWatch starts what a run follows and serves, under dir: the btcd
// regtest node, bench's own listener for its block announcements, the
// source the servers follow, and --nodes servers, each with the extra
// arguments besides watch's. stop stops them all.
func startWatch(ctx context.Context, cfg *config, dir string, extra []string, stderr io.Writer) (*watchRun, error) {
	w := &watchRun{cfg: cfg}
	if err := w.start(ctx, dir, extra, stderr); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

func (w *watchRun) start(ctx context.Context, dir string, extra []string, stderr io.Writer) error {
	var err error
	fmt.Fprintf(stderr, "%s: starting btcd on regtest …\n", w.cfg.command)
	if w.node, err = regtest.Start(); err != nil {
		return err
	}
	if w.ann, err = listenBlocks(w.node.RPC()); err != nil {
		return err
	}
	if w.source, err = startWatchSource(w.cfg.watch.source, w.node); err != nil {
		return err
	}
	w.c = newClient(max(setupParallelism, w.cfg.watch.watchedPerBlock()), w.cfg.timeout)
	w.cluster, err = startWatchCluster(ctx, w.cfg, w.c, w.source, dir, extra, stderr)
	return err
}

// stop stops what startWatch started, the servers first.
func (w *watchRun) stop() {
	if w.cluster != nil {
		w.cluster.stop()
	}
	if w.source != nil {
		w.source.close()
	}
	if w.ann != nil {
		w.ann.close()
	}
	if w.node != nil {
		_ = w.node.Stop()
	}
}

// runBlocks mines and measures the blocks, killing the leader in some
// and reorging after others. Interrupted, it keeps what it measured.
func (w *watchRun) runBlocks(ctx context.Context, res *watchResult, stderr io.Writer) error {
	cfg := w.cfg
	kills := faultAt(cfg.watch.blocks, cfg.watch.leaderKills, killPhase)
	reorgs := faultAt(cfg.watch.blocks, cfg.watch.reorgs, reorgPhase)
	start, err := w.follower(ctx)
	if err != nil {
		return err
	}
	for b := range cfg.watch.blocks {
		s, err := w.block(ctx, kills[b], stderr)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted: reporting the blocks measured")
			return nil
		}
		if err != nil {
			return fmt.Errorf("block %d: %w", b+1, err)
		}
		res.blocks = append(res.blocks, s)
		fmt.Fprintf(stderr, "watch: block %d/%d (height %d%s): readable %s after its announcement, mempool probe %s, %s requests to %s, %s CPU\n",
			b+1, cfg.watch.blocks, s.height, s.faultNote(), fmtLatency(s.latency), fmtLatency(s.mempoolLatency), commas(s.requests.atSource()), w.source.name, fmtCPU(s.cpuSeconds, s.cpuRead))
		if !reorgs[b] {
			continue
		}
		r, err := w.reorg(ctx, len(res.reorgs), stderr)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reorg %d: %w", len(res.reorgs)+1, err)
		}
		res.reorgs = append(res.reorgs, r)
		fmt.Fprintf(stderr, "watch: reorg %d/%d of %d block(s): records showed it %s after the branch\n",
			len(res.reorgs), cfg.watch.reorgs, r.depth, fmtLatencyIf(r.latency, r.seen))
	}
	if end, err := w.follower(ctx); err == nil && len(res.blocks) > 0 && cfg.watch.leaderKills == 0 {
		// Across a leader kill the counts are of another follower.
		res.failures = end.Failures - start.Failures
	}
	return nil
}

// setup creates the accounts and their cards, funds the keys the reorgs
// pay from, waits until the follower has observed every address once,
// and notes each node's memory before the cards and after.
func (w *watchRun) setup(ctx context.Context, res *watchResult, stderr io.Writer) error {
	cfg := w.cfg
	started := time.Now()
	accounts, err := createWatchAccounts(w.c, cfg)
	if err != nil {
		return err
	}
	w.accounts = accounts
	if err := w.fundReorgKeys(); err != nil {
		return err
	}
	res.rssBefore = w.cluster.metric(w.c, cfg, "process_resident_memory_bytes")
	before, err := w.follower(ctx)
	if err != nil {
		return err
	}
	requestsBefore := w.requestsNow(before)
	if err := addWatchedCards(w.c, w.cluster.public(), accounts, cfg.watch.addresses); err != nil {
		return err
	}
	added := time.Now()
	fmt.Fprintf(stderr, "%s: %d accounts with %s watched addresses on their cards in %s; waiting for the follower to observe every one …\n",
		cfg.command, len(accounts), commas(int64(cfg.watch.addresses)), added.Sub(started).Round(time.Millisecond))
	// One account at a time: a poll of every account at once would load
	// the server while it sweeps.
	for _, a := range accounts {
		if _, _, err := waitRecord(ctx, w.c, w.cluster.public, a, w.waitMax(), "every address observed", observedAll(a.addresses)); err != nil {
			return err
		}
	}
	res.firstObserved = time.Since(added)
	if err := w.waitQuiet(ctx); err != nil {
		return err
	}
	after, err := w.follower(ctx)
	if err != nil {
		return err
	}
	res.firstRequests = w.requestsNow(after).since(requestsBefore)
	res.rssAfter = w.cluster.metric(w.c, cfg, "process_resident_memory_bytes")
	w.targets = interleave(accounts)
	fmt.Fprintf(stderr, "%s: every address observed %s after the last card was added (%s requests to %s)\n",
		cfg.command, fmtLatency(res.firstObserved), commas(res.firstRequests.atSource()), w.source.name)
	return nil
}

// note records a payment to a watched address for the audit.
func (w *watchRun) note(p payment) *paidTx {
	t := &paidTx{payment: p, sats: paymentSats}
	w.paid = append(w.paid, t)
	return t
}
