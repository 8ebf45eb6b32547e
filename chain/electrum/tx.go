package electrum

import (
	"context"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/wire"
)

// blockLagMax is how many blocks the server's own chain may trail its
// node's (or its tip told trail the server's) when a transaction's
// height is worked out from its confirmations.
const blockLagMax = 3

// wireVerboseTx is the part of blockchain.transaction.get's verbose
// answer (the node's getrawtransaction, passed on) the source reads.
type wireVerboseTx struct {
	Hex           string `json:"hex"`
	BlockHash     string `json:"blockhash"`
	Confirmations int64  `json:"confirmations"`
}

// Tx is blockchain.transaction.get with verbose, which says the
// transaction's block (electrs, Fulcrum and ElectrumX pass on their
// node's answer), then the transactions its inputs spend from and the
// headers around its height, each unless kept. chain.ErrNotFound when
// the server knows no such transaction in its chain or mempool.
func (s *Source) Tx(ctx context.Context, txid string) (chain.Tx, error) {
	const op = "tx"
	id, ok := chain.CanonicalTxID(txid)
	if !ok {
		return chain.Tx{}, chain.ErrNotFound
	}
	t, err := s.tx(ctx, id)
	return t, upstream(op, err)
}

func (s *Source) tx(ctx context.Context, id string) (chain.Tx, error) {
	var v wireVerboseTx
	err := s.call(ctx, "blockchain.transaction.get", []any{id, true}, &v)
	if re, ok := rpcErrorOf(err); ok && re.saysNotFound() {
		return chain.Tx{}, chain.ErrNotFound
	}
	if err != nil {
		return chain.Tx{}, err
	}
	msg, size, err := decodeTx(v.Hex, id)
	if err != nil {
		return chain.Tx{}, err
	}
	s.txs.keep(id, msg, size)
	p := placed{txid: id}
	if v.BlockHash != "" {
		blockHash, ok := chain.CanonicalTxID(v.BlockHash)
		if !ok {
			return chain.Tx{}, unusablef("a transaction's block hash is not 64 hex characters")
		}
		if v.Confirmations < 1 {
			// In a block that left the best chain, and not back in the
			// mempool (the node looks there first).
			return chain.Tx{}, chain.ErrNotFound
		}
		block, err := s.blockOf(ctx, blockHash, v.Confirmations)
		if err != nil {
			return chain.Tx{}, err
		}
		p.height, p.block = block.height, &block
	}
	txs, err := s.txsOf(ctx, []placed{p}, map[string]*wire.MsgTx{id: msg})
	if err != nil {
		return chain.Tx{}, err
	}
	return txs[0], nil
}

// blockOf is the header of the block blockHash, which has
// confirmations on the server's node: at the tip's height less
// confirmations, plus one, or up to blockLagMax above, since the
// server's chain may trail its node's. The tip is the newest the server
// told; when the block is not found under it, the tip is asked again
// (a notification of it may be on its way).
func (s *Source) blockOf(ctx context.Context, blockHash string, confirmations int64) (header, error) {
	ss, err := s.session(ctx)
	if err != nil {
		return header{}, err
	}
	tip := ss.newestTip()
	for attempt := 1; ; attempt++ {
		block, found, err := s.findBlock(ctx, blockHash, tip.height-confirmations+1, tip.height)
		if err != nil || found {
			return block, err
		}
		if attempt == 2 {
			return header{}, unusablef("a transaction's block is not on the server's chain where its confirmations put it")
		}
		if tip, err = s.tip(ctx); err != nil {
			return header{}, err
		}
	}
}

// findBlock looks for the block blockHash at the heights from to
// from+blockLagMax, none above tipHeight.
func (s *Source) findBlock(ctx context.Context, blockHash string, from, tipHeight int64) (header, bool, error) {
	if from < 1 {
		return header{}, false, unusablef("a transaction with more confirmations than the chain has blocks")
	}
	var heights []int64
	for h := from; h <= min(from+blockLagMax, tipHeight); h++ {
		heights = append(heights, h)
	}
	headers, err := s.headersAt(ctx, heights)
	if err != nil {
		return header{}, false, err
	}
	for _, h := range heights {
		if hd := headers[h]; hd.hash == blockHash {
			return hd, true, nil
		}
	}
	return header{}, false, nil
}
