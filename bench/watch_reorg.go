package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// One reorg of bench watch (--reorgs), after a block:
//
//  1. Three payments to watched addresses, two from keys of bench's own
//     (regtest.Key, which can cancel a payment by spending its coin
//     again) and one from the harness's wallet, and a block that
//     confirms them; bench waits for the records to show them confirmed.
//  2. A fourth payment, from a third key, that the records show in the
//     mempool.
//  3. btcd's invalidateblock on the newest block, or the newest two
//     (every other reorg), whose transactions go back to the mempool.
//  4. The first key's payment and the fourth are cancelled (spent again
//     back to their keys), and a longer branch is mined: a block of the
//     mempool but the wallet's payment, then empty ones.
//
// So one payment is confirmed again in the branch (in another block), one
// is reorged out for good, one is back in the mempool until the next
// block confirms it, and one never confirms (dropped); with two blocks
// invalidated, the previous block's payments are confirmed again too.
// bench waits for the records to show the first three so (the reorg's
// latency, from the branch's last block), and the audit at the end
// checks every payment against btcd.

// Fees of a key's payment and of its cancellation: the cancellation
// must pay more than the payment by btcd's minimum relay fee for its
// size (BIP 125), at a higher rate.
const (
	keyPaymentFee = 1_000
	keyCancelFee  = 5_000
	keyFundSats   = 100_000
)

// keysPerReorg: the payment confirmed again, the one cancelled after
// confirming, the one cancelled in the mempool.
const keysPerReorg = 3

// reorgCheckMax bounds the wait for the records to show a reorg: far
// more than the follower needs; past it the reorg counts as unseen and
// the audit says what the records show.
const reorgCheckMax = time.Minute

// reorgSample is what one reorg measured.
type reorgSample struct {
	depth int
	// latency runs from the branch's last block mined until the records
	// showed the reorg (0 when they did not within reorgCheckMax).
	latency time.Duration
	seen    bool
}

// fundReorgKeys makes and funds the keys the reorgs pay from, and mines
// their funding two blocks deep, so that no reorg (at most two blocks)
// takes it away.
func (w *watchRun) fundReorgKeys() error {
	for range w.cfg.watch.reorgs * keysPerReorg {
		k, err := w.node.NewKey(regtest.P2WPKH)
		if err != nil {
			return err
		}
		if _, err := k.Fund(keyFundSats); err != nil {
			return err
		}
		w.keys = append(w.keys, k)
	}
	if _, err := w.node.Mine(1); err != nil {
		return err
	}
	_, err := w.node.MineEmpty(1)
	return err
}

// nextTarget is the watched address the next payment goes to.
func (w *watchRun) nextTarget() watchTarget {
	t := w.targets[w.next%len(w.targets)]
	w.next++
	return t
}

// keyPay pays the next target from k and notes the payment for the audit.
func (w *watchRun) keyPay(k *regtest.Key) (*paidTx, error) {
	t := w.nextTarget()
	txid, err := k.Send(t.address, paymentSats, keyPaymentFee)
	if err != nil {
		return nil, err
	}
	return w.note(payment{account: t.account, address: t.address, txid: txid}), nil
}

// reorg runs reorg number n (from 0), the steps above.
func (w *watchRun) reorg(ctx context.Context, n int, stderr io.Writer) (reorgSample, error) {
	s := reorgSample{depth: 1 + n%2}
	keys := w.keys[n*keysPerReorg : (n+1)*keysPerReorg]
	again, err := w.keyPay(keys[0])
	if err != nil {
		return s, err
	}
	gone, err := w.keyPay(keys[1])
	if err != nil {
		return s, err
	}
	t := w.nextTarget()
	txid, err := w.node.Pay(t.address, paymentSats)
	if err != nil {
		return s, err
	}
	left := w.note(payment{account: t.account, address: t.address, txid: txid})
	hashes, err := w.node.Mine(1)
	if err != nil {
		return s, err
	}
	if _, _, err := w.waitConfirmed(ctx, []payment{again.payment, gone.payment, left.payment}, hashes[0]); err != nil {
		return s, err
	}
	again.sawConfirmed, gone.sawConfirmed, left.sawConfirmed = true, true, true
	dropped, err := w.keyPay(keys[2])
	if err != nil {
		return s, err
	}
	if _, _, err := waitRecord(ctx, w.c, w.cluster.public, dropped.account, w.waitMax(), "the payment "+dropped.txid+" in the mempool",
		showsAll([]payment{dropped.payment}, "mempool", "")); err != nil {
		return s, err
	}
	dropped.sawMempool = true

	height, _, err := w.node.Tip()
	if err != nil {
		return s, err
	}
	first, err := w.node.BlockHash(height - int64(s.depth) + 1)
	if err != nil {
		return s, err
	}
	if err := w.node.Invalidate(first); err != nil {
		return s, err
	}
	if _, err := keys[1].Cancel(gone.txid, keyCancelFee); err != nil {
		return s, err
	}
	if _, err := keys[2].Cancel(dropped.txid, keyCancelFee); err != nil {
		return s, err
	}
	branch, err := w.node.MineWithout([]string{left.txid})
	if err != nil {
		return s, err
	}
	if _, err := w.node.MineEmpty(s.depth); err != nil {
		return s, err
	}
	mined := time.Now()
	checks := []struct {
		p            *paidTx
		state, block string
	}{{again, "confirmed", branch}, {gone, "reorged", ""}, {left, "reorged", ""}, {dropped, "dropped", ""}}
	s.seen = true
	for _, c := range checks {
		_, _, err := waitRecord(ctx, w.c, w.cluster.public, c.p.account, reorgCheckMax, fmt.Sprintf("%s %s %s after the reorg", c.p.txid, c.state, c.block),
			showsAll([]payment{c.p.payment}, c.state, c.block))
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(stderr, "watch: reorg %d: %v\n", n+1, err)
			s.seen = false
		}
	}
	if s.seen {
		s.latency = time.Since(mined)
	}
	return s, nil
}
