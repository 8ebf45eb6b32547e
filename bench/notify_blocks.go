package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// One block of bench notify's latency phase, in order:
//
//  1. watch's payments (--block-txs, --watched-share of them to watched
//     addresses, spread over the accounts), each timed from its broadcast
//     to its tx_seen webhook;
//  2. once every tx_seen has arrived (a card's tx_confirmed is sent only
//     after its tx_seen, so a block mined sooner would time that wait
//     too), one block mined, and each payment's tx_confirmed timed from
//     btcd's announcement of the block (watch_announce.go) to the
//     webhook's arrival at its receiver.
//
// A webhook that has not come within notifyWaitMax is missing: the block
// goes on without it and the run fails.

// notifyBlockSample is what one block measured.
type notifyBlockSample struct {
	height    int64
	hash      string
	payments  int
	seen      []time.Duration // broadcast → tx_seen webhook, per payment that got one
	confirmed []time.Duration // announcement → tx_confirmed webhook, likewise
	missing   int             // webhooks expected and never received
}

// runBlocks mines and measures the blocks. Interrupted, it keeps what it
// measured.
func (n *notifyRun) runBlocks(ctx context.Context, res *notifyResult, stderr io.Writer) error {
	cfg := n.cfg
	for b := range cfg.watch.blocks {
		s, err := n.block(ctx)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted: reporting the blocks measured")
			return nil
		}
		if err != nil {
			return fmt.Errorf("block %d: %w", b+1, err)
		}
		res.blocks = append(res.blocks, s)
		fmt.Fprintf(stderr, "notify: block %d/%d (height %d): %d tx_confirmed webhooks, the last %s after its announcement; tx_seen p50 %s; missing %d\n",
			b+1, cfg.watch.blocks, s.height, len(s.confirmed), fmtLatency(slowest(s.confirmed)), fmtMicros(latencyOf(s.seen).P50), s.missing)
	}
	return nil
}

// block runs and measures one block (the steps above).
func (n *notifyRun) block(ctx context.Context) (notifyBlockSample, error) {
	var s notifyBlockSample
	pays, _, err := n.pay()
	if err != nil {
		return s, err
	}
	s.payments = len(pays)
	seen := n.want(pays, kindSeen)
	missing, err := n.tally.wait(ctx, keySet(seen), notifyWaitMax)
	if err != nil {
		return s, err
	}
	s.missing += missing
	for i, p := range pays {
		if a, ok := n.tally.arrived(seen[i]); ok {
			// A tx_seen can come before btcd's answer to the broadcast
			// reaches the bench: then time it from the asking.
			from := p.sent
			if a.at.Before(from) {
				from = p.asked
			}
			s.seen = append(s.seen, a.at.Sub(from))
		}
	}

	mining := time.Now()
	hashes, err := n.node.Mine(1)
	if err != nil {
		return s, err
	}
	s.hash = hashes[0]
	announced := n.ann.announced(s.hash, time.Now())
	confirmed := n.want(pays, kindConfirmed)
	missing, err = n.tally.wait(ctx, keySet(confirmed), notifyWaitMax)
	if err != nil {
		return s, err
	}
	s.missing += missing
	var arrivals []hookArrival
	for _, k := range confirmed {
		if a, ok := n.tally.arrived(k); ok {
			arrivals = append(arrivals, a)
		}
	}
	// The bench hears btcd's announcement on a connection of its own; a
	// loaded machine can deliver it after the server already sent a
	// webhook of the block. Then the announcement's time is known to be
	// late, and the block is timed from the moment it was asked for (an
	// upper bound of each latency), never from after its own webhook.
	for _, a := range arrivals {
		if a.at.Before(announced) {
			announced = mining
			break
		}
	}
	for _, a := range arrivals {
		s.confirmed = append(s.confirmed, a.at.Sub(announced))
		s.height = a.event.Height
		if a.event.BlockHash != s.hash {
			n.tally.wrongBlock++
		}
	}
	return s, nil
}

// want is the webhook of kind expected for each payment, on its
// account's channel, in the payments' order.
func (n *notifyRun) want(pays []*paidTx, kind string) []hookKey {
	keys := make([]hookKey, len(pays))
	for i, p := range pays {
		keys[i] = hookKey{channel: n.hooks[p.account], kind: kind, txid: p.txid, address: p.address}
	}
	return keys
}

func keySet(keys []hookKey) map[hookKey]bool {
	set := make(map[hookKey]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set
}

// slowest is the longest of ds, 0 for none.
func slowest(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
