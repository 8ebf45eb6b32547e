package btcdsource

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/chaincfg"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Defaults for the zero Options.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxConcurrent    = 4
	DefaultTxsPerAddressMax = 20_000
	DefaultIndexTxsMax      = 1_000_000
)

const (
	// indexAddressesMax bounds the addresses whose index is held,
	// besides the bound on the transaction IDs they hold together.
	indexAddressesMax = 10_000
	// blockHeightsMax bounds the block heights remembered by hash.
	blockHeightsMax = 10_000
)

// Options tune a Source. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// Network is the network of the addresses asked about and of btcd's
	// chain; "" is mainnet. chain.CheckNetwork tells whether btcd is on
	// it.
	Network chain.Network
	// Cert is a PEM certificate to trust for btcd's RPC server
	// (--chain-cert: btcd's own rpc.cert). Without it, the system's
	// roots decide.
	Cert []byte
	// Proxy is socks5://HOST:PORT (--chain-proxy, Tor): every request
	// goes through it, with the host name resolved by the proxy.
	Proxy string
	// Timeout bounds one request: the connection's dial when it needs
	// one, and the answer read whole. The caller's context bounds a call
	// of several requests.
	Timeout time.Duration
	// MaxConcurrent bounds the requests in flight to btcd at once.
	MaxConcurrent int
	// TxsPerAddressMax bounds the transactions read for one address,
	// confirmed and unconfirmed together. An address with more is an
	// *chain.UpstreamError saying so, never a history cut short.
	TxsPerAddressMax int
	// IndexTxsMax bounds the transaction IDs held in the addresses'
	// indexes together (32 bytes each); past it, the least recently
	// used address is forgotten.
	IndexTxsMax int
}

// Source is a chain.Source over the JSON-RPC of a btcd run with
// --addrindex and --txindex. It answers in Esplora's terms, as the
// Esplora client does; DESIGN.md says how each call maps onto btcd's
// methods and what it costs. It is safe for concurrent use.
type Source struct {
	spec             chain.SourceSpec
	params           *chaincfg.Params
	rpc              *rpcClient
	txsPerAddressMax int
	chunk            int // transactions one search asks for: searchChunk, less in tests
	indexes          *indexCache
	heights          *lru.Cache[string, int64] // block hash → height
	outputs          *outputsCache             // txid → its outputs (outputs.go)
	notify           *notifier                 // Notify and Watch (notify.go)
}

var _ chain.Source = (*Source)(nil)

// Open returns the Source for spec, a --chain value of kind btcd
// (btcd:https://USER:PASS@HOST:PORT; plain http only on a loopback
// address). It sends nothing: the first call is the first request, and
// a server calls chain.CheckNetwork before using it, and chain.Guard to
// put it behind the breaker. Its errors never show the password.
func Open(spec chain.SourceSpec, opts Options) (*Source, error) {
	u := spec.URL
	if spec.Kind != chain.SourceBtcd || u == nil || (u.Scheme != "https" && u.Scheme != "http") || u.Port() == "" {
		return nil, fmt.Errorf("%w: btcdsource: wants a btcd spec, btcd:https://USER:PASS@HOST:PORT", chain.ErrInvalidArgument)
	}
	_, hasPassword := u.User.Password()
	if !hasPassword || u.User.Username() == "" {
		return nil, fmt.Errorf("%w: btcdsource: the URL lacks btcd's RPC user and password", chain.ErrInvalidArgument)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("%w: btcdsource: plain http would send the RPC password in the clear; use https", chain.ErrInvalidArgument)
	}
	proxy, err := proxyURL(opts.Proxy)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := newTLSConfig(u.Scheme, opts)
	if err != nil {
		return nil, err
	}
	opts = withDefaults(opts)
	endpoint, err := newWSEndpoint(u, tlsConfig, proxy, opts.Timeout)
	if err != nil {
		return nil, err
	}
	heights, _ := lru.New[string, int64](blockHeightsMax)
	s := &Source{
		spec:   spec,
		params: opts.Network.OrMainnet().Params(),
		rpc: &rpcClient{
			endpoint:       endpoint,
			timeout:        opts.Timeout,
			slots:          make(chan struct{}, opts.MaxConcurrent),
			answerBytesMax: responseBytesMax,
		},
		txsPerAddressMax: opts.TxsPerAddressMax,
		chunk:            searchChunk,
		indexes:          newIndexCache(opts.IndexTxsMax, indexAddressesMax),
		heights:          heights,
		outputs:          newOutputsCache(outputsBytesMax),
	}
	s.notify = newNotifier(s, endpoint)
	return s, nil
}

// Close ends the source's connections to btcd: the reads' and the
// notifications' (their channel closes). Every later call fails.
func (s *Source) Close() error {
	s.rpc.held.close()
	s.notify.held.close()
	return nil
}

// String is the spec with the password replaced by "xxxxx": the form to
// log.
func (s *Source) String() string { return s.spec.String() }

func withDefaults(opts Options) Options {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.TxsPerAddressMax <= 0 {
		opts.TxsPerAddressMax = DefaultTxsPerAddressMax
	}
	if opts.IndexTxsMax <= 0 {
		opts.IndexTxsMax = DefaultIndexTxsMax
	}
	return opts
}

// tlsSessionsMax bounds the TLS sessions kept for resumption.
const tlsSessionsMax = 64

// newTLSConfig is TLS to btcd: trusting opts.Cert when given, else the
// system's roots. TLS sessions are resumed, so that a new connection
// (one for the reads and one for the notifications, and again after
// each drop) does not cost a full handshake: btcd's own certificate is
// on P-521, slow to verify.
func newTLSConfig(scheme string, opts Options) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(opts.Cert) > 0 {
		if scheme != "https" {
			return nil, fmt.Errorf("%w: btcdsource: a certificate to trust is for https", chain.ErrInvalidArgument)
		}
		pinned, err := chain.Reach{CertPEM: opts.Cert}.TLSConfig("")
		if err != nil {
			return nil, err
		}
		cfg = pinned
	}
	cfg.ClientSessionCache = tls.NewLRUClientSessionCache(tlsSessionsMax)
	return cfg, nil
}

// proxyURL is --chain-proxy parsed: nil for none.
func proxyURL(proxy string) (*url.URL, error) {
	if proxy == "" {
		return nil, nil
	}
	p, err := url.Parse(proxy)
	if err != nil || (p.Scheme != "socks5" && p.Scheme != "socks5h") || p.Port() == "" || (p.Path != "" && p.Path != "/") || p.RawQuery != "" {
		return nil, fmt.Errorf("%w: btcdsource: the proxy must be socks5://HOST:PORT", chain.ErrInvalidArgument)
	}
	return p, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
