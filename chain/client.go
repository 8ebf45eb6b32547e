package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Errors a caller tells apart with errors.Is.
var (
	// ErrNotFound: the upstream does not know the transaction (404 on
	// /tx/{txid}), or the string cannot be a transaction ID at all.
	ErrNotFound = errors.New("chain: transaction not found")
	// ErrUpstream: the upstream gave no usable answer: a timeout, a
	// transport error, 429 or 5xx after the retries, another non-2xx
	// status, a body over the size limit, or malformed JSON. The error is
	// an *UpstreamError. Callers report the history as degraded.
	ErrUpstream = errors.New("chain: upstream unavailable")
	// ErrInvalidArgument: the caller passed something no request can be
	// built from (an empty address, a limit out of range). A programming
	// error in the caller; nothing was sent upstream.
	ErrInvalidArgument = errors.New("chain: invalid argument")
)

// UpstreamError says why one upstream call failed. errors.Is(err,
// ErrUpstream) is true for it; Unwrap gives the cause (for example
// context.DeadlineExceeded on a timeout). The message names the endpoint
// kind, never the address, and never includes the upstream's body.
type UpstreamError struct {
	Op         string        // "address", "chain txs", "mempool txs" or "tx"
	Status     int           // HTTP status of the last attempt; 0 if none arrived
	RetryAfter time.Duration // the last Retry-After the upstream sent, if any
	Attempts   int           // requests made, retries included
	Err        error         // the cause when it was not an HTTP status
}

func (e *UpstreamError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chain: upstream %s", e.Op)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUpstream) true.
func (e *UpstreamError) Is(target error) bool { return target == ErrUpstream }

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *UpstreamError) Unwrap() error { return e.Err }

// Defaults for the zero ClientOptions.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultMaxConcurrent = 8
	DefaultRetries       = 2
	DefaultBackoffBase   = 250 * time.Millisecond
	DefaultBackoffMax    = 5 * time.Second
)

const (
	// responseBytesMax caps a 2xx body. An Esplora page of 25 large
	// transactions stays well below it.
	responseBytesMax = 16 << 20
	// errorBodyBytesMax is how much of a non-2xx body is read (and thrown
	// away, never parsed) so the connection can be reused.
	errorBodyBytesMax = 4 << 10
	// retriesMax bounds ClientOptions.Retries.
	retriesMax = 10
	// addressBytesMax bounds the address put in a path.
	addressBytesMax = 128
	userAgent       = "addrwatch"
)

// ClientOptions tune a Client. The zero value is usable: every zero field
// takes its Default.
type ClientOptions struct {
	// Timeout bounds one attempt: connecting, the status line and reading
	// the whole body. The caller's context bounds the call as a whole,
	// retries and backoff included.
	Timeout time.Duration
	// MaxConcurrent bounds the requests in flight to the upstream from
	// this Client at once; further calls wait for a slot (or their
	// context). A call sleeping in backoff holds no slot.
	MaxConcurrent int
	// Retries is how many times a 429, a 5xx or a transport error is
	// retried. 0 means DefaultRetries; a negative value means never. A
	// timeout is not retried: the caller's time is better spent reporting
	// a degraded history. At most 10.
	Retries int
	// BackoffBase is the first retry delay; each retry doubles it, with
	// jitter, up to BackoffMax.
	BackoffBase time.Duration
	// BackoffMax caps a retry delay. It is also the longest Retry-After
	// honored: an upstream asking for a longer wait gets no retry, and the
	// *UpstreamError carries its RetryAfter for the caller to pass on.
	BackoffMax time.Duration
	// HTTPClient sends the requests. nil means a client of its own with a
	// connection pool sized to MaxConcurrent, reaching the upstream as
	// Reach says.
	HTTPClient *http.Client
	// Reach is the certificate to trust and the proxy to go through when
	// the Client makes its own HTTP client.
	Reach Reach
	// BreakerFailures is for how many distinct addresses (or
	// transactions), at most half of them (rounded up) one account's,
	// calls must find the upstream down (each after its retries) before
	// the circuit breaker opens (breaker.go). 0 means DefaultBreakerFailures; a
	// negative value means no breaker and no cooldowns.
	BreakerFailures int
	// BreakerOpen is how long an open breaker fails calls at once before
	// it lets one through, and how long an address that failed repeatedly
	// cools down. 0 means DefaultBreakerOpen.
	BreakerOpen time.Duration
}

