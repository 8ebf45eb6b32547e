package electrum

import (
	"context"
	"sync"

	"github.com/addrwatch/addrwatch/chain"
)

// listener is one Notify channel. The connection's reader adds changes
// without ever waiting: changes not yet taken are merged into one
// (chain.PendingChange), so a slow reader of the channel holds back
// neither the connection nor other listeners, and what waits for it is
// bounded by the watched addresses.
type listener struct {
	ctx     context.Context
	sess    *session
	out     chan chain.Change
	pending *chain.PendingChange

	ended   chan struct{} // closed when the connection ends
	endOnce sync.Once
}

func newListener(ctx context.Context, ss *session) *listener {
	return &listener{ctx: ctx, sess: ss, out: make(chan chain.Change), pending: chain.NewPendingChange(0),
		ended: make(chan struct{})}
}

// add merges c into what is pending.
func (l *listener) add(c chain.Change) { l.pending.Add(c) }

func (l *listener) end() { l.endOnce.Do(func() { close(l.ended) }) }

// run sends what is pending until the connection or the context ends,
// then closes the channel.
func (l *listener) run(unlisten func(*listener)) {
	defer close(l.out)
	defer unlisten(l)
	for {
		select {
		case <-l.pending.Ready():
		case <-l.ended:
			return
		case <-l.ctx.Done():
			return
		}
		c, ok := l.pending.Take()
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
