// Package egress sends the HTTP requests that an owner's settings point at
// a URL of their choosing (webhooks, ntfy). Such a URL is a way into the
// network the node sits in, so every request here resolves its host once,
// refuses any address that is not public (ranges.go) unless the operator
// allowed private ones, connects to exactly the addresses it checked,
// follows no redirect, uses no proxy, bounds its time and the answer it
// reads, and is counted against its account's and its endpoint's budgets.
package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Defaults and bounds of a Config.
const (
	ConnectTimeoutDefault = 5 * time.Second
	TotalTimeoutDefault   = 15 * time.Second
	// AnswerBytesDefault is how much of an answer's body is kept: enough
	// for an error message in the delivery log, no more.
	AnswerBytesDefault = 4 << 10
	answerBytesMax     = 64 << 10
	// answerHeaderBytesMax bounds the status line and headers of an
	// answer, which net/http would otherwise read up to 1 MiB of.
	answerHeaderBytesMax = 16 << 10
	userAgent            = "addrwatch-notify/1"
)

// Resolver looks a host name up; *net.Resolver is one. Tests give one
// whose answers they choose.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens a TCP connection to an IP address and port; *net.Dialer is
// one. It is only ever asked for an address that passed the checks.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config sets a Client up; the zero value is the production setting.
type Config struct {
	// AllowPrivate lets requests reach loopback, private, link-local and
	// shared addresses (the server's --notify-allow-private, for labs).
	AllowPrivate bool
	// Resolver is net.DefaultResolver when nil.
	Resolver Resolver
	// Dialer is a net.Dialer when nil.
	Dialer Dialer
	// TLS is the base TLS configuration (its RootCAs, for a test's CA);
	// nil for the system's roots. ServerName is always the URL's host.
	TLS *tls.Config
	// ConnectTimeout bounds resolving the host, connecting and the TLS
	// handshake; TotalTimeout bounds the whole request and its answer.
	ConnectTimeout time.Duration
	TotalTimeout   time.Duration
	// AnswerBytes is how much of an answer's body is read; the rest is
	// never read.
	AnswerBytes int
	// AccountRate and EndpointRate are the budgets (limits.go).
	AccountRate  Rate
	EndpointRate Rate
	// Now is the clock of the rate limits and of latencies.
	Now func() time.Time
}

// Client sends requests to owners' URLs. It is safe for concurrent use,
// and its connections are kept for reuse: each was opened to an address
// that passed the checks, and each request checks its host's addresses
// again before it may use one.
type Client struct {
	cfg    Config
	http   *http.Client
	limits *Limits
}

// Request is one POST to an owner's URL.
type Request struct {
	URL string
	// Account and Endpoint name the budgets the request is counted
	// against: the account it is for and its endpoint (the channel's id).
	Account  string
	Endpoint string
	Header   http.Header
	Body     []byte
}

// Answer is what the receiver said. A 3xx is an answer like any other:
// the redirect is never followed.
type Answer struct {
	Status int
	// Body is the answer's first AnswerBytes bytes; Truncated says there
	// was more, which was not read.
	Body      []byte
	Truncated bool
	// Header is the answer's header (at most answerHeaderBytesMax of it
	// is read): a sender reads Retry-After from it.
	Header http.Header
	// Latency runs from the start of the lookup to the end of the
	// answer's body (or of its first AnswerBytes bytes).
	Latency time.Duration
}

// New makes a Client from cfg, with the defaults filled in.
func New(cfg Config) (*Client, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dialer == nil {
		cfg.Dialer = &net.Dialer{KeepAlive: 30 * time.Second}
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = ConnectTimeoutDefault
	}
	if cfg.TotalTimeout <= 0 {
		cfg.TotalTimeout = TotalTimeoutDefault
	}
	if cfg.AnswerBytes <= 0 {
		cfg.AnswerBytes = AnswerBytesDefault
	}
	if cfg.AnswerBytes > answerBytesMax {
		return nil, fmt.Errorf("egress: AnswerBytes %d is over %d", cfg.AnswerBytes, answerBytesMax)
	}
	if cfg.AccountRate == (Rate{}) {
		cfg.AccountRate = AccountRateDefault
	}
	if cfg.EndpointRate == (Rate{}) {
		cfg.EndpointRate = EndpointRateDefault
	}
	for _, r := range []Rate{cfg.AccountRate, cfg.EndpointRate} {
		if r.PerSecond <= 0 || r.Burst < 1 {
			return nil, fmt.Errorf("egress: a rate needs PerSecond > 0 and Burst >= 1, not %+v", r)
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLS != nil {
		tlsConfig = cfg.TLS.Clone()
		tlsConfig.MinVersion = max(tlsConfig.MinVersion, tls.VersionTLS12)
	}
	c := &Client{cfg: cfg, limits: NewLimits(cfg.AccountRate, cfg.EndpointRate, cfg.Now)}
	transport := &http.Transport{
		// Never a proxy, whatever HTTPS_PROXY says: a proxy would do its
		// own lookup of the host, after our check.
		Proxy:                  nil,
		DialContext:            c.dialChecked,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: answerHeaderBytesMax,
		// Asking for gzip would let a small answer expand into a large
		// one before the cap: take the bytes as they come.
		DisableCompression: true,
	}
	c.http = &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return c, nil
}

// Post sends req and returns the receiver's answer, or an *Error that says
// why there is none. It never retries: the caller schedules another try.
func (c *Client) Post(ctx context.Context, req Request) (Answer, error) {
	target, err := ParseTarget(req.URL)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Target = Redact(req.URL)
		}
		return Answer{}, err
	}
	if wait := c.limits.Take(req.Account, req.Endpoint); wait > 0 {
		return Answer{}, &Error{Class: ClassRateLimited, Target: target.String(), RetryAfter: wait,
			Detail: fmt.Sprintf("too many requests for this account or endpoint; try again in %s", wait)}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.TotalTimeout)
	defer cancel()
	start := c.cfg.Now()
	addrs, err := c.resolve(ctx, target)
	if err != nil {
		return Answer{}, err
	}
	ctx = context.WithValue(ctx, checkedKey{}, checked{hostPort: target.hostPort(), addrs: addrs})
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, target.URL().String(), bytes.NewReader(req.Body))
	if err != nil {
		return Answer{}, classify(target, err)
	}
	hreq.Header = req.Header.Clone()
	if hreq.Header == nil {
		hreq.Header = http.Header{}
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", userAgent)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return Answer{}, classify(target, err)
	}
	defer resp.Body.Close()
	// The status is the answer; the body is kept for the delivery log
	// only, so a body that breaks off or outlasts the timeout leaves
	// what was read and changes nothing else.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.cfg.AnswerBytes)+1))
	answer := Answer{Status: resp.StatusCode, Body: body, Header: resp.Header}
	if len(body) > c.cfg.AnswerBytes {
		answer.Body, answer.Truncated = body[:c.cfg.AnswerBytes], true
	}
	answer.Latency = c.cfg.Now().Sub(start)
	return answer, nil
}

// Limits are the budgets Post counts each request against: a caller
// asks them (Limits.Room) how many requests it may start now.
func (c *Client) Limits() *Limits { return c.limits }

// Check is what Post checks of raw before it sends anything: the URL's
// syntax, and every address its host resolves to now. The owner API asks
// it when a channel is made, so a refused URL is refused at once with its
// reason; Post checks again at every send, since a name's answer may
// change.
func (c *Client) Check(ctx context.Context, raw string) error {
	target, err := ParseTarget(raw)
	if err != nil {
		return err
	}
	_, err = c.resolve(ctx, target)
	return err
}