// Client speaks Esplora's REST API (Blockstream's and mempool.space's
// shape). It is safe for concurrent use.
type Client struct {
	base        string
	http        *http.Client
	timeout     time.Duration
	retries     int
	backoffBase time.Duration
	backoffMax  time.Duration
	slots       chan struct{} // a semaphore: one token per request in flight
	health      *health       // the breaker and cooldowns; nil: none (breaker.go)

	// now is the breaker's and the cooldowns' clock; tests replace it.
	now func() time.Time
	// sleep waits d or until ctx is done. Tests replace it to see the
	// backoff delays without waiting them out.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient returns a client for the Esplora API at baseURL, for example
// "https://blockstream.info/api" or "https://mempool.space/api". The URL
// must be absolute http or https; a trailing slash is ignored.
func NewClient(baseURL string, opts ClientOptions) (*Client, error) {
	if opts.HTTPClient == nil && (opts.Reach.Proxy != nil || len(opts.Reach.CertPEM) > 0) {
		tr, err := opts.Reach.HTTPTransport(max(opts.MaxConcurrent, DefaultMaxConcurrent))
		if err != nil {
			return nil, err
		}
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: upstream must be an http(s) URL", ErrInvalidArgument)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: upstream URL must not have a query or fragment", ErrInvalidArgument)
	}
	return newClient(strings.TrimRight(baseURL, "/"), opts), nil
}

func newClient(base string, opts ClientOptions) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	switch {
	case opts.Retries == 0:
		opts.Retries = DefaultRetries
	case opts.Retries < 0:
		opts.Retries = 0
	case opts.Retries > retriesMax:
		opts.Retries = retriesMax
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = DefaultBackoffBase
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = DefaultBackoffMax
	}
	if opts.BackoffMax < opts.BackoffBase {
		opts.BackoffMax = opts.BackoffBase
	}
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = opts.MaxConcurrent
		hc = &http.Client{Transport: tr}
	}
	if opts.BreakerFailures == 0 {
		opts.BreakerFailures = DefaultBreakerFailures
	}
	if opts.BreakerOpen <= 0 {
		opts.BreakerOpen = DefaultBreakerOpen
	}
	var h *health
	if opts.BreakerFailures > 0 {
		h = newHealth(opts.BreakerFailures, opts.BreakerOpen)
	}
	return &Client{
		health:      h,
		base:        base,
		http:        hc,
		timeout:     opts.Timeout,
		retries:     opts.Retries,
		backoffBase: opts.BackoffBase,
		backoffMax:  opts.BackoffMax,
		slots:       make(chan struct{}, opts.MaxConcurrent),
		sleep:       sleepCtx,
		now:         time.Now,
	}
}

// AddressStats is GET /address/{addr}: the lifetime counters.
func (c *Client) AddressStats(ctx context.Context, addr string) (AddressStats, error) {
	if err := checkAddress(addr); err != nil {
		return AddressStats{}, err
	}
	var w esploraAddress
	if err := c.get(ctx, "address", addr, "/address/"+url.PathEscape(addr), false, &w); err != nil {
		return AddressStats{}, err
	}
	s, err := w.toStats()
	if err != nil {
		return AddressStats{}, &UpstreamError{Op: "address", Err: err}
	}
	return s, nil
}

// ChainTxs is GET /address/{addr}/txs/chain[/{lastSeenTxID}]: one page of
// confirmed transactions, newest first. An empty lastSeenTxID asks for the
// first page; otherwise the page holds the transactions just older than
// lastSeenTxID, which must be a transaction of addr's history (Esplora
// answers an empty page for any other). A page shorter than ChainPageSize
// is the last.
func (c *Client) ChainTxs(ctx context.Context, addr, lastSeenTxID string) ([]Tx, error) {
	if err := checkAddress(addr); err != nil {
		return nil, err
	}
	path := "/address/" + url.PathEscape(addr) + "/txs/chain"
	if lastSeenTxID != "" {
		txid, ok := CanonicalTxID(lastSeenTxID)
		if !ok {
			return nil, fmt.Errorf("%w: last seen txid is not 64 hex characters", ErrInvalidArgument)
		}
		path += "/" + txid
	}
	return c.listing(ctx, "chain txs", addr, path, true)
}

