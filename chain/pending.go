package chain

import (
	"maps"
	"slices"
	"sync"
)

// PendingChange is what a Notifier was told that its follower has not
// taken yet, merged into one Change: the newest tip, every address named
// since, All if any change said it. Reading an address once after
// several changes shows all of them, so the connection's reader adds
// without ever waiting for the follower, and what waits is bounded by
// the watched addresses, or by addressesMax names, past which the
// pending change becomes All (the follower sweeps everything once). It
// is safe for concurrent use.
type PendingChange struct {
	addressesMax int           // 0: no bound but the watched addresses
	ready        chan struct{} // holds a token while a change is pending

	mu      sync.Mutex
	pending bool
	tip     BlockRef
	all     bool
	named   map[string]bool
}

// NewPendingChange holds changes naming at most addressesMax addresses
// together (0: any number) before it says All.
func NewPendingChange(addressesMax int) *PendingChange {
	return &PendingChange{addressesMax: addressesMax, ready: make(chan struct{}, 1), named: map[string]bool{}}
}

// Add merges c into what is pending.
func (p *PendingChange) Add(c Change) {
	p.mu.Lock()
	p.pending = true
	if c.Tip.Hash != "" {
		p.tip = c.Tip
	}
	if !p.all {
		for _, a := range c.Addresses {
			p.named[a] = true
		}
		if c.All || (p.addressesMax > 0 && len(p.named) > p.addressesMax) {
			p.all = true
			clear(p.named)
		}
	}
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// Ready has a value while a change may be pending: wait on it, then
// Take.
func (p *PendingChange) Ready() <-chan struct{} { return p.ready }

// Take is what is pending (the addresses sorted; none with All), and
// nothing is pending after it.
func (p *PendingChange) Take() (Change, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pending {
		return Change{}, false
	}
	c := Change{Tip: p.tip, All: p.all}
	if len(p.named) > 0 {
		c.Addresses = slices.Sorted(maps.Keys(p.named))
	}
	p.pending, p.tip, p.all = false, BlockRef{}, false
	clear(p.named)
	return c, true
}
