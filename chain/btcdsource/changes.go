package btcdsource

import (
	"maps"
	"slices"
	"sync"

	"github.com/addrwatch/addrwatch/chain"
)

// changeQueue holds what btcd said changed that the follower has not
// taken yet, all of it merged into one chain.Change: the newest tip and
// every address named since. Reading an address once after several
// changes shows all of them, so a follower that falls behind reads each
// address once, not once a change. Past addressesMax names the pending
// change becomes All (the follower sweeps everything), so the queue
// never holds more than that, however far behind the follower is. btcd
// itself must never wait: it queues notifications for a slow client
// without bound, so the connection is read as fast as btcd writes.
type changeQueue struct {
	addressesMax int
	ready        chan struct{} // holds a token while a change is pending

	mu      sync.Mutex
	pending bool
	tip     chain.BlockRef
	all     bool
	named   map[string]bool
}

func newChangeQueue(addressesMax int) *changeQueue {
	return &changeQueue{addressesMax: addressesMax, ready: make(chan struct{}, 1), named: map[string]bool{}}
}

// push merges c into the pending change.
func (q *changeQueue) push(c chain.Change) {
	q.mu.Lock()
	q.pending = true
	if c.Tip.Hash != "" {
		q.tip = c.Tip
	}
	if !q.all {
		for _, a := range c.Addresses {
			q.named[a] = true
		}
		if c.All || len(q.named) > q.addressesMax {
			q.all = true
			clear(q.named)
		}
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take is the pending change, and nothing pending after it.
func (q *changeQueue) take() (chain.Change, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.pending {
		return chain.Change{}, false
	}
	c := chain.Change{Tip: q.tip, All: q.all}
	if !q.all {
		c.Addresses = slices.Sorted(maps.Keys(q.named))
	}
	q.pending, q.tip, q.all = false, chain.BlockRef{}, false
	clear(q.named)
	return c, true
}

// deliver sends the pending changes on out, one merged change at a time,
// until done is closed; then it closes out, and what is pending is
// dropped (the follower sweeps everything when it notifies again).
func (q *changeQueue) deliver(out chan<- chain.Change, done <-chan struct{}) {
	defer close(out)
	for {
		select {
		case <-done:
			return
		case <-q.ready:
		}
		c, ok := q.take()
		if !ok {
			continue
		}
		select {
		case <-done:
			return
		case out <- c:
		}
	}
}
