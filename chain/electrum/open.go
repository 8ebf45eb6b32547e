package electrum

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/chaincfg"
)

// Defaults for the zero Options.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultHistoryTxsMax = 10_000
	DefaultTxCacheBytes  = 64 << 20
	DefaultWatchMax      = 50_000
)

// idlePingAfter is how long the connection goes without a request
// before it is pinged: well within ElectrumX's ten minutes.
const idlePingAfter = 4 * time.Minute

// Options tune a Source. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// Network is the network of the addresses asked about; "" is
	// mainnet. A server whose genesis block is another network's answers
	// BlockHash(0) (so that chain.CheckNetwork names both) and fails
	// every other call.
	Network chain.Network
	// Timeout bounds one request: connecting, the TLS handshake, and
	// each request's answer. The caller's context bounds a call of
	// several requests.
	Timeout time.Duration
	// HistoryTxsMax bounds the transactions of one address the source
	// reads, confirmed and unconfirmed together: an address with more is
	// an *chain.UpstreamError saying so, never a history cut short. The
	// default is History's own ceiling (chain.HistoryOffsetCeiling).
	HistoryTxsMax int
	// TxCacheBytes bounds the raw transactions kept (a transaction's
	// content never changes under its ID), least recently used forgotten
	// first.
	TxCacheBytes int
	// WatchMax bounds the addresses Watch subscribes to (Electrum
	// servers bound a session's subscriptions too: ElectrumX and Fulcrum
	// by default at some tens of thousands).
	WatchMax int
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HistoryTxsMax <= 0 {
		o.HistoryTxsMax = DefaultHistoryTxsMax
	}
	if o.TxCacheBytes <= 0 {
		o.TxCacheBytes = DefaultTxCacheBytes
	}
	if o.WatchMax <= 0 {
		o.WatchMax = DefaultWatchMax
	}
	return o
}

// Source is a chain.Source over the Electrum protocol (electrs, Fulcrum,
// ElectrumX), and a chain.Notifier through its subscriptions. It keeps
// one connection, made on first use and again after it is lost, and
// answers in Esplora's terms; DESIGN.md says how each call maps onto
// Electrum's methods and what it costs. It is safe for concurrent use.
type Source struct {
	spec   chain.SourceSpec
	params *chaincfg.Params
	opts   Options
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	tls    *tls.Config // nil: plain TCP (electrum:)
	// lineMax bounds a line from the server: lineBytesMax, less in
	// tests.
	lineMax int
	// pingEvery is how long the connection may go without a request
	// before it is pinged: idlePingAfter, less in tests.
	pingEvery time.Duration

	// dialLock is held while a connection is made, so that concurrent
	// calls share one attempt.
	dialLock chan struct{}

	mu      sync.Mutex
	cur     *session // nil before the first connection
	closed  bool
	dialGen uint64 // connection attempts made
	dialErr error  // the last attempt's failure, nil when it succeeded

	txs     *txCache
	headers *headerCache
	watch   *watcher
}

var (
	_ chain.Source   = (*Source)(nil)
	_ chain.Notifier = (*Source)(nil)
)

// Open returns the Source for spec, a --chain value of kind electrum
// (electrum:HOST:PORT, or electrums:HOST:PORT for TLS with the system's
// roots and reach's certificate), reached as reach says (--chain-proxy:
// through SOCKS5, the host name resolved by the proxy). It sends
// nothing: the first call connects. A server calls chain.CheckNetwork
// before using it, and chain.Guard to put it behind the breaker; Close
// ends its connection.
func Open(spec chain.SourceSpec, reach chain.Reach, opts Options) (*Source, error) {
	if spec.Kind != chain.SourceElectrum {
		return nil, fmt.Errorf("%w: electrum: wants an electrum spec, electrum:HOST:PORT or electrums:HOST:PORT", chain.ErrInvalidArgument)
	}
	host, port, err := net.SplitHostPort(spec.Address)
	if err != nil || host == "" || port == "" {
		return nil, fmt.Errorf("%w: electrum: wants HOST:PORT", chain.ErrInvalidArgument)
	}
	dial, err := reach.DialContext()
	if err != nil {
		return nil, err
	}
	s := &Source{
		spec:      spec,
		params:    opts.Network.OrMainnet().Params(),
		opts:      opts.withDefaults(),
		dial:      dial,
		dialLock:  make(chan struct{}, 1),
		lineMax:   lineBytesMax,
		pingEvery: idlePingAfter,
	}
	if spec.TLS {
		if s.tls, err = reach.TLSConfig(host); err != nil {
			return nil, err
		}
	}
	s.txs = newTxCache(s.opts.TxCacheBytes)
	s.headers = newHeaderCache()
	s.watch = newWatcher()
	return s, nil
}

// String is the spec as --chain takes it: the form to log.
func (s *Source) String() string { return s.spec.String() }

// Close ends the connection and its notifications; every later call
// fails.
func (s *Source) Close() error {
	s.mu.Lock()
	s.closed = true
	cur := s.cur
	s.mu.Unlock()
	if cur != nil {
		cur.close(errClosed)
	}
	return nil
}
