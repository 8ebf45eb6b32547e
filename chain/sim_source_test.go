package chain

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// The sim changes only when its tip moves: within one block, every
// address shows the same, and a transaction of block h shows from the
// first second of h on.
func TestTheSimChangesOnlyWhenItsTipMoves(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for _, addr := range simFixtures {
		c, _ := simClient(t, simNow)
		txs, err := c.ChainTxs(ctx, addr, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range txs[:min(3, len(txs))] {
			first := time.Unix(simGenesisUnix+tx.BlockHeight*simBlockSeconds, 0)
			last := first.Add(simBlockSeconds*time.Second - time.Second)
			early, _ := simClient(t, first)
			late, _ := simClient(t, last)
			a, b := simSight(t, early, addr), simSight(t, late, addr)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s shows differently at the first (%v) and the last second (%v) of block %d", addr, first, last, tx.BlockHeight)
			}
			if !containsTx(a.recent, tx.TxID) {
				t.Fatalf("%s: transaction %s of block %d is not shown at the block's first second", addr, tx.TxID, tx.BlockHeight)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no fixture had a confirmed transaction to check")
	}
}

type simSeen struct {
	stats   AddressStats
	mempool []Tx
	recent  []Tx
	tip     BlockRef
}

func simSight(t *testing.T, c *Client, addr string) simSeen {
	t.Helper()
	ctx := context.Background()
	var s simSeen
	var err error
	if s.stats, err = c.AddressStats(ctx, addr); err != nil {
		t.Fatal(err)
	}
	if s.mempool, err = c.MempoolTxs(ctx, addr); err != nil {
		t.Fatal(err)
	}
	if s.recent, err = c.ChainTxs(ctx, addr, ""); err != nil {
		t.Fatal(err)
	}
	if s.tip, err = c.Tip(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func containsTx(txs []Tx, txid string) bool {
	for _, tx := range txs {
		if tx.TxID == txid {
			return true
		}
	}
	return false
}

// A SimSource tells its follower of each new block, naming every address,
// and of nothing while the tip stays put.
func TestASimSourceNotifiesEveryNewBlock(t *testing.T) {
	var now atomic.Int64
	now.Store(simNow.Unix())
	src := NewSimSource(NewSim(func() time.Time { return time.Unix(now.Load(), 0) }), ClientOptions{})
	var _ Notifier = src
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := src.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}

	select {
	case c := <-changes:
		t.Fatalf("told of %+v while the tip stayed at %d", c, before.Height)
	case <-time.After(2*SimTipEvery + SimTipEvery/2):
	}

	now.Add(simBlockSeconds)
	var c Change
	select {
	case c = <-changes:
	case <-time.After(10 * SimTipEvery):
		t.Fatal("no change told after a new block")
	}
	after, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tip != after || after.Height != before.Height+1 || !c.All {
		t.Fatalf("told %+v; the tip went from %+v to %+v", c, before, after)
	}
	if err := src.Watch(ctx, []string{simFixtures[0]}); err != nil {
		t.Fatal(err)
	}

	cancel()
	for range changes {
	}
}
