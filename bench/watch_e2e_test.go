package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestWatchAgainstARegtestNode runs bench watch small, as `go run ./bench
// watch` would: its own btcd regtest node and addrwatchd, 20 watched
// addresses in two accounts, three blocks. The report must hold every
// figure, each latency positive, every watched address a block paid seen
// confirmed in that block, and requests to btcd for every block. How
// large the figures are is not asserted: that is the README's, measured.
func TestWatchAgainstARegtestNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and a server process")
	}
	bin := buildServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"watch", "--server", bin, "--addresses", "20", "--accounts", "2", "--blocks", "3", "--block-txs", "4",
		"--chain-poll", "100ms", "--json"}
	if code := run(ctx, args, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("bench watch exited %d\n%s", code, stderr.String())
	}
	var rep watchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if len(rep.Blocks) != 3 || rep.BlockLatency.Samples != 3 || rep.MempoolLatency.Samples != 3 {
		t.Fatalf("%d blocks reported (latency samples %d, %d), want 3\n%s", len(rep.Blocks), rep.BlockLatency.Samples, rep.MempoolLatency.Samples, stdout.String())
	}
	for _, l := range []latencyFigures{rep.BlockLatency, rep.MempoolLatency} {
		if l.P50 <= 0 || l.P99 < l.P50 || l.Max < l.P99 {
			t.Errorf("latencies p50 %v, p99 %v, max %v", l.P50, l.P99, l.Max)
		}
	}
	if rep.CPUPerBlock == nil || rep.CPUPerBlock.Mean < 0 || rep.RSSBefore == nil || *rep.RSSBefore <= 0 || rep.RSSAfter == nil || *rep.RSSAfter <= 0 || rep.RSSPerAddress == nil {
		t.Errorf("CPU or memory not read: CPU %v, RSS %v → %v (%v an address)", rep.CPUPerBlock, rep.RSSBefore, rep.RSSAfter, rep.RSSPerAddress)
	}
	if rep.RequestsPerBlock.Mean <= 0 || rep.FirstRequests <= 0 || rep.FirstObservedS <= 0 {
		t.Errorf("requests to btcd: %v a block, %d for the first observations (after %v s)", rep.RequestsPerBlock.Mean, rep.FirstRequests, rep.FirstObservedS)
	}
	for _, b := range rep.Blocks {
		if b.Touched < 1 || b.ConfirmedSeen != b.Touched || b.LatencyUS <= 0 || b.MempoolLatencyUS <= 0 || b.Requests <= 0 || b.Sweeps < 1 || b.CPUSeconds == nil || b.Hash == "" || b.Height <= 0 {
			t.Errorf("block %+v", b)
		}
	}
	if rep.Touched < 3 || rep.ConfirmedSeen != rep.Touched {
		t.Errorf("%d watched addresses paid, %d seen confirmed", rep.Touched, rep.ConfirmedSeen)
	}
}

// TestWatchFaultsThroughACluster runs bench watch over three nodes with
// a reorg and a leader kill, small: every payment must come out of the
// audit as btcd has it on every node, the reorg shown in the records and
// the killed block measured apart.
func TestWatchFaultsThroughACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and three server processes")
	}
	bin := buildServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"watch", "--server", bin, "--nodes", "3", "--addresses", "20", "--accounts", "2", "--blocks", "4", "--block-txs", "4",
		"--reorgs", "2", "--leader-kills", "1", "--chain-poll", "100ms", "--json"}
	if code := run(ctx, args, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("bench watch exited %d\n%s", code, stderr.String())
	}
	var rep watchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if rep.KilledBlockLatency.Samples != 1 || rep.BlockLatency.Samples != 3 || rep.Reorgs.Count != 2 || rep.Reorgs.Unseen != 0 {
		t.Errorf("killed blocks %d, others %d, reorgs %+v", rep.KilledBlockLatency.Samples, rep.BlockLatency.Samples, rep.Reorgs)
	}
	if rep.Audit == nil || len(rep.Audit.Nodes) != 3 {
		t.Fatalf("audit %+v", rep.Audit)
	}
	for _, n := range rep.Audit.Nodes {
		// Per reorg: one payment on no chain after confirming, one
		// dropped from the mempool; the rest confirmed.
		if n.faults() != 0 || n.NotOnChain != 4 || n.Confirmed != n.Payments-4 {
			t.Errorf("node %s's audit: %+v", n.Node, n.auditCounts)
		}
	}
	if len(rep.NodesRSS) != 3 {
		t.Errorf("memory of %d nodes", len(rep.NodesRSS))
	}
}
