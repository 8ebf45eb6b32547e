package regtest

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Mine mines count blocks, which take the mempool's transactions, and
// returns their hashes, oldest first.
func (n *Node) Mine(count int) ([]string, error) {
	hashes, err := n.h.Client.Generate(uint32(count))
	if err != nil {
		return nil, fmt.Errorf("regtest: mining %d blocks: %w", count, err)
	}
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = h.String()
	}
	return out, nil
}

// MineEmpty mines count blocks that hold only their coinbase, leaving
// the mempool as it is, and returns their hashes, oldest first.
func (n *Node) MineEmpty(count int) ([]string, error) {
	out := make([]string, 0, count)
	for range count {
		b, err := n.h.GenerateAndSubmitBlock(nil, -1, time.Time{})
		if err != nil {
			return nil, fmt.Errorf("regtest: mining an empty block: %w", err)
		}
		out = append(out, b.Hash().String())
	}
	return out, nil
}

// Tip is the node's best block.
func (n *Node) Tip() (height int64, hash string, err error) {
	h, height32, err := n.h.Client.GetBestBlock()
	if err != nil {
		return 0, "", err
	}
	return int64(height32), h.String(), nil
}

// Invalidate is btcd's invalidateblock: the block and every block after
// it leave the best chain for good, the chain falls back to its parent,
// and their transactions (but the coinbases) go back to the mempool.
func (n *Node) Invalidate(hash string) error {
	h, err := chainhash.NewHashFromStr(hash)
	if err != nil {
		return err
	}
	if err := n.h.Client.InvalidateBlock(h); err != nil {
		return fmt.Errorf("regtest: invalidating %s: %w", hash, err)
	}
	return nil
}

// Reorg replaces the newest depth blocks with a longer branch of depth+1
// empty blocks, as a competing miner would, and returns the new blocks'
// hashes, oldest first. The replaced blocks' transactions are back in
// the mempool until the next Mine.
func (n *Node) Reorg(depth int) ([]string, error) {
	height, _, err := n.Tip()
	if err != nil {
		return nil, err
	}
	if depth < 1 || int64(depth) > height {
		return nil, fmt.Errorf("regtest: cannot replace %d blocks of a chain %d high", depth, height)
	}
	first, err := n.h.Client.GetBlockHash(height - int64(depth) + 1)
	if err != nil {
		return nil, err
	}
	if err := n.Invalidate(first.String()); err != nil {
		return nil, err
	}
	return n.MineEmpty(depth + 1)
}
