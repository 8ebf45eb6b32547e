package chain

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// badAddr is an address the fake upstream fails on, as an Esplora fails on
// one address with too long a history while it serves every other.
const badAddr = "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"

// historyView makes the calls a History view makes of one address.
func historyView(ctx context.Context, c *Client, addr string) {
	c.AddressStats(ctx, addr)
	c.MempoolTxs(ctx, addr)
	c.ChainTxs(ctx, addr, "")
}

// Issue 28: three History views of one account's address that the
// upstream fails on opened the breaker for everyone, and another
// account's note write (a /tx verification) answered 503 for 5 s. Whether
// the upstream answers 400 or 500 for that address, its failures stay
// with it: the other account's call goes through, and the failing address
// is not asked again at every view.
func TestOneAccountsFailingAddressDoesNotOpenTheBreakerForOthers(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f := newFakeEsplora(t)
			f.setHistory(fakeAddr, 3, 0)
			f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, badAddr) {
					http.Error(w, "Too many history entries", status)
					return true
				}
				return false
			})
			c, _ := f.client(t, ClientOptions{})
			tx := f.listing(t, fakeAddr)[0]
			attacker := WithAccount(context.Background(), "attacker")
			for range 3 {
				historyView(attacker, c, badAddr)
			}
			asked := f.requestCount()
			historyView(attacker, c, badAddr)
			if n := f.requestCount() - asked; n != 0 {
				t.Errorf("a fourth view of the failing address asked the upstream %d times; it should be cooling down", n)
			}
			other := WithAccount(context.Background(), "other")
			if _, err := c.Tx(other, tx.TxID); err != nil {
				t.Fatalf("another account's transaction verification: %v", err)
			}
			if _, err := c.AddressStats(other, fakeAddr); err != nil {
				t.Fatalf("another account's address: %v", err)
			}
		})
	}
}

// The upstream itself is down (5xx for every address, seen by several
// accounts): the breaker opens, and says when to come back.
func TestBreakerOpensWhenSeveralAccountsSeeTheUpstreamDown(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	})
	c, _ := f.client(t, ClientOptions{Retries: -1, BreakerFailures: 3})
	addrs := []string{fakeAddr, badAddr, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}
	for i, addr := range addrs {
		c.AddressStats(WithAccount(context.Background(), []string{"a", "b", "c"}[i]), addr)
	}
	asked := f.requestCount()
	_, err := c.AddressStats(WithAccount(context.Background(), "d"), "bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l")
	var ue *UpstreamError
	if !errors.As(err, &ue) || !errors.Is(err, ErrCircuitOpen) || ue.RetryAfter <= 0 {
		t.Fatalf("after three accounts' addresses failed with 502: %v, want the open circuit with a RetryAfter", err)
	}
	if f.requestCount() != asked {
		t.Fatal("the open breaker asked the upstream")
	}
}

// One account's failing addresses count for at most half of what opens
// the breaker: with them, one failure of another account's does not open
// it; a second of another address does, since then the upstream fails
// for more than one account's addresses.
func TestOneAccountCountsForHalfOfWhatOpensTheBreaker(t *testing.T) {
	f := newFakeEsplora(t)
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	})
	c, _ := f.client(t, ClientOptions{Retries: -1})
	attacker := WithAccount(context.Background(), "attacker")
	for i := range 6 {
		c.AddressStats(attacker, someAddress(i))
	}
	open := func() bool {
		c.health.mu.Lock()
		defer c.health.mu.Unlock()
		return !c.health.openUntil.IsZero()
	}
	other := WithAccount(context.Background(), "other")
	c.AddressStats(other, fakeAddr)
	if open() {
		t.Fatal("the breaker opened on six of one account's addresses and one of another's")
	}
	c.AddressStats(other, badAddr)
	if !open() {
		t.Fatal("the breaker stayed closed after 3 of one account's addresses and 2 of another's failed")
	}
	if _, err := c.AddressStats(WithAccount(context.Background(), "third"), someAddress(10)); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("a call while open: %v", err)
	}
}

// someAddress is a distinct address string for each n (the fake does not
// check them).
func someAddress(n int) string { return fmt.Sprintf("bc1qsomeaddress%027d", n) }
