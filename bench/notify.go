package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// bench notify answers issue 32's two targets: from a block announced by
// btcd to the signed webhook received, p99 under 1 s with 10,000 watched
// addresses; and 1,000 webhook deliveries a second sustained by one node,
// with a slow receiver (2 s answers) not delaying the others. It starts
// what watch starts (a btcd regtest node, --nodes addrwatchd following
// it, here with --notify-allow-private) and sets up watch's accounts and
// cards, then:
//
//  1. the latency phase (notify_blocks.go): a webhook channel on every
//     account, to a receiver in bench (notify_receiver.go), and --blocks
//     blocks of watch's payments, each webhook timed;
//  2. the throughput phase (notify_burst.go): --burst-accounts more
//     accounts, each with --burst-channels channels and
//     --burst-addresses addresses, all paid in one block; one channel's
//     receiver answers after --slow-answer.
//
// Every request's signature is checked under its channel's secret, and a
// webhook expected but never received, or one refused, fails the run.

// notifyRun is one run of bench notify: watch's run, and the receivers
// and what they got.
type notifyRun struct {
	*watchRun
	rc    *receivers
	tally *hookTally
	// hooks is the latency phase's channel of each account.
	hooks map[*watchAccount]*hookChannel
}

// The waits of bench notify for a webhook before it counts as missing.
const (
	// notifyWaitMax: a block's webhooks; a receiver that answers at
	// once gets each within a second or so.
	notifyWaitMax = time.Minute
	// burstWaitMax: the whole burst, the slow channel's last included.
	burstWaitMax = 10 * time.Minute
)

func notifyCommand(ctx context.Context, cfg *config, stdout, stderr io.Writer) int {
	res, err := runNotify(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "bench: notify:", err)
		return exitFailed
	}
	return reportNotify(cfg, res, stdout, stderr)
}

// runNotify starts the node, the servers and the receivers, sets up the
// accounts, their cards and channels, runs the two phases and stops
// everything it started. Interrupted, it reports what it measured.
func runNotify(ctx context.Context, cfg *config, stderr io.Writer) (*notifyResult, error) {
	dir, err := os.MkdirTemp("", "bench-notify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rc := newReceivers()
	defer rc.close()
	w, err := startWatch(ctx, cfg, dir, []string{"--notify-allow-private"}, stderr)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	n := &notifyRun{watchRun: w, rc: rc, tally: newHookTally(rc), hooks: map[*watchAccount]*hookChannel{}}
	res := &notifyResult{}
	if err := w.setup(ctx, &res.setup, stderr); err != nil {
		return nil, fmt.Errorf("setup: %w\n%s", err, w.cluster.logTail())
	}
	channels, err := addHookChannels(w.c, w.cluster.public(), rc, w.accounts, 1, 0)
	if err != nil {
		return nil, fmt.Errorf("setup: %w\n%s", err, w.cluster.logTail())
	}
	for i, a := range w.accounts {
		n.hooks[a] = channels[i][0]
	}
	fmt.Fprintf(stderr, "notify: a webhook channel on each of the %d accounts, to receivers in bench\n", len(w.accounts))
	if err := n.runBlocks(ctx, res, stderr); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, w.cluster.logTail())
	}
	if ctx.Err() == nil && cfg.notify.burstAccounts > 0 {
		b, err := n.burst(ctx, stderr)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("burst: %w\n%s", err, w.cluster.logTail())
		}
		res.burst = b
	}
	n.tally.drain()
	res.redelivered, res.refused, res.problems = n.tally.redelivered, n.tally.refused, n.tally.problems
	res.byKind, res.wrongBlock = n.tally.byKind, n.tally.wrongBlock
	if res.failed() {
		res.logTail = w.cluster.logTail()
	}
	return res, nil
}
