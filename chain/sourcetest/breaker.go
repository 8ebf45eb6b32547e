package sourcetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// BreakerOpens reports whether src behind chain.Guard opens its breaker
// once three accounts' addresses (mainnet ones: src is a mainnet
// source) failed, as it must for a source that is down and must not for
// one that answers badly about some addresses. Every call must fail.
func BreakerOpens(t *testing.T, src chain.Source) bool {
	t.Helper()
	g := chain.Guard(src, 3, time.Minute)
	for i, account := range []string{"a", "b", "c"} {
		if _, err := g.AddressStats(chain.WithAccount(context.Background(), account), testaddr.P2PKH(account)); !errors.Is(err, chain.ErrUpstream) {
			t.Fatalf("call %d: %v, want ErrUpstream", i, err)
		}
	}
	_, err := g.AddressStats(chain.WithAccount(context.Background(), "d"), testaddr.P2PKH("d"))
	return errors.Is(err, chain.ErrCircuitOpen)
}
