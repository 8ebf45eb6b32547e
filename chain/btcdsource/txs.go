package btcdsource

import (
	"context"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// From btcd's answers to chain.Txs. A searchrawtransactions answer is
// filtered to the address asked about (filteraddrs): each transaction's
// hex, its block, the inputs spending from the address with the outputs
// they spend, and the outputs paying it. Unfiltered, a transaction that
// pays fifty watched addresses came back whole, its fifty outputs
// written out by btcd and decoded here, in every read of every one of
// them: 20 KB of JSON each time, four times a paid address, where the
// hex is 3.5 KB (a block paying 6,000 watched addresses in 120 such
// transactions took the follower 45 s to read, bench notify). The hex
// holds every output and every outpoint spent; the outputs that the
// other inputs spend come from the transactions that made them, kept by
// txid (outputs.go) or asked for once (getrawtransaction, in batches).
// The chain.Tx is the same as from the whole answer.

// toTxs checks the transactions of one searchrawtransactions answer and
// turns them into chain.Txs, in the same order, without their block
// heights, which the caller works out (heights.go).
func (s *Source) toTxs(ctx context.Context, op string, raws []rpcTx) ([]chain.Tx, error) {
	msgs := make([]*wire.MsgTx, len(raws))
	ids := make([]string, len(raws))
	spent := map[wire.OutPoint]chain.TxIO{} // what the answer says the inputs spend
	for i, raw := range raws {
		id, ok := chain.CanonicalTxID(raw.TxID)
		if !ok {
			return nil, malformed(op, "a txid that is not 64 hex characters")
		}
		msg, err := decodeTx(op, raw.Hex, id)
		if err != nil {
			return nil, err
		}
		msgs[i], ids[i] = msg, id
		for _, vin := range raw.Vin {
			if vin.PrevOut == nil {
				continue
			}
			hash, err := chainhash.NewHashFromStr(vin.TxID)
			if err != nil {
				return nil, malformed(op, "an input of %s spends from a txid that is not 64 hex characters", id)
			}
			io, err := toTxIO(op, vin.PrevOut.Value, soleAddress("", vin.PrevOut.Addresses))
			if err != nil {
				return nil, err
			}
			spent[wire.OutPoint{Hash: *hash, Index: vin.Vout}] = io
		}
	}
	outs := make([][]chain.TxIO, len(msgs))
	prevs := map[string][]chain.TxIO{}
	for i, msg := range msgs {
		// Naming fifty outputs' addresses (bech32) cost as much as
		// decoding them: kept, they are named once.
		kept, ok := s.outputs.get(ids[i])
		if ok && len(kept) == len(msg.TxOut) {
			outs[i] = kept
		} else {
			var err error
			if outs[i], err = s.outputsOf(op, msg); err != nil {
				return nil, err
			}
			s.outputs.keep(ids[i], outs[i])
		}
		prevs[ids[i]] = outs[i]
	}
	missing := s.notKept(msgs, spent, prevs)
	if err := s.askOutputs(ctx, op, missing, prevs); err != nil {
		return nil, err
	}
	txs := make([]chain.Tx, len(raws))
	for i, raw := range raws {
		tx, err := build(op, ids[i], msgs[i], outs[i], func(p wire.OutPoint) (chain.TxIO, bool) {
			if io, ok := spent[p]; ok {
				return io, true
			}
			if o := prevs[p.Hash.String()]; int(p.Index) < len(o) {
				return o[p.Index], true
			}
			return chain.TxIO{}, false
		})
		if err != nil {
			return nil, err
		}
		if tx.Confirmed = raw.confirmed(); tx.Confirmed {
			if _, ok := chain.CanonicalTxID(raw.BlockHash); !ok || raw.Confirmations < 1 || raw.BlockTime <= 0 {
				return nil, malformed(op, "confirmed %s without its block, confirmations and time", tx.TxID)
			}
			tx.BlockTime = time.Unix(raw.BlockTime, 0).UTC()
			tx.BlockHash = blockOf(raw)
		}
		txs[i] = tx
	}
	return txs, nil
}

// build is the transaction msg, named id, paying outs, each input
// spending the output prevOf says; without its block.
func build(op, id string, msg *wire.MsgTx, outs []chain.TxIO, prevOf func(wire.OutPoint) (chain.TxIO, bool)) (chain.Tx, error) {
	tx := chain.Tx{TxID: id, Outputs: make([]chain.TxIO, len(outs))}
	var out int64
	for i, o := range outs {
		tx.Outputs[i] = o
		out += o.Value
	}
	var in int64
	tx.Inputs = make([]chain.TxIO, 0, len(msg.TxIn))
	if blockchain.IsCoinBaseTx(msg) {
		if out > satoshisMax {
			return chain.Tx{}, malformed(op, "%s spends less than it pays, or more than there is", id)
		}
		return tx, nil
	}
	for _, txIn := range msg.TxIn {
		p := txIn.PreviousOutPoint
		io, ok := prevOf(p)
		if !ok {
			return chain.Tx{}, malformed(op, "an input of %s spends an output its transaction does not have", id)
		}
		io.Spends = chain.Outpoint(p.Hash.String(), p.Index)
		in += io.Value
		tx.Inputs = append(tx.Inputs, io)
	}
	if tx.Fee = in - out; tx.Fee < 0 || in > satoshisMax || out > satoshisMax {
		return chain.Tx{}, malformed(op, "%s spends less than it pays, or more than there is", id)
	}
	return tx, nil
}

// notKept puts in prevs the outputs kept of the transactions msgs'
// inputs spend from (but the outpoints in spent, known already), and
// returns the IDs of those not kept, in prevs with nil until asked for.
func (s *Source) notKept(msgs []*wire.MsgTx, spent map[wire.OutPoint]chain.TxIO, prevs map[string][]chain.TxIO) []string {
	var missing []string
	for _, msg := range msgs {
		if blockchain.IsCoinBaseTx(msg) {
			continue
		}
		for _, in := range msg.TxIn {
			if _, ok := spent[in.PreviousOutPoint]; ok {
				continue
			}
			id := in.PreviousOutPoint.Hash.String()
			if _, ok := prevs[id]; ok {
				continue
			}
			if kept, ok := s.outputs.get(id); ok {
				prevs[id] = kept
				continue
			}
			prevs[id] = nil
			missing = append(missing, id)
		}
	}
	return missing
}

// outputsOf is msg's outputs as chain names them (txIO).
func (s *Source) outputsOf(op string, msg *wire.MsgTx) ([]chain.TxIO, error) {
	outs := make([]chain.TxIO, len(msg.TxOut))
	for i, o := range msg.TxOut {
		var err error
		if outs[i], err = s.txIO(op, o); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// askOutputs asks btcd for the transactions ids (getrawtransaction, not
// verbose, prevBatchMax a request) and puts their outputs in prevs, and
// keeps them. btcd knowing none by one of the IDs makes the answer that
// named it malformed.
func (s *Source) askOutputs(ctx context.Context, op string, ids []string, prevs map[string][]chain.TxIO) error {
	for from := 0; from < len(ids); from += prevBatchMax {
		batch := ids[from:min(from+prevBatchMax, len(ids))]
		hexes := make([]string, len(batch))
		calls := make([]rpcCall, len(batch))
		verbose := 0
		for i, id := range batch {
			calls[i] = rpcCall{cmd: btcjson.NewGetRawTransactionCmd(id, &verbose), result: &hexes[i]}
		}
		if err := s.rpc.batch(ctx, op, calls); err != nil {
			return err
		}
		for i, id := range batch {
			if calls[i].err != nil {
				return malformed(op, "btcd does not know a transaction an input spends from (RPC error %d)", calls[i].err.Code)
			}
			prev, err := decodeTx(op, hexes[i], id)
			if err != nil {
				return err
			}
			outs, err := s.outputsOf(op, prev)
			if err != nil {
				return err
			}
			s.outputs.keep(id, outs)
			prevs[id] = outs
		}
	}
	return nil
}
