package electrum_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/electrum"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/addrwatch/addrwatch/internal/socks5test"
)

// A server with its own certificate (electrums:) is reached when the
// certificate is given (--chain-cert), and refused without it or
// without TLS.
func TestTLSWithTheGivenCertificate(t *testing.T) {
	n := regtest.Shared(t)
	certPEM, tlsCfg, err := electrumtest.SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, n, electrumtest.Config{TLS: tlsCfg})
	ctx := context.Background()
	want, _, _ := n.Tip()

	trusting := open(t, srv.Addr(), true, chain.Reach{CertPEM: certPEM}, electrum.Options{})
	if tip, err := trusting.Tip(ctx); err != nil || tip.Height != want {
		t.Fatalf("with the certificate: %+v, %v", tip, err)
	}
	for name, src := range map[string]*electrum.Source{
		"without the certificate": open(t, srv.Addr(), true, chain.Reach{}, electrum.Options{}),
		"without TLS":             open(t, srv.Addr(), false, chain.Reach{CertPEM: certPEM}, electrum.Options{Timeout: 2 * time.Second}),
	} {
		if _, err := src.Tip(ctx); !errors.Is(err, chain.ErrUpstream) {
			t.Errorf("%s: %v, want an UpstreamError", name, err)
		}
	}
}

// Through --chain-proxy the connection goes to the SOCKS5 proxy, which
// is given the server's host name to resolve (an .onion's, here one
// under .invalid that this machine cannot resolve), TLS included.
func TestThroughTheSOCKS5Proxy(t *testing.T) {
	n := regtest.Shared(t)
	const host = "electrum.invalid"
	certPEM, tlsCfg, err := electrumtest.SelfSigned(host)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, n, electrumtest.Config{TLS: tlsCfg})
	proxyAddr, asked := socks5test.Serve(t, srv.Addr())
	_, port, _ := net.SplitHostPort(srv.Addr())
	src := open(t, net.JoinHostPort(host, port), true,
		chain.Reach{CertPEM: certPEM, Proxy: &url.URL{Scheme: "socks5", Host: proxyAddr}}, electrum.Options{})
	want, _, _ := n.Tip()
	if tip, err := src.Tip(context.Background()); err != nil || tip.Height != want {
		t.Fatalf("through the proxy: %+v, %v", tip, err)
	}
	if got := asked(); len(got) != 1 || got[0] != net.JoinHostPort(host, port) {
		t.Errorf("the proxy was asked for %v, want the server's name once", got)
	}
}

// After the server drops the connection the next call connects again;
// a call under way when it is dropped is asked again on the new one.
func TestReconnectsAfterTheServerDropsTheConnection(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	src := open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{})
	ctx := context.Background()
	for i := range 3 {
		if _, err := src.Tip(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		srv.DropConnections()
	}
	if got := srv.Requests("server.version"); got != 3 {
		t.Errorf("%d handshakes for three connections", got)
	}
}

// A server on another network answers its genesis block, so that
// chain.CheckNetwork names both; every other call fails.
func TestAServerOnAnotherNetworkIsRefused(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	src := open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{})
	testnet, err := electrum.Open(chain.SourceSpec{Kind: chain.SourceElectrum, Address: srv.Addr()}, chain.Reach{}, electrum.Options{Network: chain.Testnet})
	if err != nil {
		t.Fatal(err)
	}
	defer testnet.Close()
	ctx := context.Background()
	if err := chain.CheckNetwork(ctx, src, chain.Regtest); err != nil {
		t.Errorf("on its own network: %v", err)
	}
	err = chain.CheckNetwork(ctx, testnet, chain.Testnet)
	if !errors.Is(err, chain.ErrWrongNetwork) || !strings.Contains(err.Error(), n.Params().GenesisHash.String()) {
		t.Errorf("a regtest server taken for testnet: %v", err)
	}
	if _, err := testnet.Tip(ctx); !errors.Is(err, chain.ErrWrongNetwork) {
		t.Errorf("a call to a server on another network: %v", err)
	}
}
