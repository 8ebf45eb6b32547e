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
// confirmed in that block, and requests to btcd for every block, as the
// follower counted them (btcd keeps no count). How large the figures are
// is not asserted: that is the README's, measured.
func TestWatchAgainstARegtestNode(t *testing.T) {
	t.Parallel()
	rep := runSmallWatch(t, "btcd")
	if rep.RequestsCountedBy != "follower" || rep.RequestsPerBlock != rep.FollowerRequestsPerBlock {
		t.Errorf("requests to btcd counted by %q: %+v, the follower's %+v", rep.RequestsCountedBy, rep.RequestsPerBlock, rep.FollowerRequestsPerBlock)
	}
}

// TestWatchOverAnElectrumServer is the same small run with the server
// following the Electrum test server over the node (electrums:, its
// certificate pinned): told of changes by its subscriptions, and its
// requests counted by the Electrum server.
func TestWatchOverAnElectrumServer(t *testing.T) {
	t.Parallel()
	rep := runSmallWatch(t, "electrum")
	if rep.RequestsCountedBy != "source" {
		t.Errorf("requests to electrum counted by %q", rep.RequestsCountedBy)
	}
}

// TestWatchOverAnEsploraServer is the same small run with the server
// polling the Esplora test server over the node (esplora:https://…):
// every request the client makes is one the server answers, so the
// server counts at least the follower's reads in each block, and more
// (the tip, asked every --chain-poll).
func TestWatchOverAnEsploraServer(t *testing.T) {
	t.Parallel()
	rep := runSmallWatch(t, "esplora")
	if rep.RequestsCountedBy != "source" {
		t.Errorf("requests to esplora counted by %q", rep.RequestsCountedBy)
	}
	for _, b := range rep.Blocks {
		if b.Requests <= b.FollowerRequests {
			t.Errorf("block %d: %d requests counted by the Esplora server, %d reads by the follower", b.Height, b.Requests, b.FollowerRequests)
		}
	}
}

// runSmallWatch runs bench watch with 20 watched addresses in two
// accounts and three blocks, following source, and checks what every
// run's report must hold.
func runSmallWatch(t *testing.T, source string) watchReport {
	t.Helper()
	if testing.Short() {
		t.Skip("starts btcd and a server process")
	}
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"watch", "--server", bin, "--source", source, "--addresses", "20", "--accounts", "2", "--blocks", "3", "--block-txs", "4",
		"--chain-poll", "100ms", "--json"}
	if code := run(ctx, args, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("bench watch exited %d\n%s", code, stderr.String())
	}
	var rep watchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if rep.Source != source {
		t.Errorf("the report names the source %q, want %q", rep.Source, source)
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
	if rep.RequestsPerBlock.Mean <= 0 || rep.FollowerRequestsPerBlock.Mean <= 0 || rep.FirstRequests <= 0 || rep.FirstFollower <= 0 || rep.FirstObservedS <= 0 {
		t.Errorf("requests to %s: %v a block (the follower's %v), %d for the first observations (the follower's %d, after %v s)",
			source, rep.RequestsPerBlock.Mean, rep.FollowerRequestsPerBlock.Mean, rep.FirstRequests, rep.FirstFollower, rep.FirstObservedS)
	}
	for _, b := range rep.Blocks {
		if b.Touched < 1 || b.ConfirmedSeen != b.Touched || b.LatencyUS <= 0 || b.MempoolLatencyUS <= 0 || b.Requests <= 0 || b.FollowerRequests <= 0 ||
			b.Sweeps < 1 || b.CPUSeconds == nil || b.Hash == "" || b.Height <= 0 {
			t.Errorf("block %+v", b)
		}
	}
	if rep.Touched < 3 || rep.ConfirmedSeen != rep.Touched {
		t.Errorf("%d watched addresses paid, %d seen confirmed", rep.Touched, rep.ConfirmedSeen)
	}
	if rep.Audit == nil {
		t.Error("no audit")
	}
	return rep
}

// TestWatchFaultsThroughACluster runs bench watch over three nodes with
// a reorg and a leader kill, small: every payment must come out of the
// audit as btcd has it on every node, the reorg shown in the records and
// the killed block measured apart.
func TestWatchFaultsThroughACluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts btcd and three server processes")
	}
	bin := buildServer(t)
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
