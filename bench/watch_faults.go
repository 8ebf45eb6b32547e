package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"
)

// Faults during bench watch's blocks (--leader-kills, --reorgs), spread
// evenly over them: a leader kill happens in a block, just after it is
// mined, so that the next leader must take the block up from the log;
// a reorg follows a block (watch_reorg.go).

// faultAt lists, for each of blocks blocks, whether one of n faults
// falls on it: n of them, evenly apart, the first phase (0 to 1) of a
// gap in. n is at most blocks, so no two fall on one block.
func faultAt(blocks, n int, phase float64) []bool {
	at := make([]bool, blocks)
	for k := range n {
		at[int(math.Floor((float64(k)+phase)*float64(blocks)/float64(n)))] = true
	}
	return at
}

// Phases of the two kinds of fault, so that they fall on different
// blocks where there is room.
const (
	killPhase  = 0.25
	reorgPhase = 0.75
)

// killLeader kills the raft leader with SIGKILL and returns it, to be
// started again once the block is through (restart). The other nodes
// elect a leader among themselves meanwhile, and it resumes following
// from what the log recorded.
func (w *watchRun) killLeader(ctx context.Context, stderr io.Writer) (*watchNode, error) {
	for _, s := range w.cluster.nodes {
		// A node still catching up after the last kill would leave the
		// cluster without a quorum.
		if err := s.waitReady(ctx, w.c, nodeReadyWait); err != nil {
			return nil, err
		}
	}
	l, err := w.cluster.leader(ctx, w.c, w.cfg)
	if err != nil {
		return nil, err
	}
	l.kill()
	fmt.Fprintf(stderr, "watch: killed the leader, %s (SIGKILL)\n", l.id)
	return l, nil
}

// restart starts a killed node again on its data dir and waits until it
// serves.
func (w *watchRun) restart(ctx context.Context, s *watchNode, stderr io.Writer) error {
	started := time.Now()
	if err := s.start(ctx); err != nil {
		return err
	}
	if err := s.waitReady(ctx, w.c, nodeReadyWait); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "watch: %s restarted, ready in %s\n", s.id, time.Since(started).Round(time.Millisecond))
	return nil
}
