package electrum

import (
	"bytes"
	"context"
	"encoding/hex"
	"sync"

	"github.com/btcsuite/btcd/wire"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Raw transactions (blockchain.transaction.get), decoded with btcd's
// wire. What a transaction holds never changes under its ID (a witness
// may, but neither the outputs nor the outpoints the inputs spend), so
// every transaction read is kept, up to TxCacheBytes. Whether it is
// still in the mempool or the chain is another matter, never answered
// from here.

// txsKeptMax bounds the transactions kept, besides their bytes.
const txsKeptMax = 1 << 20

type txCache struct {
	bytesMax int

	mu    sync.Mutex
	bytes int
	txs   *simplelru.LRU[string, keptTx]
}

type keptTx struct {
	msg  *wire.MsgTx
	size int
}

func newTxCache(bytesMax int) *txCache {
	c := &txCache{bytesMax: bytesMax}
	c.txs, _ = simplelru.NewLRU(txsKeptMax, func(_ string, kept keptTx) { c.bytes -= kept.size })
	return c
}

func (c *txCache) get(txid string) (*wire.MsgTx, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, ok := c.txs.Get(txid)
	return kept.msg, ok
}

func (c *txCache) keep(txid string, msg *wire.MsgTx, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.bytesMax {
		return
	}
	if old, ok := c.txs.Peek(txid); ok {
		c.bytes -= old.size
	}
	c.txs.Add(txid, keptTx{msg: msg, size: size})
	c.bytes += size
	for c.bytes > c.bytesMax {
		c.txs.RemoveOldest()
	}
}

// decodeTx decodes a raw transaction in hex, which must be the one
// named txid.
func decodeTx(rawHex, txid string) (*wire.MsgTx, int, error) {
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		return nil, 0, unusablef("a transaction that is not hex")
	}
	var msg wire.MsgTx
	if err := msg.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, 0, unusablef("a transaction that does not decode")
	}
	if msg.TxHash().String() != txid {
		return nil, 0, unusablef("asked for one transaction, got another")
	}
	return &msg, len(raw), nil
}

// rawTxs is each of txids' transactions, kept or asked for (at most
// fanOutMax at once). A transaction the server says it does not know is
// left out of the map, for the caller to judge.
func (s *Source) rawTxs(ctx context.Context, txids []string) (map[string]*wire.MsgTx, error) {
	out := make(map[string]*wire.MsgTx, len(txids))
	var missing []string
	for _, id := range txids {
		if _, done := out[id]; done {
			continue
		}
		if msg, ok := s.txs.get(id); ok {
			out[id] = msg
		} else {
			out[id] = nil
			missing = append(missing, id)
		}
	}
	got := make([]*wire.MsgTx, len(missing))
	err := forEach(ctx, len(missing), func(ctx context.Context, i int) (err error) {
		got[i], err = s.rawTx(ctx, missing[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, id := range missing {
		if got[i] == nil {
			delete(out, id)
		} else {
			out[id] = got[i]
		}
	}
	return out, nil
}

// rawTx asks for one transaction and keeps it; nil when the server does
// not know it.
func (s *Source) rawTx(ctx context.Context, txid string) (*wire.MsgTx, error) {
	var rawHex string
	err := s.call(ctx, "blockchain.transaction.get", []any{txid}, &rawHex)
	if re, ok := rpcErrorOf(err); ok && re.saysNotFound() {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	msg, size, err := decodeTx(rawHex, txid)
	if err != nil {
		return nil, err
	}
	s.txs.keep(txid, msg, size)
	return msg, nil
}
