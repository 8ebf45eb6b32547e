package chain

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Once calls for BreakerFailures distinct addresses, of at least two
// accounts, have found the upstream down (each after its retries), the
// next calls fail at once without asking it; once BreakerOpen has passed,
// one call is let through, and its success closes the breaker.
func TestBreakerOpensAfterFailuresAndClosesOnSuccess(t *testing.T) {
	f := newFakeEsplora(t)
	var down atomic.Bool
	down.Store(true)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	c, _ := f.client(t, ClientOptions{Retries: 2, BreakerFailures: 3, BreakerOpen: 200 * time.Millisecond})
	addrs := []string{fakeAddr, badAddr, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}
	for i, addr := range addrs {
		ctx := WithAccount(context.Background(), []string{"a", "b", "a"}[i])
		if _, err := c.MempoolTxs(ctx, addr); !errors.Is(err, ErrUpstream) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("failing call %d: %v", i, err)
		}
	}
	if n := f.requestCount(); n != 3*3 {
		t.Fatalf("%d requests for 3 calls of 3 attempts", n)
	}
	// Open: many calls, no request, each an upstream error at once.
	ctx := context.Background()
	start := time.Now()
	for range 20 {
		_, err := c.AddressStats(ctx, fakeAddr)
		var ue *UpstreamError
		if !errors.As(err, &ue) || !errors.Is(err, ErrCircuitOpen) || ue.Op != "address" || ue.RetryAfter <= 0 {
			t.Fatalf("a call while open: %v", err)
		}
	}
	if n := f.requestCount(); n != 9 {
		t.Fatalf("the open breaker let %d requests through", n-9)
	}
	t.Logf("20 calls while open took %v", time.Since(start))
	// After the open time, the upstream is back: one call goes through
	// and closes the breaker.
	down.Store(false)
	time.Sleep(250 * time.Millisecond)
	if _, err := c.MempoolTxs(ctx, fakeAddr); err != nil {
		t.Fatalf("the call after the open time: %v", err)
	}
	if _, err := c.MempoolTxs(ctx, fakeAddr); err != nil {
		t.Fatalf("a call once closed: %v", err)
	}
}

// One account's addresses, however many and however down the upstream
// looks for them, cool down one by one but never open the breaker.
func TestBreakerNeedsMoreThanOneAccount(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/address/") {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		return false
	})
	c, _ := f.client(t, ClientOptions{Retries: -1, BreakerFailures: 2})
	one := WithAccount(context.Background(), "one")
	for _, addr := range []string{fakeAddr, badAddr, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l"} {
		for range 3 {
			c.AddressStats(one, addr)
		}
	}
	if _, err := c.Tx(WithAccount(context.Background(), "two"), strings.Repeat("ab", 32)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another account's call after one account's addresses failed: %v, want the upstream's answer", err)
	}
}

// An unknown transaction and a caller who gave up are no sign of an
// outage: they never open the breaker.
func TestBreakerIgnoresNotFoundAndTheCallersContext(t *testing.T) {
	f := newFakeEsplora(t)
	c, _ := f.client(t, ClientOptions{BreakerFailures: 2})
	for range 10 {
		if _, err := c.Tx(context.Background(), strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown tx: %v", err)
		}
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for range 10 {
		c.MempoolTxs(gone, fakeAddr)
	}
	if _, err := c.MempoolTxs(context.Background(), fakeAddr); err != nil {
		t.Fatalf("after not-found answers and cancelled calls the breaker refused: %v", err)
	}
}

// A negative BreakerFailures turns the breaker off: every call asks.
func TestBreakerOff(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	c, _ := f.client(t, ClientOptions{Retries: -1, BreakerFailures: -1})
	for range 10 {
		c.AddressStats(context.Background(), fakeAddr)
	}
	if n := f.requestCount(); n != 10 {
		t.Fatalf("%d requests for 10 calls without a breaker", n)
	}
}
