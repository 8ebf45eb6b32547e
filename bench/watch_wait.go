package main

import (
	"context"
	"fmt"
	"time"
)

// Waiting on the follower: its cycle (sweep, then the mempool period, or
// a new tip sooner), when it is at rest, and when it has swept a block,
// all read from its counts in the admin status.

// Bounds of the waits.
const (
	// followerQuietMax is how long the follower's counts must stand
	// still for it to be at rest (less with a --chain-poll below it).
	// Within a sweep an address is finished every few milliseconds, but
	// on a loaded machine a 10,000-address sweep once stood still for
	// over 500 ms, and the block after it was timed behind its end.
	followerQuietMax = 2 * time.Second
	// followerReadInterval is how often the follower's counts are read
	// while waiting on them.
	followerReadInterval = 50 * time.Millisecond
	// watchWaitMin is the least any one wait may take before the run
	// gives up: a sweep of ten thousand addresses takes tens of seconds.
	watchWaitMin = 5 * time.Minute
	// serverMempoolPolls is cmd/addrwatchd's chainMempoolPolls: the
	// follower reads the mempool every that many --chain-poll.
	serverMempoolPolls = 5
)

// followerStats is the follower object of GET /admin/v1/cluster: what
// the chain follower did since the server started.
type followerStats struct {
	Sweeps       int64 `json:"sweeps"`
	Addresses    int64 `json:"addresses"`
	Requests     int64 `json:"requests"`
	Observations int64 `json:"observations"`
	Failures     int64 `json:"failures"`
	Tip          struct {
		Height int64  `json:"height"`
		Hash   string `json:"hash"`
	} `json:"tip"`
}

// readFollower reads the follower's counts from the admin API at
// cfg.admin, and the id of the leader that node knows.
func readFollower(c *client, cfg *config) (followerStats, string, error) {
	var status struct {
		Leader   string         `json:"leader"`
		Follower *followerStats `json:"follower"`
	}
	if err := c.call("GET", cfg.admin+"/admin/v1/cluster", cfg.adminToken, nil, 200, &status); err != nil {
		return followerStats{}, "", err
	}
	if status.Follower == nil {
		return followerStats{}, "", fmt.Errorf("GET /admin/v1/cluster has no follower")
	}
	return *status.Follower, status.Leader, nil
}

// follower reads the counts of the follower that runs: the leader's.
// When the node read is not (or no longer) the leader, or does not
// answer, it finds the leader and reads again, through an election.
func (w *watchRun) follower(ctx context.Context) (followerStats, error) {
	deadline := time.Now().Add(nodeReadyWait)
	for {
		st, leader, err := readFollower(w.c, w.cfg)
		if err == nil && w.leaderNode != nil && leader == w.leaderNode.id && w.leaderNode.isUp() {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("the leader's follower could not be read within %s (last: %v)", nodeReadyWait, err)
		}
		l, err := w.cluster.leader(ctx, w.c, w.cfg)
		if err != nil {
			return st, err
		}
		w.leaderNode = l
	}
}

// mempoolPeriod is how often the server's follower reads the mempool
// while the tip stays put.
func (w *watchRun) mempoolPeriod() time.Duration {
	return serverMempoolPolls * w.cfg.watch.chainPoll
}

// waitMax bounds each wait: the mempool period three times over, and
// never less than watchWaitMin.
func (w *watchRun) waitMax() time.Duration {
	return max(watchWaitMin, 3*w.mempoolPeriod())
}

// followerQuiet is how long the follower's counts must stand still for
// it to be at rest. It is at most one --chain-poll, so that a block mined
// right after is the next sweep's cause: the follower sweeps the mempool
// again only a mempool period (five polls) after a sweep ended, and it
// asks the tip within a poll of the block.
func (w *watchRun) followerQuiet() time.Duration {
	return min(followerQuietMax, w.cfg.watch.chainPoll)
}

// waitQuiet waits until the follower's counts stand still for
// followerQuiet: no sweep is under way.
func (w *watchRun) waitQuiet(ctx context.Context) error {
	quiet := w.followerQuiet()
	deadline := time.Now().Add(w.waitMax())
	last, err := w.follower(ctx)
	if err != nil {
		return err
	}
	still := time.Now()
	for time.Since(still) < quiet {
		if time.Now().After(deadline) {
			return fmt.Errorf("the follower never stood still for %s within %s", quiet, w.waitMax())
		}
		if err := sleepCtx(ctx, min(followerReadInterval, quiet/4)); err != nil {
			return err
		}
		now, err := w.follower(ctx)
		if err != nil {
			return err
		}
		if now.Sweeps != last.Sweeps || now.Requests != last.Requests || now.Observations != last.Observations {
			last, still = now, time.Now()
		}
	}
	return nil
}

// waitTip waits until the follower has finished a sweep at block, and
// returns its counts then.
func (w *watchRun) waitTip(ctx context.Context, block string) (followerStats, error) {
	deadline := time.Now().Add(w.waitMax())
	for {
		st, err := w.follower(ctx)
		if err != nil || st.Tip.Hash == block {
			return st, err
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("the follower finished no sweep at %s within %s; its tip is %+v", block, w.waitMax(), st.Tip)
		}
		if err := sleepCtx(ctx, followerReadInterval); err != nil {
			return st, err
		}
	}
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
