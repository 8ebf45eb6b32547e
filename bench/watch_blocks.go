package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"
)

// One block of bench watch, in order:
//
//  1. A pause of a random length within the follower's cycle (the
//     mempool period, then a sweep as long as the last block's), so that
//     the mempool payment lands at a random moment of it, as a real one
//     would: the previous step ends just after a sweep.
//  2. --block-txs payments from the harness's wallet: to fresh addresses
//     nobody watches, then the block's share to watched addresses, spread
//     over the accounts; the last of them is the mempool probe, timed from
//     its broadcast until the owner API shows it in the mempool.
//  3. A wait until the follower stands still (the sweep that saw the
//     probe is over), a pause of a random part of a --chain-poll, then
//     one block mined. A follower that polls (an Esplora) asks the tip
//     every poll, and rest is found a fixed time after its last sweep:
//     without the pause every block would land just after a poll and
//     wait nearly a whole one, where a real block lands at any moment of
//     it. The block is timed from btcd's announcement until the owner API
//     shows every payment to a watched address confirmed in that block,
//     in every account it touched.
//  4. A wait until the follower has finished its sweep at that block. The
//     requests to the source (the follower's count, and the source's own
//     where it keeps one) and the server's CPU from just before the
//     block to here are the block's.
//
// A block with a leader kill (--leader-kills) has the leader killed
// right after it is mined, and started again once the records show the
// block: its latency takes in an election and the new leader's first
// sweep, and its requests and CPU, another process's, are not read.

// paymentSats is what each payment pays.
const paymentSats = 25_000

// payment is one transaction paying a watched address.
type payment struct {
	account *watchAccount
	address string
	txid    string
	asked   time.Time // when its broadcast was asked for
	sent    time.Time // when its broadcast returned
}

// blockSample is what one block measured.
type blockSample struct {
	height    int64
	hash      string
	touched   int // watched addresses its payments paid
	confirmed int // of them, those whose payments the records showed confirmed in the block
	// latency runs from btcd's announcement of the block to the last
	// account's record showing its payments confirmed in it.
	latency time.Duration
	// mempoolLatency runs from the probe's broadcast to its record in
	// the mempool.
	mempoolLatency time.Duration
	requests       requestCounts // the requests to the source for the block
	// sweeps is how many sweeps ended in the block's span: one, unless
	// the block's change was told in parts (an Electrum server tells
	// each address's new status apart, and each may be swept alone) or
	// the span also took in the end of a sweep the block did not cause,
	// whose requests and CPU then count in the block's.
	sweeps     int64
	cpuSeconds float64 // the server's CPU for the block
	cpuRead    bool
	killed     string // the node killed in the block, if one was
}

// faultNote says what fault the block had, for its progress line.
func (s blockSample) faultNote() string {
	if s.killed == "" {
		return ""
	}
	return ", leader " + s.killed + " killed"
}

// watchTarget is one watched address and the account whose card holds it.
type watchTarget struct {
	account *watchAccount
	address string
}

