package btcdsource

import (
	"sync"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// The outputs of transactions, by txid, as chain names them (value and
// one address). What a transaction pays never changes under its ID (its
// ID is a hash of its outputs), so a kept entry can never be stale,
// whatever the chain did since: no reorg, replacement or block makes it
// wrong. They name the outputs the inputs of a listed transaction spend
// (the address and value of each input), which searchrawtransactions
// gives only for the inputs spending from the address asked about
// (filteraddrs, index.go); a transaction that pays fifty watched
// addresses is then asked for once, not once for each of them.
//
// Bounded by outputsBytesMax (an estimate of what they hold: each
// output's address and value and a slice's overhead), least recently
// used forgotten first.

const (
	// outputsBytesMax bounds the outputs kept: 16 MiB, some 200,000
	// outputs.
	outputsBytesMax = 16 << 20
	// outputsKeptMax bounds the transactions kept, besides their bytes.
	outputsKeptMax = 1 << 20
	// outputBytes is what one output costs besides its address: a
	// chain.TxIO's value and string and slice headers.
	outputBytes = 64
	// outputsEntryBytes is what a transaction's entry costs besides its
	// outputs: its txid and the LRU's element.
	outputsEntryBytes = 160
)

type outputsCache struct {
	bytesMax int

	mu    sync.Mutex
	bytes int
	txs   *simplelru.LRU[string, keptOutputs]
}

type keptOutputs struct {
	outs []chain.TxIO
	size int
}

func newOutputsCache(bytesMax int) *outputsCache {
	c := &outputsCache{bytesMax: bytesMax}
	c.txs, _ = simplelru.NewLRU(outputsKeptMax, func(_ string, kept keptOutputs) { c.bytes -= kept.size })
	return c
}

// get is txid's outputs, if kept. The caller must not change them.
func (c *outputsCache) get(txid string) ([]chain.TxIO, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, ok := c.txs.Get(txid)
	return kept.outs, ok
}

// keep remembers txid's outputs, which the caller no longer changes.
func (c *outputsCache) keep(txid string, outs []chain.TxIO) {
	size := outputsEntryBytes
	for _, o := range outs {
		size += outputBytes + len(o.Address)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.bytesMax {
		return
	}
	if _, ok := c.txs.Peek(txid); ok {
		return // the same outputs: they never change
	}
	c.txs.Add(txid, keptOutputs{outs: outs, size: size})
	c.bytes += size
	for c.bytes > c.bytesMax {
		c.txs.RemoveOldest()
	}
}
