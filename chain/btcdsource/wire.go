package btcdsource

import (
	"math"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcutil"
)

// The shapes of btcd's answers, reduced to the fields the source reads
// (btcjson's SearchRawTransactionsResult and TxRawResult hold them too,
// with the transaction's hex besides, which is not decoded here).

// rpcTx is one transaction of searchrawtransactions (verbose, with
// vinextra) or of getrawtransaction (verbose, where no input has a
// prevOut).
type rpcTx struct {
	TxID          string    `json:"txid"`
	Hex           string    `json:"hex"`
	Vin           []rpcVin  `json:"vin"`
	Vout          []rpcVout `json:"vout"`
	BlockHash     string    `json:"blockhash"`
	Confirmations int64     `json:"confirmations"`
	BlockTime     int64     `json:"blocktime"`
}

type rpcVin struct {
	Coinbase string      `json:"coinbase"`
	TxID     string      `json:"txid"`
	Vout     uint32      `json:"vout"`
	PrevOut  *rpcPrevOut `json:"prevOut"`
}

// rpcPrevOut is the output an input spends (vinextra): its value in BTC
// and the addresses its script names.
type rpcPrevOut struct {
	Addresses []string `json:"addresses"`
	Value     float64  `json:"value"`
}

type rpcVout struct {
	Value        float64 `json:"value"`
	N            uint32  `json:"n"`
	ScriptPubKey struct {
		Address   string   `json:"address"`
		Addresses []string `json:"addresses"`
	} `json:"scriptPubKey"`
}

// rpcHeader is getblockheader's verbose answer.
type rpcHeader struct {
	Hash   string `json:"hash"`
	Height int64  `json:"height"`
}

const (
	// txAddressBytesMax bounds one address in an answer. The longest
	// Bitcoin address (bech32 P2WSH or P2TR) is 62 characters.
	txAddressBytesMax = 128
	// satoshisMax is 21 million BTC: no value or fee can exceed it.
	satoshisMax = 21_000_000 * 100_000_000
)

// confirmed says the transaction is in a block of the best chain
// (btcd leaves a mempool transaction's block hash out).
func (t rpcTx) confirmed() bool { return t.BlockHash != "" }

// toTx checks a searchrawtransactions transaction and turns it into a
// chain.Tx without its block height, which the caller works out
// (heights.go). Every input but a coinbase must come with its prevOut.
func (t rpcTx) toTx(op string) (chain.Tx, error) {
	txid, ok := chain.CanonicalTxID(t.TxID)
	if !ok {
		return chain.Tx{}, malformed(op, "a txid that is not 64 hex characters")
	}
	tx := chain.Tx{TxID: txid, Confirmed: t.confirmed()}
	if tx.Confirmed {
		if _, ok := chain.CanonicalTxID(t.BlockHash); !ok || t.Confirmations < 1 || t.BlockTime <= 0 {
			return chain.Tx{}, malformed(op, "confirmed %s without its block, confirmations and time", txid)
		}
		tx.BlockTime = time.Unix(t.BlockTime, 0).UTC()
		tx.BlockHash = blockOf(t)
	}
	var in, out int64
	tx.Inputs = make([]chain.TxIO, 0, len(t.Vin))
	for _, vin := range t.Vin {
		if vin.Coinbase != "" {
			continue
		}
		if vin.PrevOut == nil {
			return chain.Tx{}, malformed(op, "an input of %s without the output it spends", txid)
		}
		io, err := toTxIO(op, vin.PrevOut.Value, soleAddress("", vin.PrevOut.Addresses))
		if err != nil {
			return chain.Tx{}, err
		}
		prev, ok := chain.CanonicalTxID(vin.TxID)
		if !ok {
			return chain.Tx{}, malformed(op, "an input of %s spends from a txid that is not 64 hex characters", txid)
		}
		io.Spends = chain.Outpoint(prev, vin.Vout)
		in += io.Value
		tx.Inputs = append(tx.Inputs, io)
	}
	tx.Outputs = make([]chain.TxIO, 0, len(t.Vout))
	for i, vout := range t.Vout {
		if vout.N != uint32(i) {
			return chain.Tx{}, malformed(op, "the outputs of %s out of order", txid)
		}
		io, err := toTxIO(op, vout.Value, soleAddress(vout.ScriptPubKey.Address, vout.ScriptPubKey.Addresses))
		if err != nil {
			return chain.Tx{}, err
		}
		out += io.Value
		tx.Outputs = append(tx.Outputs, io)
	}
	if len(tx.Inputs) > 0 {
		tx.Fee = in - out
	}
	if tx.Fee < 0 || in > satoshisMax || out > satoshisMax {
		return chain.Tx{}, malformed(op, "%s spends less than it pays, or more than there is", txid)
	}
	return tx, nil
}

// soleAddress is the address an output pays to, as Esplora names it:
// the one address its script names, or none for a script naming none
// (OP_RETURN, non-standard) or several (bare multisig). btcd names a
// pay-to-pubkey script by its key's P2PKH address, and indexes it under
// that address too, so such an output counts for that address here,
// where Esplora names no address.
func soleAddress(address string, addresses []string) string {
	if address != "" {
		return address
	}
	if len(addresses) == 1 {
		return addresses[0]
	}
	return ""
}

func toTxIO(op string, btc float64, address string) (chain.TxIO, error) {
	sats, ok := satoshis(btc)
	if !ok {
		return chain.TxIO{}, malformed(op, "a value out of range")
	}
	if len(address) > txAddressBytesMax {
		return chain.TxIO{}, malformed(op, "an address too long")
	}
	return chain.TxIO{Address: address, Value: sats}, nil
}

// satoshis turns btcd's BTC amount into satoshis. btcd writes an amount
// as float64(sats)/1e8, which rounding undoes exactly for any amount
// below 2^53 satoshis (21 million BTC is below 2^51).
func satoshis(btc float64) (int64, bool) {
	if math.IsNaN(btc) || btc < 0 || btc > satoshisMax/1e8 {
		return 0, false
	}
	amount, err := btcutil.NewAmount(btc)
	if err != nil || amount < 0 || amount > satoshisMax {
		return 0, false
	}
	return int64(amount), true
}

// tally adds tx to stats, an address's counters, as Esplora counts it:
// one transaction, what it pays to the address and what it spends from
// it.
func tally(stats *chain.TxoStats, tx chain.Tx, address string) {
	stats.TxCount++
	for _, out := range tx.Outputs {
		if out.Address == address {
			stats.FundedTxoSum += out.Value
		}
	}
	for _, in := range tx.Inputs {
		if in.Address == address {
			stats.SpentTxoSum += in.Value
		}
	}
}
