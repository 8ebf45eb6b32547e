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
	outs, err := s.outputsOf(op, msg)
	if err != nil {
		return chain.Tx{}, err
	}
	s.outputs.keep(id, outs)
	prevs, err := s.inputs(ctx, op, msg)
	if err != nil {
		return chain.Tx{}, err
	}
	tx, err := build(op, id, msg, outs, func(p wire.OutPoint) (chain.TxIO, bool) {
		if o := prevs[p.Hash.String()]; int(p.Index) < len(o) {
			return o[p.Index], true
		}
		return chain.TxIO{}, false
	})
	if err != nil {
		return chain.Tx{}, err
	}
	if blockchain.IsCoinBaseTx(msg) {
		tx.Inputs = nil // as Tx always had it
	}
	tx.Confirmed = raw.confirmed()
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

// inputs are the outputs of the transactions msg's inputs spend from,
// by txid: kept (outputs.go) or asked for. None for a coinbase.
func (s *Source) inputs(ctx context.Context, op string, msg *wire.MsgTx) (map[string][]chain.TxIO, error) {
	prevs := map[string][]chain.TxIO{}
	missing := s.notKept([]*wire.MsgTx{msg}, nil, prevs)
	if len(prevs) > prevTxsMax {
		return nil, &chain.UpstreamError{Op: op, Status: http.StatusOK,
			Err: fmt.Errorf("the transaction spends from more than %d transactions, more than the btcd source reads for one", prevTxsMax)}
	}
	if err := s.askOutputs(ctx, op, missing, prevs); err != nil {
		return nil, err
	}
	return prevs, nil
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
