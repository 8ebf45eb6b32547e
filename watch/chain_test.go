package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// testChain is a chain source in memory that a test mines, pays,
// replaces and reorgs by hand. It answers as an Esplora would.
type testChain struct {
	mu      sync.Mutex
	blocks  [][]chain.Tx // blocks[h] are block h's transactions
	hashes  []string
	mempool []chain.Tx
	failing map[string]bool // addresses whose reads fail
	fork    int             // bumps the hashes of blocks mined after a reorg
}

func newTestChain() *testChain {
	c := &testChain{failing: map[string]bool{}}
	c.mine() // block 0
	return c
}

func hashOf(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// pay puts a transaction paying value to address in the mempool, spending
// the output spends, and returns it.
func (c *testChain) pay(address string, value int64, spends string) chain.Tx {
	c.mu.Lock()
	defer c.mu.Unlock()
	tx := chain.Tx{
		TxID:    hashOf(address + "|" + strconv.FormatInt(value, 10) + "|" + spends),
		Inputs:  []chain.TxIO{{Address: "someone-else", Value: value + 500, Spends: spends}},
		Outputs: []chain.TxIO{{Address: address, Value: value}},
		Fee:     500,
	}
	c.mempool = append(c.mempool, tx)
	return tx
}

// mine makes a block of the whole mempool.
func (c *testChain) mine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	height := len(c.blocks)
	hash := hashOf("block|" + strconv.Itoa(height) + "|" + strconv.Itoa(c.fork))
	txs := c.mempool
	for i := range txs {
		txs[i].Confirmed, txs[i].BlockHeight, txs[i].BlockHash = true, int64(height), hash
		txs[i].BlockTime = time.Unix(1_790_000_000+int64(height)*600, 0).UTC()
	}
	c.blocks, c.hashes, c.mempool = append(c.blocks, txs), append(c.hashes, hash), nil
}

// drop takes txid out of the mempool.
func (c *testChain) drop(txid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mempool = slices.DeleteFunc(c.mempool, func(t chain.Tx) bool { return t.TxID == txid })
}

// reorg disconnects the newest depth blocks; their transactions go back
// to the mempool unless keep says otherwise. Later blocks get new hashes.
func (c *testChain) reorg(depth int, keep func(chain.Tx) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cut := len(c.blocks) - depth
	for _, b := range c.blocks[cut:] {
		for _, tx := range b {
			if keep(tx) {
				tx.Confirmed, tx.BlockHeight, tx.BlockHash, tx.BlockTime = false, 0, "", time.Time{}
				c.mempool = append(c.mempool, tx)
			}
		}
	}
	c.blocks, c.hashes = c.blocks[:cut], c.hashes[:cut]
	c.fork++
}

func (c *testChain) tip() chain.BlockRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	return chain.BlockRef{Height: int64(len(c.blocks) - 1), Hash: c.hashes[len(c.hashes)-1]}
}

var errDown = &chain.UpstreamError{Op: "test", Err: errors.New("this address fails")}

// involving lists the confirmed transactions touching address, newest
// first, and its mempool ones.
func (c *testChain) involving(address string) (confirmed, mempool []chain.Tx) {
	for h := len(c.blocks) - 1; h >= 0; h-- {
		for _, tx := range slices.Backward(c.blocks[h]) {
			if tx.Involves(address) {
				confirmed = append(confirmed, tx)
			}
		}
	}
	for _, tx := range c.mempool {
		if tx.Involves(address) {
			mempool = append(mempool, tx)
		}
	}
	return confirmed, mempool
}

func (c *testChain) AddressStats(_ context.Context, address string) (chain.AddressStats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing[address] {
		return chain.AddressStats{}, errDown
	}
	confirmed, mempool := c.involving(address)
	s := chain.AddressStats{Address: address}
	for _, side := range []struct {
		txs []chain.Tx
		to  *chain.TxoStats
	}{{confirmed, &s.Chain}, {mempool, &s.Mempool}} {
		for _, tx := range side.txs {
			side.to.TxCount++
			if n := tx.NetAmount(address); n > 0 {
				side.to.FundedTxoSum += n
			} else {
				side.to.SpentTxoSum -= n
			}
		}
	}
	return s, nil
}

func (c *testChain) ChainTxs(_ context.Context, address, last string) ([]chain.Tx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing[address] {
		return nil, errDown
	}
	confirmed, _ := c.involving(address)
	if last != "" {
		i := slices.IndexFunc(confirmed, func(t chain.Tx) bool { return t.TxID == last })
		if i < 0 {
			return nil, nil
		}
		confirmed = confirmed[i+1:]
	}
	return confirmed[:min(len(confirmed), chain.ChainPageSize)], nil
}

func (c *testChain) MempoolTxs(_ context.Context, address string) ([]chain.Tx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing[address] {
		return nil, errDown
	}
	_, mempool := c.involving(address)
	return mempool, nil
}

func (c *testChain) Tx(_ context.Context, txid string) (chain.Tx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.blocks {
		for _, tx := range b {
			if tx.TxID == txid {
				return tx, nil
			}
		}
	}
	for _, tx := range c.mempool {
		if tx.TxID == txid {
			return tx, nil
		}
	}
	return chain.Tx{}, chain.ErrNotFound
}

func (c *testChain) Tip(context.Context) (chain.BlockRef, error) { return c.tip(), nil }

func (c *testChain) BlockHash(_ context.Context, height int64) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if height < 0 || height >= int64(len(c.hashes)) {
		return "", chain.ErrNotFound
	}
	return c.hashes[height], nil
}
