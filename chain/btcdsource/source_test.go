package btcdsource

import (
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

func TestMain(m *testing.M) { regtest.Main(m) }

// open is a Source over the node, TLS trusting the node's certificate.
func open(t *testing.T, n *regtest.Node, opts Options) *Source {
	t.Helper()
	r := n.RPC()
	opts.Network, opts.Cert = chain.Regtest, r.Cert
	src, err := Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: r.URL()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// paidKey is a new key paid payments times, a block mined after every
// perBlock payments, different amounts each.
func paidKey(t *testing.T, n *regtest.Node, payments, perBlock int) *regtest.Key {
	t.Helper()
	k := must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	for i := range payments {
		must[string](t)(k.Fund(int64(10_000 + i)))
		if i%perBlock == perBlock-1 {
			must[[]string](t)(n.Mine(1))
		}
	}
	return k
}

// scenario makes the chain the conformance suite is told about: a busy
// address (bech32) paid 30 times over 8 blocks, several a block, that
// spent 5 times with change to itself; a pending address (base58) with
// two confirmed payments, and in the mempool a payment, its spend, and
// that spend's spend replaced by one paying more; and an address never
// used.
func scenario(t *testing.T, n *regtest.Node) sourcetest.Chain {
	t.Helper()
	key := must[*regtest.Key](t)
	txid := must[string](t)
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
	return sourcetest.Chain{
		Busy: busy.Address, Pending: pending.Address, Unused: unused.Address,
		Pay:   n.Pay,
		Mine:  func() error { _, err := n.Mine(1); return err },
		Reorg: func(depth int) error { _, err := n.Reorg(depth); return err },
	}
}

// The conformance suite every source passes, over btcd on regtest.
func TestConformance(t *testing.T) {
	n := regtest.Shared(t)
	sourcetest.Run(t, open(t, n, Options{}), scenario(t, n))
}

// The suite again, with histories read 4 transactions an answer: every
// read of the busy address takes many answers, each starting at the
// last one's last transaction, and the pending address's mempool is cut
// by an answer's end, so it is asked for again whole. (The lower bound
// keeps a read that never ends short, should one.)
func TestConformanceReadingInSmallChunks(t *testing.T) {
	n := regtest.Shared(t)
	src := open(t, n, Options{TxsPerAddressMax: 1_000})
	src.chunk = 4
	sourcetest.Run(t, src, scenario(t, n))
}
