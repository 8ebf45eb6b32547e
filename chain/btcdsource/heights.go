package btcdsource

import (
	"context"
	"fmt"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
)

// Block heights. searchrawtransactions names a confirmed transaction's
// block by hash and its confirmations, not by height. All confirmations
// of one answer count from the same tip, so one block's height (kept by
// hash, since a block's height never changes, or asked with
// getblockheader) gives the tip's, and the tip's gives every other's:
// height = tip + 1 - confirmations. A page costs at most one request for
// its heights, and none when a block of it was seen before.

// Tip is getbestblockhash, and getblockheader for its height unless the
// block was seen before.
func (s *Source) Tip(ctx context.Context) (chain.BlockRef, error) {
	var hash string
	if err := s.rpc.call(ctx, "tip", btcjson.NewGetBestBlockHashCmd(), &hash); err != nil {
		return chain.BlockRef{}, err
	}
	h, ok := chain.CanonicalTxID(hash)
	if !ok {
		return chain.BlockRef{}, malformed("tip", "%q is no block hash", hash)
	}
	height, err := s.blockHeight(ctx, "tip", h)
	if err != nil {
		return chain.BlockRef{}, err
	}
	return chain.BlockRef{Height: height, Hash: h}, nil
}

// BlockHash is getblockhash: the hash of the block at height on btcd's
// best chain, chain.ErrNotFound above its tip.
func (s *Source) BlockHash(ctx context.Context, height int64) (string, error) {
	if height < 0 {
		return "", fmt.Errorf("%w: a height is not negative", chain.ErrInvalidArgument)
	}
	var hash string
	err := s.rpc.call(ctx, "block hash", btcjson.NewGetBlockHashCmd(height), &hash)
	if re, ok := rpcErrorOf(err); ok && re.code == btcjson.ErrRPCOutOfRange {
		return "", chain.ErrNotFound // getblockhash's one error: no block at that height
	}
	if err != nil {
		return "", err
	}
	h, ok := chain.CanonicalTxID(hash)
	if !ok {
		return "", malformed("block hash", "%q is no block hash", hash)
	}
	s.heights.Add(h, height)
	return h, nil
}

// blockHeight is the height of the block hash, remembered or asked.
func (s *Source) blockHeight(ctx context.Context, op, hash string) (int64, error) {
	if height, ok := s.heights.Get(hash); ok {
		return height, nil
	}
	verbose := true
	var header rpcHeader
	if err := s.rpc.call(ctx, op, btcjson.NewGetBlockHeaderCmd(hash, &verbose), &header); err != nil {
		return 0, err
	}
	if got, _ := chain.CanonicalTxID(header.Hash); got != hash || header.Height < 0 {
		return 0, malformed(op, "the header of another block, or of none")
	}
	s.heights.Add(hash, header.Height)
	return header.Height, nil
}

// setHeights gives each confirmed transaction of one searchrawtransactions
// answer its block height (see above). txs and raws are in the same
// order, oldest first. The anchor is the newest block of the answer
// whose height is known, or else the newest block: the one nearest the
// tip, which Tip has most likely seen.
func (s *Source) setHeights(ctx context.Context, op string, txs []chain.Tx, raws []rpcTx) error {
	var tip int64 = -1
	newest := -1
	for i := len(raws) - 1; i >= 0 && tip < 0; i-- {
		if !raws[i].confirmed() {
			continue
		}
		if newest < 0 {
			newest = i
		}
		if height, ok := s.heights.Get(blockOf(raws[i])); ok {
			tip = height + raws[i].Confirmations - 1
		}
	}
	if tip < 0 && newest >= 0 {
		height, err := s.blockHeight(ctx, op, blockOf(raws[newest]))
		if err != nil {
			return err
		}
		tip = height + raws[newest].Confirmations - 1
	}
	for i, raw := range raws {
		if !raw.confirmed() {
			continue
		}
		height := tip + 1 - raw.Confirmations
		if known, ok := s.heights.Peek(blockOf(raw)); height < 0 || (ok && known != height) {
			return malformed(op, "confirmations that do not fit the blocks' heights")
		}
		txs[i].BlockHeight = height
	}
	return nil
}

// blockOf is the hash of raw's block in lower case, as heights are kept
// by (raw.toTx checked it is 64 hex characters).
func blockOf(raw rpcTx) string {
	hash, _ := chain.CanonicalTxID(raw.BlockHash)
	return hash
}
