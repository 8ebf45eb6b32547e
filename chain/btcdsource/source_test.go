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
	return openVia(t, n, n.RPC().Host, opts)
}

// openVia is open with the node reached at host (a relay to it).
func openVia(t *testing.T, n *regtest.Node, host string, opts Options) *Source {
	t.Helper()
	r := n.RPC()
	u := r.URL()
	u.Host = host
	opts.Network, opts.Cert = chain.Regtest, r.Cert
	src, err := Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: u}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() }) // btcd serves 25 websockets at most
	return src
}

// paidKey is a new key paid payments times, a block mined after every
// perBlock payments, different amounts each.
func paidKey(t *testing.T, n *regtest.Node, payments, perBlock int) *regtest.Key {
	t.Helper()
	k := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	for i := range payments {
		sourcetest.Must[string](t)(k.Fund(int64(10_000 + i)))
		if i%perBlock == perBlock-1 {
			sourcetest.Must[[]string](t)(n.Mine(1))
		}
	}
	return k
}

// The conformance suite every source passes, over btcd on regtest.
func TestConformance(t *testing.T) {
	n := regtest.Shared(t)
	sourcetest.Run(t, open(t, n, Options{}), sourcetest.RegtestChain(t, n))
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
	sourcetest.Run(t, src, sourcetest.RegtestChain(t, n))
}