// MempoolTxs is GET /address/{addr}/txs/mempool: the address's unconfirmed
// transactions, newest first (Esplora sends at most 50).
func (c *Client) MempoolTxs(ctx context.Context, addr string) ([]Tx, error) {
	if err := checkAddress(addr); err != nil {
		return nil, err
	}
	return c.listing(ctx, "mempool txs", addr, "/address/"+url.PathEscape(addr)+"/txs/mempool", false)
}

// Tx is GET /tx/{txid}. It returns ErrNotFound when the upstream answers 404
// or when txid is not 64 hex characters (no request is sent then).
func (c *Client) Tx(ctx context.Context, txid string) (Tx, error) {
	id, ok := CanonicalTxID(txid)
	if !ok {
		return Tx{}, ErrNotFound
	}
	var w esploraTx
	if err := c.get(ctx, "tx", id, "/tx/"+id, true, &w); err != nil {
		return Tx{}, err
	}
	t, err := w.toTx()
	if err == nil && t.TxID != id {
		err = malformed("asked for one transaction, got another")
	}
	if err != nil {
		return Tx{}, &UpstreamError{Op: "tx", Err: err}
	}
	return t, nil
}

// Tip is GET /blocks: the newest blocks, newest first; the first is the
// tip. One request, so that the height and the hash are of one block.
func (c *Client) Tip(ctx context.Context) (BlockRef, error) {
	var blocks []esploraBlock
	if err := c.get(ctx, "tip", "tip", "/blocks", false, &blocks); err != nil {
		return BlockRef{}, err
	}
	if len(blocks) == 0 {
		return BlockRef{}, &UpstreamError{Op: "tip", Err: malformed("no blocks")}
	}
	tip, err := blocks[0].toRef()
	if err != nil {
		return BlockRef{}, &UpstreamError{Op: "tip", Err: err}
	}
	return tip, nil
}

// BlockHash is GET /block-height/{height}: the hash of the block at height
// on the explorer's best chain, ErrNotFound above its tip.
func (c *Client) BlockHash(ctx context.Context, height int64) (string, error) {
	if height < 0 {
		return "", fmt.Errorf("%w: a height is not negative", ErrInvalidArgument)
	}
	var text plainText
	if err := c.get(ctx, "block hash", "block-height", "/block-height/"+strconv.FormatInt(height, 10), true, &text); err != nil {
		return "", err
	}
	hash, ok := CanonicalTxID(string(text))
	if !ok {
		return "", &UpstreamError{Op: "block hash", Err: malformed("%q is no block hash", text)}
	}
	return hash, nil
}

// plainText is an answer that is text, not JSON (Esplora's
// /block-height/{height}): attempt keeps it as it is, without its
// surrounding white space.
type plainText string

func (c *Client) listing(ctx context.Context, op, addr, path string, confirmed bool) ([]Tx, error) {
	var ws []esploraTx
	if err := c.get(ctx, op, addr, path, false, &ws); err != nil {
		return nil, err
	}
	txs, err := toTxs(ws, confirmed)
	if err != nil {
		return nil, &UpstreamError{Op: op, Err: err}
	}
	return txs, nil
}

func checkAddress(addr string) error {
	if addr == "" || len(addr) > addressBytesMax {
		return fmt.Errorf("%w: address must be 1 to %d bytes", ErrInvalidArgument, addressBytesMax)
	}
	return nil
}

// get fetches base+path and decodes the 2xx JSON body into out, retrying
// 429, 5xx and transport errors with backoff. With notFoundIsAnswer a 404
// is ErrNotFound rather than an upstream failure. subject is the address
// or transaction asked about, for the breaker and its cooldown.
func (c *Client) get(ctx context.Context, op, subject, path string, notFoundIsAnswer bool, out any) error {
	return c.guarded(ctx, op, subject, func() error { return c.getRetrying(ctx, op, path, notFoundIsAnswer, out) })
}

