package watch

import (
	"context"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/btcdsource"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

func TestMain(m *testing.M) { regtest.Main(m) }

// A follower over btcd, told of changes by its websocket notifications,
// reads every watched address once when it starts, and then only the
// address a payment touched: once when the payment enters the mempool,
// once when its block confirms it. The addresses it does not touch are
// not read again, block or no block.
func TestAFollowerOverBtcdReadsOnlyTheTouchedAddress(t *testing.T) {
	n := regtest.Shared(t)
	var watched []string
	for range 3 {
		k, err := n.NewKey(regtest.P2WPKH)
		if err != nil {
			t.Fatal(err)
		}
		watched = append(watched, k.Address)
	}
	r := n.RPC()
	src, err := btcdsource.Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: r.URL()}, btcdsource.Options{Network: chain.Regtest, Cert: r.Cert})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	s := newTestStoreOn(t, chain.Regtest, map[string][]string{"acct": watched})
	f := New(chain.Guard(src, 0, 0), s, Options{Poll: 20 * time.Millisecond, FullEvery: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first sweep", func() bool { return f.Stats().Addresses == 3 })

	paid := watched[1]
	txid, err := n.Pay(paid, 40_000)
	if err != nil {
		t.Fatal(err)
	}
	// A sweep's addresses count once it ends, after its observations.
	waitFor(t, "the payment seen in the mempool", func() bool {
		tx := s.tx("acct", paid, txid)
		return tx != nil && tx.State == actors.TxMempool && f.Stats().Addresses > 3
	})
	if got := f.Stats().Addresses; got != 4 {
		t.Errorf("%d addresses read after a payment to one of three, want 4", got)
	}
	mined, err := n.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the payment confirmed in its block", func() bool {
		tx := s.tx("acct", paid, txid)
		return tx != nil && tx.State == actors.TxConfirmed && tx.BlockHash == mined[0] && f.Stats().Addresses > 4
	})
	if got := f.Stats().Addresses; got != 5 {
		t.Errorf("%d addresses read after the payment's block, want 5", got)
	}
}
