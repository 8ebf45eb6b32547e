package regtest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// MineWithout mines one block that takes every mempool transaction but
// those named in leave, as a miner who had not seen them would, and
// returns its hash. What it leaves stays in the mempool for a later
// Mine. A Reorg's branch built with it confirms some of the reorged
// payments again and leaves others out.
func (n *Node) MineWithout(leave []string) (string, error) {
	ids, err := n.h.Client.GetRawMempool()
	if err != nil {
		return "", fmt.Errorf("regtest: reading the mempool: %w", err)
	}
	byID := map[chainhash.Hash]*btcutil.Tx{}
	for _, id := range ids {
		if slices.Contains(leave, id.String()) {
			continue
		}
		tx, err := n.h.Client.GetRawTransaction(id)
		if err != nil {
			return "", fmt.Errorf("regtest: reading %s from the mempool: %w", id, err)
		}
		byID[*id] = tx
	}
	b, err := n.h.GenerateAndSubmitBlock(parentsFirst(byID), -1, time.Time{})
	if err != nil {
		return "", fmt.Errorf("regtest: mining a block without %d transactions: %w", len(leave), err)
	}
	return b.Hash().String(), nil
}

// parentsFirst orders txs so that each comes after any of them it spends
// from, as a block must; otherwise by txid, so a block is the same from
// one run to the next. A transaction whose parent is not in txs is still
// taken: its parent is confirmed (or the block is refused, saying why).
func parentsFirst(txs map[chainhash.Hash]*btcutil.Tx) []*btcutil.Tx {
	ids := make([]chainhash.Hash, 0, len(txs))
	for id := range txs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b chainhash.Hash) int { return slices.Compare(a[:], b[:]) })
	var out []*btcutil.Tx
	placed := map[chainhash.Hash]bool{}
	var place func(id chainhash.Hash)
	place = func(id chainhash.Hash) {
		if placed[id] {
			return
		}
		placed[id] = true
		for _, in := range txs[id].MsgTx().TxIn {
			if _, ok := txs[in.PreviousOutPoint.Hash]; ok {
				place(in.PreviousOutPoint.Hash)
			}
		}
		out = append(out, txs[id])
	}
	for _, id := range ids {
		place(id)
	}
	return out
}

// TxStatus is where the node has a transaction: in a block of its best
// chain (Block), in its mempool, or neither (a transaction reorged out
// and then double-spent, or one replaced in the mempool).
type TxStatus struct {
	Block   string // the block's hash when confirmed
	Height  int64
	Mempool bool
}

// Known reports whether the node has the transaction at all.
func (s TxStatus) Known() bool { return s.Block != "" || s.Mempool }

// Status asks the node (its transaction index and its mempool) where
// txid is now.
func (n *Node) Status(txid string) (TxStatus, error) {
	h, err := chainhash.NewHashFromStr(txid)
	if err != nil {
		return TxStatus{}, err
	}
	v, err := n.h.Client.GetRawTransactionVerbose(h)
	var rpcErr *btcjson.RPCError
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == btcjson.ErrRPCNoTxInfo:
		return TxStatus{}, nil
	case err != nil:
		return TxStatus{}, fmt.Errorf("regtest: looking up %s: %w", txid, err)
	case v.BlockHash == "" || v.Confirmations == 0:
		return TxStatus{Mempool: true}, nil
	}
	block, err := chainhash.NewHashFromStr(v.BlockHash)
	if err != nil {
		return TxStatus{}, err
	}
	header, err := n.h.Client.GetBlockHeaderVerbose(block)
	if err != nil {
		return TxStatus{}, fmt.Errorf("regtest: reading block %s: %w", v.BlockHash, err)
	}
	if header.Confirmations <= 0 {
		// The index still names a block that left the best chain.
		return TxStatus{}, nil
	}
	return TxStatus{Block: v.BlockHash, Height: int64(header.Height)}, nil
}

// BlockHash is the hash of the best chain's block at height.
func (n *Node) BlockHash(height int64) (string, error) {
	h, err := n.h.Client.GetBlockHash(height)
	if err != nil {
		return "", fmt.Errorf("regtest: the block at %d: %w", height, err)
	}
	return h.String(), nil
}
