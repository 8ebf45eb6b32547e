package chain

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const fakeAddr = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"

func TestClientChainPagesFollowCursors(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 60, 0)
	c, _ := f.client(t, ClientOptions{})
	ctx := context.Background()

	var got []Tx
	last := ""
	for range 10 {
		page, err := c.ChainTxs(ctx, fakeAddr, last)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if len(page) < ChainPageSize {
			break
		}
		last = page[len(page)-1].TxID
	}
	want := f.listing(t, fakeAddr)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walked %d transactions, want the %d of the history in order", len(got), len(want))
	}
	if n := f.count("chain"); n != 3 {
		t.Fatalf("chain pages fetched = %d, want 3 (25 + 25 + 10)", n)
	}
	if f.cursors[0] != want[24].TxID || f.cursors[1] != want[49].TxID {
		t.Fatalf("cursors sent %v, want the last txid of each page", f.cursors)
	}
	for _, tx := range got {
		if !tx.Confirmed || tx.BlockHeight == 0 || tx.BlockTime.IsZero() || tx.BlockTime.Location() != time.UTC {
			t.Fatalf("confirmed tx decoded as %+v", tx)
		}
	}
}

func TestClientMempoolAndStats(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 4, 2)
	c, _ := f.client(t, ClientOptions{})
	ctx := context.Background()

	mem, err := c.MempoolTxs(ctx, fakeAddr)
	if err != nil {
		t.Fatal(err)
	}
	if len(mem) != 2 {
		t.Fatalf("mempool has %d transactions, want 2", len(mem))
	}
	for _, tx := range mem {
		if tx.Confirmed || tx.BlockHeight != 0 || !tx.BlockTime.IsZero() {
			t.Fatalf("mempool tx decoded as %+v", tx)
		}
		if tx.NetAmount(fakeAddr) != 10_000 {
			t.Fatalf("net amount %d, want 10000", tx.NetAmount(fakeAddr))
		}
	}
	st, err := c.AddressStats(ctx, fakeAddr)
	if err != nil {
		t.Fatal(err)
	}
	want := AddressStats{Address: fakeAddr, Chain: TxoStats{4, 40_000, 0}, Mempool: TxoStats{2, 20_000, 0}}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	if st.TxCount() != 6 || st.Balance() != 60_000 {
		t.Fatalf("TxCount %d Balance %d", st.TxCount(), st.Balance())
	}
}

func TestClientTx(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 3, 0)
	c, _ := f.client(t, ClientOptions{})
	ctx := context.Background()
	want := f.listing(t, fakeAddr)[1]

	got, err := c.Tx(ctx, strings.ToUpper(want.TxID))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Tx = %+v, want %+v", got, want)
	}
}

func TestClientTxNotFound(t *testing.T) {
	f := newFakeEsplora(t)
	c, _ := f.client(t, ClientOptions{})
	ctx := context.Background()

	_, err := c.Tx(ctx, strings.Repeat("0", 64))
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrUpstream) {
		t.Fatalf("unknown txid: err = %v, want ErrNotFound only", err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 64), strings.Repeat("0", 65)} {
		if _, err := c.Tx(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Tx(%q) err = %v, want ErrNotFound", bad, err)
		}
	}
	if n := f.count("tx"); n != 1 {
		t.Fatalf("upstream /tx calls = %d, want 1 (malformed txids are not sent)", n)
	}
	if n := f.requestCount(); n != 1 {
		t.Fatalf("404 was retried: %d requests", n)
	}
}

func TestClient404OnAddressIsUpstreamError(t *testing.T) {
	// A 404 on an address route means a wrong base URL, not an empty
	// history: it must not look like "no transactions".
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		http.NotFound(w, r)
		return true
	})
	c, _ := f.client(t, ClientOptions{})
	_, err := c.ChainTxs(context.Background(), fakeAddr, "")
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Status != 404 || errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want an UpstreamError with status 404", err)
	}
}

