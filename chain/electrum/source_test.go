package electrum_test

import (
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/electrum"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

func TestMain(m *testing.M) { regtest.Main(m) }

// serve starts an Electrum server over the node for the test.
func serve(t *testing.T, n *regtest.Node, cfg electrumtest.Config) *electrumtest.Server {
	t.Helper()
	cfg.RPC = n.Client()
	srv, err := electrumtest.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// open is a Source for the server at addr, on regtest, closed with the
// test.
func open(t *testing.T, addr string, tls bool, reach chain.Reach, opts electrum.Options) *electrum.Source {
	t.Helper()
	opts.Network = chain.Regtest
	src, err := electrum.Open(chain.SourceSpec{Kind: chain.SourceElectrum, Address: addr, TLS: tls}, reach, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// The conformance suite every source passes, over an Electrum server of
// the btcd regtest node.
func TestConformance(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	sourcetest.Run(t, open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{}), sourcetest.RegtestChain(t, n))
}
