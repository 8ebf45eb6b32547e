package sourcetest

import (
	"testing"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// RegtestChain makes on a btcd regtest node the chain the suite is told
// about: a busy address (bech32) paid 30 times over 8 blocks, several a
// block, that spent 5 times with change to itself; a pending address
// (base58) with two confirmed payments, and in the mempool a payment,
// its spend, and that spend's spend replaced by one paying more; and an
// address never used. Every source over the node (btcd's own, an
// Electrum server of it) is checked on this chain.
func RegtestChain(t *testing.T, n *regtest.Node) Chain {
	t.Helper()
	key := func(k *regtest.Key, err error) *regtest.Key {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	txid := func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	mine := func() {
		t.Helper()
		if _, err := n.Mine(1); err != nil {
			t.Fatal(err)
		}
	}
	busy, pending, unused, elsewhere := key(n.NewKey(regtest.P2WPKH)), key(n.NewKey(regtest.P2PKH)), key(n.NewKey(regtest.P2WPKH)), key(n.NewKey(regtest.P2WPKH))
	for i := range 30 {
		txid(busy.Fund(int64(20_000 + 100*i)))
		if i%4 == 3 {
			mine()
		}
	}
	mine()
	for range 5 {
		txid(busy.Send(elsewhere.Address, 3_000, 500))
	}
	mine()
	txid(pending.Fund(50_000))
	txid(pending.Fund(60_000))
	mine()
	txid(pending.Fund(70_000))
	txid(pending.Send(elsewhere.Address, 10_000, 1_000))
	replaced := txid(pending.Send(elsewhere.Address, 11_000, 1_000))
	txid(pending.Replace(replaced, 4_000))
	return Chain{
		Busy: busy.Address, Pending: pending.Address, Unused: unused.Address,
		Pay:   n.Pay,
		Mine:  func() error { _, err := n.Mine(1); return err },
		Reorg: func(depth int) error { _, err := n.Reorg(depth); return err },
	}
}

// Must returns a func that gives v of a (v, err) call, failing t on
// err: Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH)).
func Must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