func TestClientRetries429HonoringRetryAfter(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 3, 0)
	var mu sync.Mutex
	refused := 0
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if refused < 1 {
			refused++
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	})
	c, sleeps := f.client(t, ClientOptions{BackoffBase: 10 * time.Millisecond, BackoffMax: 5 * time.Second})
	txs, err := c.ChainTxs(context.Background(), fakeAddr, "")
	if err != nil {
		t.Fatalf("after one 429: %v", err)
	}
	if len(txs) != 3 {
		t.Fatalf("got %d transactions, want 3", len(txs))
	}
	if f.requestCount() != 2 {
		t.Fatalf("requests = %d, want 2", f.requestCount())
	}
	if len(*sleeps) != 1 || (*sleeps)[0] < 2*time.Second {
		t.Fatalf("backoff sleeps %v, want one of at least the 2s Retry-After", *sleeps)
	}
}

func TestClientRetryAfterLongerThanBackoffMaxIsNotWaited(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	c, sleeps := f.client(t, ClientOptions{BackoffMax: 5 * time.Second})
	_, err := c.AddressStats(context.Background(), fakeAddr)
	var ue *UpstreamError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v, want ErrUpstream", err)
	}
	if ue.Status != 429 || ue.RetryAfter != 120*time.Second || ue.Attempts != 1 || len(*sleeps) != 0 {
		t.Fatalf("got %+v after sleeps %v; want one attempt, status 429, RetryAfter 120s", ue, *sleeps)
	}
}

func TestClientPersistent500(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "boom", http.StatusInternalServerError)
		return true
	})
	c, sleeps := f.client(t, ClientOptions{Retries: 3, BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second})
	_, err := c.MempoolTxs(context.Background(), fakeAddr)
	var ue *UpstreamError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v, want ErrUpstream", err)
	}
	if ue.Status != 500 || ue.Attempts != 4 || f.requestCount() != 4 {
		t.Fatalf("status %d after %d attempts (%d requests); want 500 after 4", ue.Status, ue.Attempts, f.requestCount())
	}
	// Exponential with jitter in [d/2, d]: 100ms, 200ms, 400ms.
	for i, d := range *sleeps {
		hi := 100 * time.Millisecond << i
		if d < hi/2 || d > hi {
			t.Fatalf("sleep %d = %v, want within [%v, %v]", i, d, hi/2, hi)
		}
	}
	if len(*sleeps) != 3 {
		t.Fatalf("sleeps %v, want 3", *sleeps)
	}
}

func TestClientNoRetriesWhenNegative(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	c, _ := f.client(t, ClientOptions{Retries: -1})
	if _, err := c.AddressStats(context.Background(), fakeAddr); !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v", err)
	}
	if f.requestCount() != 1 {
		t.Fatalf("requests = %d, want 1", f.requestCount())
	}
}

func TestClientSlowAnswerTimesOut(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return true
	})
	c, _ := f.client(t, ClientOptions{Timeout: 50 * time.Millisecond})
	_, err := c.ChainTxs(context.Background(), fakeAddr, "")
	if !errors.Is(err, ErrUpstream) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUpstream wrapping DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("message %q does not say it timed out", err)
	}
	if f.requestCount() != 1 {
		t.Fatalf("a timeout was retried: %d requests", f.requestCount())
	}
}

func TestClientSlowBodyTimesOut(t *testing.T) {
	// The timeout covers reading the body, not only the status line.
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("["))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	})
	c, _ := f.client(t, ClientOptions{Timeout: 50 * time.Millisecond})
	if _, err := c.ChainTxs(context.Background(), fakeAddr, ""); !errors.Is(err, ErrUpstream) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestClientMalformedJSON(t *testing.T) {
	bodies := map[string]string{
		"not JSON":             `{"txid": "00`,
		"HTML":                 `<html>oops</html>`,
		"wrong shape":          `{"txs": []}`,
		"bad txid":             `[{"txid":"xyz","status":{"confirmed":true,"block_height":1,"block_time":1}}]`,
		"unconfirmed in chain": `[{"txid":"` + strings.Repeat("a", 64) + `","status":{"confirmed":false}}]`,
		"confirmed no time":    `[{"txid":"` + strings.Repeat("a", 64) + `","status":{"confirmed":true,"block_height":5}}]`,
		"negative value":       `[{"txid":"` + strings.Repeat("a", 64) + `","status":{"confirmed":true,"block_height":5,"block_time":9},"vout":[{"value":-1}]}]`,
		"fractional value":     `[{"txid":"` + strings.Repeat("a", 64) + `","status":{"confirmed":true,"block_height":5,"block_time":9},"vout":[{"value":1.5}]}]`,
		"repeated txid": `[{"txid":"` + strings.Repeat("a", 64) + `","status":{"confirmed":true,"block_height":5,"block_time":9}},` +
			`{"txid":"` + strings.Repeat("a", 64) + `","status":{"confirmed":true,"block_height":5,"block_time":9}}]`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			f := newFakeEsplora(t)
			f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
				return true
			})
			c, _ := f.client(t, ClientOptions{})
			_, err := c.ChainTxs(context.Background(), fakeAddr, "")
			if !errors.Is(err, ErrUpstream) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrUpstream for malformed data", err)
			}
			if f.requestCount() != 1 {
				t.Fatalf("malformed answer retried: %d requests", f.requestCount())
			}
		})
	}
}