// interleave lists the accounts' addresses one account after another,
// round after round, so that consecutive payments go to different
// accounts.
func interleave(accounts []*watchAccount) []watchTarget {
	var out []watchTarget
	for round := 0; ; round++ {
		added := false
		for _, a := range accounts {
			if round < len(a.addresses) {
				out = append(out, watchTarget{a, a.addresses[round]})
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// block runs and measures one block (the steps above), killing the
// leader just after mining it when kill says so.
func (w *watchRun) block(ctx context.Context, kill bool, stderr io.Writer) (blockSample, error) {
	var s blockSample
	if err := sleepCtx(ctx, rand.N(w.mempoolPeriod()+w.sweepTook)); err != nil {
		return s, err
	}
	pays, sent, err := w.pay()
	if err != nil {
		return s, err
	}
	probe := pays[len(pays)-1]
	seen, _, err := waitRecord(ctx, w.c, w.cluster.public, probe.account, w.waitMax(), "the mempool probe "+probe.txid+" in the mempool",
		showsAll([]payment{probe.payment}, "mempool", ""))
	if err != nil {
		return s, err
	}
	s.mempoolLatency = seen.Sub(sent)
	probe.sawMempool = true
	if err := w.waitQuiet(ctx); err != nil {
		return s, err
	}
	if err := sleepCtx(ctx, rand.N(w.cfg.watch.chainPoll)); err != nil {
		return s, err
	}

	before, err := w.follower(ctx)
	if err != nil {
		return s, err
	}
	requestsBefore := w.requestsNow(before)
	cpuBefore, cpuOK := adminMetric(w.c, w.cfg, "process_cpu_seconds_total")
	hashes, err := w.node.Mine(1)
	if err != nil {
		return s, err
	}
	s.hash = hashes[0]
	announced := w.ann.announced(s.hash, time.Now())
	var killed *watchNode
	if kill {
		if killed, err = w.killLeader(ctx, stderr); err != nil {
			return s, err
		}
		s.killed = killed.id
	}
	done, confirmed, err := w.waitConfirmed(ctx, paymentsOf(pays), s.hash)
	if err != nil {
		return s, err
	}
	s.latency = done.Sub(announced)
	for _, p := range pays {
		p.sawConfirmed = slices.ContainsFunc(confirmed, func(c payment) bool { return c.txid == p.txid })
	}
	if killed != nil {
		if err := w.restart(ctx, killed, stderr); err != nil {
			return s, err
		}
	}
	after, err := w.waitTip(ctx, s.hash)
	if err != nil {
		return s, err
	}
	w.sweepTook = time.Since(announced)
	cpuAfter, cpuOK2 := adminMetric(w.c, w.cfg, "process_cpu_seconds_total")
	s.height = after.Tip.Height
	if killed == nil {
		s.requests, s.sweeps = w.requestsNow(after).since(requestsBefore), after.Sweeps-before.Sweeps
		s.cpuSeconds, s.cpuRead = cpuAfter-cpuBefore, cpuOK && cpuOK2
	}
	s.touched, s.confirmed = len(distinctAddresses(paymentsOf(pays))), len(distinctAddresses(confirmed))
	return s, nil
}

// pay sends the block's payments, the watched ones last, and returns
// those (noted for the audit) and when the last (the probe) was
// broadcast.
func (w *watchRun) pay() ([]*paidTx, time.Time, error) {
	watched := w.cfg.watch.watchedPerBlock()
	for range w.cfg.watch.blockTxs - watched {
		if _, err := w.node.Pay(randomRegtestAddress(), paymentSats); err != nil {
			return nil, time.Time{}, err
		}
	}
	pays := make([]*paidTx, watched)
	var sent time.Time
	for i := range pays {
		t := w.nextTarget()
		asked := time.Now()
		txid, err := w.node.Pay(t.address, paymentSats)
		if err != nil {
			return nil, time.Time{}, err
		}
		sent = time.Now()
		pays[i] = w.note(payment{account: t.account, address: t.address, txid: txid, asked: asked, sent: sent})
	}
	return pays, sent, nil
}

// waitConfirmed waits, for every account the payments touched at once,
// until its record shows its payments confirmed in block, and returns
// when the last account showed it and the payments the records showed
// so.
func (w *watchRun) waitConfirmed(ctx context.Context, pays []payment, block string) (time.Time, []payment, error) {
	byAccount := map[*watchAccount][]payment{}
	var accounts []*watchAccount
	for _, p := range pays {
		if _, ok := byAccount[p.account]; !ok {
			accounts = append(accounts, p.account)
		}
		byAccount[p.account] = append(byAccount[p.account], p)
	}
	shown := make([]time.Time, len(accounts))
	confirmed := make([][]payment, len(accounts))
	err := forEachWorker(len(accounts), func(i int) error {
		a := accounts[i]
		at, r, err := waitRecord(ctx, w.c, w.cluster.public, a, w.waitMax(), fmt.Sprintf("%d payments confirmed in %s", len(byAccount[a]), block),
			showsAll(byAccount[a], "confirmed", block))
		shown[i], confirmed[i] = at, r.showing(byAccount[a], "confirmed", block)
		return err
	})
	if err != nil {
		return time.Time{}, nil, err
	}
	return slices.MaxFunc(shown, time.Time.Compare), slices.Concat(confirmed...), nil
}

func paymentsOf(pays []*paidTx) []payment {
	out := make([]payment, len(pays))
	for i, p := range pays {
		out[i] = p.payment
	}
	return out
}

func distinctAddresses(pays []payment) map[string]bool {
	set := map[string]bool{}
	for _, p := range pays {
		set[p.address] = true
	}
	return set
}