// getRetrying is get without the breaker: the attempts and their backoff.
func (c *Client) getRetrying(ctx context.Context, op, path string, notFoundIsAnswer bool, out any) error {
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, op, path, notFoundIsAnswer, out)
		var ue *UpstreamError
		if !errors.As(err, &ue) {
			return err // nil or ErrNotFound
		}
		ue.Attempts = attempt
		if attempt > c.retries || !retryable(ctx, ue) {
			return ue
		}
		delay, ok := c.backoff(ctx, attempt, ue.RetryAfter)
		if !ok {
			return ue
		}
		if err := c.sleep(ctx, delay); err != nil {
			return ue
		}
	}
}

// attempt makes one request. Every failure it returns is an
// *UpstreamError, except ErrNotFound.
func (c *Client) attempt(ctx context.Context, op, path string, notFoundIsAnswer bool, out any) error {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return &UpstreamError{Op: op, Err: ctx.Err()}
	}
	defer func() { <-c.slots }()

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return &UpstreamError{Op: op, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return &UpstreamError{Op: op, Err: c.cause(ctx, actx, err)}
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The body of a failure is drained, never decoded: it is an HTML
		// error page as often as it is JSON.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyBytesMax))
		if resp.StatusCode == http.StatusNotFound && notFoundIsAnswer {
			return ErrNotFound
		}
		return &UpstreamError{
			Op:         op,
			Status:     resp.StatusCode,
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, responseBytesMax+1))
	if err != nil {
		return &UpstreamError{Op: op, Status: resp.StatusCode, Err: c.cause(ctx, actx, err)}
	}
	if len(body) > responseBytesMax {
		return &UpstreamError{Op: op, Status: resp.StatusCode, Err: malformed("body over %d bytes", responseBytesMax)}
	}
	if text, isText := out.(*plainText); isText {
		*text = plainText(strings.TrimSpace(string(body)))
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &UpstreamError{Op: op, Status: resp.StatusCode, Err: malformed("invalid JSON: %v", err)}
	}
	return nil
}

// attemptTimeoutError wraps context.DeadlineExceeded when an attempt ran
// out of ClientOptions.Timeout (rather than the caller's own deadline).
type attemptTimeoutError struct{ timeout time.Duration }

func (e attemptTimeoutError) Error() string {
	return fmt.Sprintf("no answer within %s", e.timeout)
}
func (e attemptTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// cause names why a request failed: the caller's context, the per-attempt
// timeout, or the transport error itself.
func (c *Client) cause(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if actx.Err() != nil {
		return attemptTimeoutError{c.timeout}
	}
	return err
}

// retryable: a 429 or 5xx, or a transport failure that is not a timeout.
// Malformed answers and other statuses would fail the same way again.
func retryable(ctx context.Context, e *UpstreamError) bool {
	if ctx.Err() != nil {
		return false
	}
	if e.Status != 0 {
		return statusSaysDown(e.Status)
	}
	return !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) &&
		!errors.Is(e.Err, ErrMalformed)
}

// statusSaysDown: a 429 or a 5xx says the upstream as a whole is
// overloaded or failing; any other status is about what was asked.
func statusSaysDown(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// backoff is the delay before retry number `attempt` (1-based): base·2^(n-1)
// with jitter in [d/2, d), capped at backoffMax, and at least the upstream's
// Retry-After. It refuses (ok false) when Retry-After exceeds backoffMax or
// the delay would outlast the caller's deadline: better to fail now than to
// fail after waiting.
func (c *Client) backoff(ctx context.Context, attempt int, retryAfter time.Duration) (time.Duration, bool) {
	if retryAfter > c.backoffMax {
		return 0, false
	}
	d := c.backoffBase << (attempt - 1)
	if d > c.backoffMax || d <= 0 {
		d = c.backoffMax
	}
	d = d/2 + rand.N(d/2+1)
	d = max(d, retryAfter)
	if deadline, has := ctx.Deadline(); has && time.Until(deadline) < d {
		return 0, false
	}
	return d, true
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// Anything else, or a time in the past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		// Clamp before multiplying so a huge value cannot overflow.
		return time.Duration(min(secs, 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
