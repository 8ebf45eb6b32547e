package btcdsource

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

const (
	// prevTxsMax bounds the transactions whose outputs one transaction's
	// inputs spend, which Tx reads to name the inputs' addresses and
	// values. A transaction spending from more is an *UpstreamError.
	prevTxsMax = 1_000
	// prevBatchMax is how many of them one request asks for.
	prevBatchMax = 100
)

// Tx is getrawtransaction (verbose), then the transactions its inputs
// spend from (getrawtransaction in batches of 100, unless it is a
// coinbase), and the block's height unless seen before: 2 or 3 requests
// for most transactions. chain.ErrNotFound when btcd knows no such
// transaction, in a block or in its mempool.
func (s *Source) Tx(ctx context.Context, txid string) (chain.Tx, error) {
	const op = "tx"
	id, ok := chain.CanonicalTxID(txid)
	if !ok {
		return chain.Tx{}, chain.ErrNotFound
	}
	verbose := 1
	var raw rpcTx
	err := s.rpc.call(ctx, op, btcjson.NewGetRawTransactionCmd(id, &verbose), &raw)
	if re, ok := rpcErrorOf(err); ok && re.code == btcjson.ErrRPCNoTxInfo {
		return chain.Tx{}, chain.ErrNotFound
	}
	if err != nil {
		return chain.Tx{}, err
	}
	msg, err := decodeTx(op, raw.Hex, id)
	if err != nil {
		return chain.Tx{}, err
	}
	tx := chain.Tx{TxID: id, Confirmed: raw.confirmed(), Outputs: make([]chain.TxIO, 0, len(msg.TxOut))}
	var out int64
	for _, o := range msg.TxOut {
		io, err := s.txIO(op, o)
		if err != nil {
			return chain.Tx{}, err
		}
		out += io.Value
		tx.Outputs = append(tx.Outputs, io)
	}
	if !blockchain.IsCoinBaseTx(msg) {
		if tx.Inputs, err = s.inputs(ctx, op, msg); err != nil {
			return chain.Tx{}, err
		}
		var in int64
		for _, io := range tx.Inputs {
			in += io.Value
		}
		if tx.Fee = in - out; tx.Fee < 0 || in > satoshisMax {
			return chain.Tx{}, malformed(op, "%s spends less than it pays, or more than there is", id)
		}
	}
	if tx.Confirmed {
		hash, ok := chain.CanonicalTxID(raw.BlockHash)
		if !ok || raw.BlockTime <= 0 {
			return chain.Tx{}, malformed(op, "confirmed %s without its block and time", id)
		}
		tx.BlockHash = hash
		if tx.BlockHeight, err = s.blockHeight(ctx, op, hash); err != nil {
			return chain.Tx{}, err
		}
		tx.BlockTime = time.Unix(raw.BlockTime, 0).UTC()
	}
	return tx, nil
}

// inputs are the outputs msg's inputs spend, read from the transactions
// that made them.
func (s *Source) inputs(ctx context.Context, op string, msg *wire.MsgTx) ([]chain.TxIO, error) {
	var prevIDs []string
	seen := map[chainhash.Hash]bool{}
	for _, in := range msg.TxIn {
		if h := in.PreviousOutPoint.Hash; !seen[h] {
			seen[h] = true
			prevIDs = append(prevIDs, h.String())
		}
	}
	if len(prevIDs) > prevTxsMax {
		return nil, &chain.UpstreamError{Op: op, Status: http.StatusOK,
			Err: fmt.Errorf("the transaction spends from more than %d transactions, more than the btcd source reads for one", prevTxsMax)}
	}
	prevs := make(map[string]*wire.MsgTx, len(prevIDs))
	for from := 0; from < len(prevIDs); from += prevBatchMax {
		ids := prevIDs[from:min(from+prevBatchMax, len(prevIDs))]
		hexes := make([]string, len(ids))
		calls := make([]rpcCall, len(ids))
		verbose := 0
		for i, id := range ids {
			calls[i] = rpcCall{cmd: btcjson.NewGetRawTransactionCmd(id, &verbose), result: &hexes[i]}
		}
		if err := s.rpc.batch(ctx, op, calls); err != nil {
			return nil, err
		}
		for i, id := range ids {
			if calls[i].err != nil {
				return nil, malformed(op, "btcd does not know a transaction an input spends from (RPC error %d)", calls[i].err.Code)
			}
			prev, err := decodeTx(op, hexes[i], id)
			if err != nil {
				return nil, err
			}
			prevs[id] = prev
		}
	}
	inputs := make([]chain.TxIO, 0, len(msg.TxIn))
	for _, in := range msg.TxIn {
		prev := prevs[in.PreviousOutPoint.Hash.String()]
		if int(in.PreviousOutPoint.Index) >= len(prev.TxOut) {
			return nil, malformed(op, "an input spends an output its transaction does not have")
		}
		io, err := s.txIO(op, prev.TxOut[in.PreviousOutPoint.Index])
		if err != nil {
			return nil, err
		}
		io.Spends = chain.Outpoint(in.PreviousOutPoint.Hash.String(), in.PreviousOutPoint.Index)
		inputs = append(inputs, io)
	}
	return inputs, nil
}

// txIO is an output as chain names it: its value, and its one address as
// btcd would write it (soleAddress).
func (s *Source) txIO(op string, out *wire.TxOut) (chain.TxIO, error) {
	if out.Value < 0 || out.Value > satoshisMax {
		return chain.TxIO{}, malformed(op, "a value out of range")
	}
	io := chain.TxIO{Value: out.Value}
	if _, addrs, _, err := txscript.ExtractPkScriptAddrs(out.PkScript, s.params); err == nil && len(addrs) == 1 {
		io.Address = addrs[0].EncodeAddress()
	}
	return io, nil
}

// decodeTx decodes a raw transaction in hex, which must be the one named
// id.
func decodeTx(op, rawHex, id string) (*wire.MsgTx, error) {
	msg, err := decodeRawTx(op, rawHex)
	if err != nil {
		return nil, err
	}
	if msg.TxHash().String() != id {
		return nil, malformed(op, "asked for one transaction, got another")
	}
	return msg, nil
}

// decodeRawTx decodes a raw transaction in hex.
func decodeRawTx(op, rawHex string) (*wire.MsgTx, error) {
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		return nil, malformed(op, "a transaction that is not hex")
	}
	var msg wire.MsgTx
	if err := msg.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, malformed(op, "a transaction that does not decode")
	}
	return &msg, nil
}
