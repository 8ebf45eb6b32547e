package electrum

import (
	"context"
	"slices"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/wire"
)

// A chain.Tx is put together from the raw transaction, the raw
// transactions its inputs spend from (for the addresses and values of
// the outputs they spend, Esplora's vin[].prevout), and the header of
// its block (for the block's hash and time).

const (
	// prevTxsMax bounds the transactions one call reads for the outputs
	// its transactions' inputs spend. A page spending from more is an
	// *UpstreamError, never a page without its inputs.
	prevTxsMax = 5_000
	// satoshisMax is 21 million BTC: no value or fee can exceed it.
	satoshisMax = 21_000_000 * 100_000_000
)

// placed is a transaction to put together: its ID, and its block's
// height (0: unconfirmed) and, when known already, header.
type placed struct {
	txid   string
	height int64
	block  *header
}

// txsOf puts together each of txs, in order, from msgs (which hold them
// all): the transactions their inputs spend are read, and the headers of
// their blocks.
func (s *Source) txsOf(ctx context.Context, txs []placed, msgs map[string]*wire.MsgTx) ([]chain.Tx, error) {
	var prevIDs []string
	var heights []int64
	for _, p := range txs {
		msg := msgs[p.txid]
		if !blockchain.IsCoinBaseTx(msg) {
			for _, in := range msg.TxIn {
				prevIDs = append(prevIDs, in.PreviousOutPoint.Hash.String())
			}
		}
		if p.height > 0 && p.block == nil {
			heights = append(heights, p.height)
		}
	}
	slices.Sort(prevIDs)
	prevIDs = slices.Compact(prevIDs)
	if len(prevIDs) > prevTxsMax {
		return nil, unusablef("the transactions spend from more than %d transactions, more than the Electrum source reads at once", prevTxsMax)
	}
	var (
		prevs   map[string]*wire.MsgTx
		headers map[int64]header
	)
	err := forEach(ctx, 2, func(ctx context.Context, i int) (err error) {
		if i == 0 {
			prevs, err = s.rawTxs(ctx, prevIDs)
		} else {
			headers, err = s.headersAt(ctx, heights)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]chain.Tx, 0, len(txs))
	for _, p := range txs {
		block := p.block
		if p.height > 0 && block == nil {
			hd, ok := headers[p.height]
			if !ok {
				return nil, unusablef("no header at a transaction's height")
			}
			block = &hd
		}
		t, err := s.assemble(p.txid, msgs[p.txid], prevs, block)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// assemble is msg as a chain.Tx: its outputs, the outputs its inputs
// spend (from prevs), its fee, and its block (nil: unconfirmed).
func (s *Source) assemble(txid string, msg *wire.MsgTx, prevs map[string]*wire.MsgTx, block *header) (chain.Tx, error) {
	t := chain.Tx{TxID: txid, Outputs: make([]chain.TxIO, 0, len(msg.TxOut))}
	var out int64
	for _, o := range msg.TxOut {
		io, err := s.txIO(o)
		if err != nil {
			return chain.Tx{}, err
		}
		if out += io.Value; out > satoshisMax {
			return chain.Tx{}, unusablef("a transaction pays more than there is")
		}
		t.Outputs = append(t.Outputs, io)
	}
	if !blockchain.IsCoinBaseTx(msg) {
		var in int64
		t.Inputs = make([]chain.TxIO, 0, len(msg.TxIn))
		for _, txIn := range msg.TxIn {
			spent := txIn.PreviousOutPoint
			prevID := spent.Hash.String()
			prev, ok := prevs[prevID]
			if !ok || int(spent.Index) >= len(prev.TxOut) {
				return chain.Tx{}, unusablef("a transaction spends an output the server does not know")
			}
			io, err := s.txIO(prev.TxOut[spent.Index])
			if err != nil {
				return chain.Tx{}, err
			}
			io.Spends = chain.Outpoint(prevID, spent.Index)
			if in += io.Value; in > satoshisMax {
				return chain.Tx{}, unusablef("a transaction spends more than there is")
			}
			t.Inputs = append(t.Inputs, io)
		}
		if t.Fee = in - out; t.Fee < 0 {
			return chain.Tx{}, unusablef("a transaction spends less than it pays")
		}
	}
	if block != nil {
		t.Confirmed, t.BlockHeight, t.BlockHash, t.BlockTime = true, block.height, block.hash, block.time
	}
	return t, nil
}

// txIO is an output as chain names it: its value and the address it
// pays, if any.
func (s *Source) txIO(o *wire.TxOut) (chain.TxIO, error) {
	if o.Value < 0 || o.Value > satoshisMax {
		return chain.TxIO{}, unusablef("a value out of range")
	}
	return chain.TxIO{Address: outputAddress(o.PkScript, s.params), Value: o.Value}, nil
}
