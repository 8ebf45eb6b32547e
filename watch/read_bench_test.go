package watch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// slowChain is a testChain whose every call takes latency, as a request
// to a source over the network does.
type slowChain struct {
	*testChain
	latency time.Duration
}

func (s slowChain) AddressStats(ctx context.Context, a string) (chain.AddressStats, error) {
	time.Sleep(s.latency)
	return s.testChain.AddressStats(ctx, a)
}

func (s slowChain) MempoolTxs(ctx context.Context, a string) ([]chain.Tx, error) {
	time.Sleep(s.latency)
	return s.testChain.MempoolTxs(ctx, a)
}

func (s slowChain) ChainTxs(ctx context.Context, a, last string) ([]chain.Tx, error) {
	time.Sleep(s.latency)
	return s.testChain.ChainTxs(ctx, a, last)
}

// listStore watches addresses, none recorded yet, and keeps what is
// proposed.
type listStore struct {
	targets []Target
	mu      sync.Mutex
	seen    map[string]*actors.ObserveChain
}

func (s *listStore) Leading() bool { return true }
func (s *listStore) Watched(context.Context, func(string) bool) ([]Target, error) {
	return s.targets, nil
}
func (s *listStore) Deepening(context.Context) ([]Target, error) { return nil, nil }
func (s *listStore) Observe(_ context.Context, _ string, obs *actors.ObserveChain) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[obs.Address] = obs
	return nil
}

// A block that paid many watched addresses, read by a sweep of them over
// a source that takes a millisecond a request (issue 32's burst: a
// block paying thousands of watched addresses). The three reads of an
// address go at once, so an address costs one latency, not three.
func BenchmarkReadingABlockThatPaidManyAddresses(b *testing.B) {
	const addresses = 400
	c := newTestChain()
	store := &listStore{}
	for i := range addresses {
		a := fmt.Sprintf("addr-%04d", i)
		c.pay(a, int64(1_000+i), hashOf(a)+":0")
		store.targets = append(store.targets, Target{Account: "acct", Address: a})
	}
	c.mine()
	f := New(slowChain{c, time.Millisecond}, store, Options{})
	for b.Loop() {
		store.seen = map[string]*actors.ObserveChain{}
		if err := f.Sweep(context.Background(), c.tip()); err != nil {
			b.Fatal(err)
		}
	}
	if len(store.seen) != addresses {
		b.Fatalf("%d addresses observed of %d", len(store.seen), addresses)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/addresses, "µs/address")
}
