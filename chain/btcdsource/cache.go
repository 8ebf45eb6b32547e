package btcdsource

import (
	"container/list"
	"sync"
)

// indexCache holds the addresses' indexes, least recently used
// forgotten first once they hold more than txidsMax transaction IDs
// together or there are more than addressesMax of them.
type indexCache struct {
	txidsMax     int
	addressesMax int

	mu     sync.Mutex
	order  *list.List // of *addressIndex, most recently used first
	byAddr map[string]*list.Element
	txids  int // held by the indexes in order
}

func newIndexCache(txidsMax, addressesMax int) *indexCache {
	return &indexCache{txidsMax: txidsMax, addressesMax: addressesMax, order: list.New(), byAddr: map[string]*list.Element{}}
}

// entry is addr's index, made empty when none is held, and marked most
// recently used.
func (c *indexCache) entry(addr string) *addressIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byAddr[addr]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*addressIndex)
	}
	ix := newAddressIndex(addr)
	c.byAddr[addr] = c.order.PushFront(ix)
	c.evict(ix)
	return ix
}

// forget drops addr's index, so that the next call reads its whole
// history again. A call still working on it finishes with it alone.
func (c *indexCache) forget(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byAddr[addr]; ok {
		c.order.Remove(el)
		delete(c.byAddr, addr)
		c.txids -= el.Value.(*addressIndex).heldTxids
	}
}

// resized records that ix now holds txids transaction IDs, and forgets
// other indexes while the cache holds too many. An index already
// forgotten (a call still working on it) is not counted again.
func (c *indexCache) resized(ix *addressIndex, txids int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byAddr[ix.addr]; !ok || el.Value != ix {
		return
	}
	c.txids += txids - ix.heldTxids
	ix.heldTxids = txids
	c.evict(ix)
}

// evict forgets the least recently used indexes other than keep while
// the bounds are exceeded. c.mu is held.
func (c *indexCache) evict(keep *addressIndex) {
	for c.txids > c.txidsMax || c.order.Len() > c.addressesMax {
		victim := c.order.Back()
		if victim.Value == keep {
			victim = victim.Prev()
		}
		if victim == nil {
			return // keep alone is over the bound: it stays while in use
		}
		ix := victim.Value.(*addressIndex)
		c.order.Remove(victim)
		delete(c.byAddr, ix.addr)
		c.txids -= ix.heldTxids
	}
}
