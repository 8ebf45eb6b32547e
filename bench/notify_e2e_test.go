package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestNotifyAgainstARegtestNode runs bench notify small, as `go run
// ./bench notify` would: its own btcd regtest node and addrwatchd, 20
// watched addresses in two accounts and one block, then a burst of three
// accounts with two channels and five addresses each, one channel
// answering after 300 ms. Every webhook must arrive signed right, none
// missing, the slow channel's too. How large the figures are is not
// asserted: that is the README's, measured.
func TestNotifyAgainstARegtestNode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts btcd and a server process")
	}
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"notify", "--server", bin, "--addresses", "20", "--accounts", "2", "--blocks", "1", "--block-txs", "4", "--watched-share", "0.5",
		"--chain-poll", "100ms", "--burst-accounts", "3", "--burst-channels", "2", "--burst-addresses", "5", "--slow-answer", "300ms", "--json"}
	if code := run(ctx, args, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("bench notify exited %d\n%s", code, stderr.String())
	}
	var rep notifyReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if len(rep.Blocks) != 1 || rep.Payments != 2 || rep.BlockToWebhook.Samples != 2 || rep.BroadcastToSeen.Samples != 2 {
		t.Fatalf("blocks %d, payments %d, webhooks timed %d and %d\n%s", len(rep.Blocks), rep.Payments, rep.BlockToWebhook.Samples, rep.BroadcastToSeen.Samples, stdout.String())
	}
	for _, l := range []hookLatency{rep.BlockToWebhook, rep.BroadcastToSeen} {
		if l.P50 <= 0 || l.P99 < l.P50 || l.Max < l.P99 {
			t.Errorf("latencies %+v", l)
		}
	}
	if rep.Missing != 0 || rep.Refused != 0 || rep.WrongBlock != 0 || rep.WebhooksByKind[kindSeen] != 2 || rep.WebhooksByKind[kindConfirmed] != 2+30 {
		t.Errorf("missing %d, refused %d, wrong block %d, by kind %v", rep.Missing, rep.Refused, rep.WrongBlock, rep.WebhooksByKind)
	}
	b := rep.Burst
	if b == nil {
		t.Fatal("no burst")
	}
	if b.Expected != 30 || b.Received != 30 || b.FastReceived != 25 || b.SlowExpected != 5 || b.SlowReceived != 5 || b.Fast.Samples != 25 || b.Slow.Samples != 5 {
		t.Errorf("burst %+v", b)
	}
	if b.Deliverer == nil || b.Deliverer.Delivered < 30 || b.Budget.SteadyPerS != 30 {
		t.Errorf("the deliverer %+v, the budget %+v", b.Deliverer, b.Budget)
	}
}
