package btcdsource

import (
	"math"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcutil"
)

// The shapes of btcd's answers, reduced to the fields the source reads
// (btcjson's SearchRawTransactionsResult and TxRawResult hold them too,
// with the transaction's hex besides, which is not decoded here).

// rpcTx is one transaction of searchrawtransactions (verbose, with
// vinextra, filtered to the address asked about: only the inputs
// spending from it, with their prevOut, and the outputs paying it) or of
// getrawtransaction (verbose, where no input has a prevOut). The whole
// transaction is its hex, which txs.go decodes.
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
