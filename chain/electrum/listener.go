package electrum

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/addrwatch/addrwatch/chain"
)

// listener is one Notify channel. The connection's reader adds changes
// without ever waiting: changes not yet taken are merged into one (the
// newest tip, the union of the addresses, All if any says it), so a slow
// reader of the channel holds back neither the connection nor other
// listeners, and what waits for it is bounded by the watched addresses.
type listener struct {
	ctx  context.Context
	sess *session
	out  chan chain.Change

	mu      sync.Mutex
	pending bool
	tip     chain.BlockRef
	all     bool
	addrs   map[string]bool
	wake    chan struct{} // buffered: a change is pending
	ended   chan struct{} // closed when the connection ends
	endOnce sync.Once
}

func newListener(ctx context.Context, ss *session) *listener {
	return &listener{ctx: ctx, sess: ss, out: make(chan chain.Change), addrs: map[string]bool{},
		wake: make(chan struct{}, 1), ended: make(chan struct{})}
}

// add merges c into what is pending.
func (l *listener) add(c chain.Change) {
	l.mu.Lock()
	l.pending = true
	if c.Tip.Hash != "" {
		l.tip = c.Tip
	}
	l.all = l.all || c.All
	for _, a := range c.Addresses {
		l.addrs[a] = true
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take is what is pending, and clears it.
func (l *listener) take() (chain.Change, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.pending {
		return chain.Change{}, false
	}
	c := chain.Change{Tip: l.tip, All: l.all}
	if len(l.addrs) > 0 {
		c.Addresses = slices.Sorted(maps.Keys(l.addrs))
	}
	l.pending, l.tip, l.all = false, chain.BlockRef{}, false
	clear(l.addrs)
	return c, true
}

func (l *listener) end() { l.endOnce.Do(func() { close(l.ended) }) }

// run sends what is pending until the connection or the context ends,
// then closes the channel.
func (l *listener) run(unlisten func(*listener)) {
	defer close(l.out)
	defer unlisten(l)
	for {
		select {
		case <-l.wake:
		case <-l.ended:
			return
		case <-l.ctx.Done():
			return
		}
		c, ok := l.take()
		if !ok {
			continue
		}
		select {
		case l.out <- c:
		case <-l.ended:
			return
		case <-l.ctx.Done():
			return
		}
	}
}
