package main

import (
	"fmt"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/btcdsource"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/chain/esploratest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// The chain sources bench watch can make the servers follow (--source).
// Every one serves the same regtest chain: btcd itself, or a test server
// of another protocol over it, run in bench's own process. Those count
// the requests they answer, so bench reads what a block cost the source
// at the source; btcd counts none, and there the follower's own count
// of its reads stands for it.
const (
	watchSourceBtcd     = "btcd"
	watchSourceElectrum = "electrum"
	watchSourceEsplora  = "esplora"
)

var watchSources = []string{watchSourceBtcd, watchSourceElectrum, watchSourceEsplora}

// testServerHost is the address the test servers listen on and their
// certificates name.
const testServerHost = "127.0.0.1"

// watchSource is the chain source of a run: what the servers are told
// to follow, the certificate they pin, and how many requests it has
// answered, when it counts them.
type watchSource struct {
	name     string               // as --source names it
	spec     string               // the servers' --chain
	cert     []byte               // PEM, the servers' --chain-cert
	requests func() (int64, bool) // so far; false when the source keeps no count
	close    func()
}

// startWatchSource starts the source --source names over node. Each
// test server speaks TLS with a self-signed certificate of its own (made
// by electrumtest, for any test server), as an owner's btcd does, so
// every source is reached over TLS with a pinned certificate.
func startWatchSource(name string, node *regtest.Node) (*watchSource, error) {
	rpc := node.RPC()
	noCount := func() (int64, bool) { return 0, false }
	switch name {
	case watchSourceBtcd:
		return &watchSource{name: name, spec: "btcd:" + rpc.URL().String(), cert: rpc.Cert, requests: noCount, close: func() {}}, nil
	case watchSourceElectrum:
		cert, tlsConfig, err := electrumtest.SelfSigned(testServerHost)
		if err != nil {
			return nil, err
		}
		srv, err := electrumtest.Start(electrumtest.Config{RPC: node.Client(), TLS: tlsConfig})
		if err != nil {
			return nil, fmt.Errorf("the Electrum test server: %w", err)
		}
		count := func() (int64, bool) { return int64(srv.AllRequests()), true }
		return &watchSource{name: name, spec: "electrums:" + srv.Addr(), cert: cert, requests: count, close: func() { srv.Close() }}, nil
	case watchSourceEsplora:
		// The Esplora test server answers from btcd's own source, as
		// an owner's electrs answers from their bitcoind.
		b, err := btcdsource.Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: rpc.URL()}, btcdsource.Options{Network: chain.Regtest, Cert: rpc.Cert})
		if err != nil {
			return nil, err
		}
		cert, tlsConfig, err := electrumtest.SelfSigned(testServerHost)
		if err != nil {
			b.Close()
			return nil, err
		}
		srv, err := esploratest.Start(esploratest.Config{Source: b, TLS: tlsConfig})
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("the Esplora test server: %w", err)
		}
		count := func() (int64, bool) { return srv.Requests(), true }
		return &watchSource{name: name, spec: "esplora:" + srv.URL(), cert: cert, requests: count, close: func() { srv.Close(); b.Close() }}, nil
	}
	return nil, fmt.Errorf("no source %q", name)
}

// requestCounts are the requests made to the source: as the leader's
// follower counted its reads (chain.Source calls, whatever they cost on
// the wire), and as the source counted the requests it answered (every
// request of every node: tip polls, subscriptions, the wire's requests
// behind one call), when it keeps a count. Read at one moment, or the
// difference over a span.
type requestCounts struct {
	follower int64
	source   int64
	counted  bool // the source keeps a count
}

// requestsNow is where the counts stand, st being the follower's stats
// just read.
func (w *watchRun) requestsNow(st followerStats) requestCounts {
	n, counted := w.source.requests()
	return requestCounts{follower: st.Requests, source: n, counted: counted}
}

// since is what the counts grew by from earlier.
func (r requestCounts) since(earlier requestCounts) requestCounts {
	return requestCounts{follower: r.follower - earlier.follower, source: r.source - earlier.source, counted: r.counted && earlier.counted}
}

// atSource is the requests to the source: its own count, or the
// follower's where it keeps none.
func (r requestCounts) atSource() int64 {
	if r.counted {
		return r.source
	}
	return r.follower
}