func TestClientTxIDMismatchIsMalformed(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 2, 0)
	other := f.listing(t, fakeAddr)[0]
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		f.mu.Lock()
		w0 := f.chain[fakeAddr][0]
		f.mu.Unlock()
		writeFakeJSON(w, w0)
		return true
	})
	c, _ := f.client(t, ClientOptions{})
	if _, err := c.Tx(context.Background(), strings.Repeat("1", 64)); !errors.Is(err, ErrUpstream) {
		t.Fatalf("answer for another txid (%s): err = %v", other.TxID, err)
	}
}

func TestClientNon2xxBodyIsNotParsed(t *testing.T) {
	// Each failure carries a body that would decode into a perfectly good
	// answer. The client must report the status and never use the body.
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 1, 0)
	good := f.listing(t, fakeAddr)[0]
	f.mu.Lock()
	goodWire := f.chain[fakeAddr][0]
	f.mu.Unlock()
	for _, status := range []int{400, 403, 404, 418, 500, 503} {
		f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if strings.HasPrefix(r.URL.Path, "/tx/") {
				writeFakeJSON(w, goodWire)
			} else {
				writeFakeJSON(w, []esploraTx{goodWire})
			}
			return true
		})
		c, _ := f.client(t, ClientOptions{Retries: -1})
		txs, err := c.ChainTxs(context.Background(), fakeAddr, "")
		var ue *UpstreamError
		if txs != nil || !errors.As(err, &ue) || ue.Status != status {
			t.Fatalf("status %d: got %v, %v; want no transactions and the status", status, txs, err)
		}
		tx, err := c.Tx(context.Background(), good.TxID)
		if status == 404 {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("404 on /tx: %v", err)
			}
		} else if !errors.Is(err, ErrUpstream) {
			t.Fatalf("status %d on /tx: err = %v", status, err)
		}
		if tx.TxID != "" {
			t.Fatalf("status %d: a transaction came out of an error body", status)
		}
	}
}

func TestClientBodyCap(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		_, _ = w.Write([]byte("["))
		_, _ = w.Write([]byte(strings.Repeat(" ", responseBytesMax)))
		_, _ = w.Write([]byte("]"))
		return true
	})
	c, _ := f.client(t, ClientOptions{})
	_, err := c.ChainTxs(context.Background(), fakeAddr, "")
	if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), "body over") {
		t.Fatalf("err = %v, want the body cap", err)
	}
}

func TestClientConcurrencyBound(t *testing.T) {
	const bound = 3
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 1, 0)
	full := make(chan struct{})
	var once sync.Once
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		f.mu.Lock()
		n := f.inFlight
		f.mu.Unlock()
		if n >= bound {
			once.Do(func() { close(full) })
		}
		// Hold every request until the bound is reached, so the test sees
		// the most the client ever lets through at once.
		select {
		case <-full:
		case <-time.After(5 * time.Second):
		}
		return false
	})
	c, _ := f.client(t, ClientOptions{MaxConcurrent: bound})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := c.AddressStats(context.Background(), fakeAddr); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxInFlight != bound {
		t.Fatalf("at most %d requests were in flight, want exactly %d", f.maxInFlight, bound)
	}
}

func TestClientWaitingForASlotHonorsContext(t *testing.T) {
	f := newFakeEsplora(t)
	release := make(chan struct{})
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		<-release
		return false
	})
	c, _ := f.client(t, ClientOptions{MaxConcurrent: 1})
	started := make(chan struct{})
	go func() {
		close(started)
		_, _ = c.AddressStats(context.Background(), fakeAddr)
	}()
	<-started
	// Wait until the first call holds the only slot.
	for f.requestCount() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.AddressStats(ctx, fakeAddr)
	close(release)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
}

func TestClientRetriesTransportErrors(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHistory(fakeAddr, 1, 0)
	var mu sync.Mutex
	dropped := 0
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if dropped < 2 {
			dropped++
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return true
		}
		return false
	})
	c, sleeps := f.client(t, ClientOptions{Retries: 2})
	if _, err := c.AddressStats(context.Background(), fakeAddr); err != nil {
		t.Fatalf("after two dropped connections: %v", err)
	}
	if len(*sleeps) != 2 {
		t.Fatalf("sleeps %v, want 2 backoffs", *sleeps)
	}
}

func TestClientConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c, err := NewClient("http://"+addr, ClientOptions{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddressStats(context.Background(), fakeAddr); !errors.Is(err, ErrUpstream) {
		t.Fatalf("err = %v, want ErrUpstream", err)
	}
}

func TestClientBackoffRespectsCallerDeadline(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	c, sleeps := f.client(t, ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.AddressStats(ctx, fakeAddr)
	if !errors.Is(err, ErrUpstream) || len(*sleeps) != 0 || f.requestCount() != 1 {
		t.Fatalf("err %v after sleeps %v and %d requests; want an immediate failure, "+
			"since waiting 3s cannot fit in a 1s deadline", err, *sleeps, f.requestCount())
	}
}

func TestNewClientRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "sim", "ftp://x", "http://", "/api", "http://h/api?x=1"} {
		if _, err := NewClient(u, ClientOptions{}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("NewClient(%q) err = %v", u, err)
		}
	}
	c, err := NewClient("https://blockstream.info/api/", ClientOptions{})
	if err != nil || c.base != "https://blockstream.info/api" {
		t.Fatalf("base %q, %v", c.base, err)
	}
}

func TestClientRejectsBadArguments(t *testing.T) {
	f := newFakeEsplora(t)
	c, _ := f.client(t, ClientOptions{})
	ctx := context.Background()
	if _, err := c.ChainTxs(ctx, "", ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("empty address: %v", err)
	}
	if _, err := c.ChainTxs(ctx, fakeAddr, "nothex"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad cursor: %v", err)
	}
	if _, err := c.AddressStats(ctx, strings.Repeat("1", 200)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("long address: %v", err)
	}
	if f.requestCount() != 0 {
		t.Fatalf("%d requests sent for bad arguments", f.requestCount())
	}
}

func TestClientEscapesAddressInPath(t *testing.T) {
	f := newFakeEsplora(t)
	var path string
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		path = r.URL.EscapedPath()
		writeFakeJSON(w, esploraAddress{})
		return true
	})
	c, _ := f.client(t, ClientOptions{})
	if _, err := c.AddressStats(context.Background(), "a/../b?c"); err != nil {
		t.Fatal(err)
	}
	if path != "/address/a%2F..%2Fb%3Fc" {
		t.Fatalf("path %q: the address was not kept in one segment", path)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{"7", 7 * time.Second},
		{" 3 ", 3 * time.Second},
		{"99999999999999999", (1 << 20) * time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"soon", 0},
	}
	for _, tc := range tests {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestUpstreamErrorMessageNamesNoAddress(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "secret upstream detail", http.StatusBadGateway)
		return true
	})
	c, _ := f.client(t, ClientOptions{Retries: 1})
	_, err := c.ChainTxs(context.Background(), fakeAddr, "")
	msg := err.Error()
	if strings.Contains(msg, fakeAddr) || strings.Contains(msg, "secret") {
		t.Fatalf("message %q leaks the address or the body", msg)
	}
	if msg != "chain: upstream chain txs: HTTP 502 (after 2 attempts)" {
		t.Fatalf("message %q", msg)
	}
}
