package esploratest

import (
	"strconv"
	"strings"

	"github.com/addrwatch/addrwatch/chain"
)

// Esplora's JSON, written from what a chain.Source says. The types are
// this package's own, not the client's: a server that shared the
// client's decoding types would agree with any mistake in them.

type addressJSON struct {
	Address      string    `json:"address"`
	ChainStats   statsJSON `json:"chain_stats"`
	MempoolStats statsJSON `json:"mempool_stats"`
}

type statsJSON struct {
	TxCount      int64 `json:"tx_count"`
	FundedTxoSum int64 `json:"funded_txo_sum"`
	SpentTxoSum  int64 `json:"spent_txo_sum"`
}

type txJSON struct {
	TxID   string     `json:"txid"`
	Vin    []vinJSON  `json:"vin"`
	Vout   []voutJSON `json:"vout"`
	Fee    int64      `json:"fee"`
	Status statusJSON `json:"status"`
}

// statusJSON is {"confirmed": false} alone for a transaction in the
// mempool, as Esplora writes it; a confirmed one has all three more.
type statusJSON struct {
	Confirmed   bool    `json:"confirmed"`
	BlockHeight *int64  `json:"block_height,omitempty"`
	BlockHash   *string `json:"block_hash,omitempty"`
	BlockTime   *int64  `json:"block_time,omitempty"`
}

// vinJSON is one input: the output it spends and, as prevout, that
// output's address and value; a coinbase input spends nothing (prevout
// null).
type vinJSON struct {
	TxID       string    `json:"txid"`
	Vout       uint32    `json:"vout"`
	Prevout    *voutJSON `json:"prevout"`
	IsCoinbase bool      `json:"is_coinbase"`
}

// voutJSON is one output; a script with no address has no
// scriptpubkey_address.
type voutJSON struct {
	ScriptPubKeyAddress string `json:"scriptpubkey_address,omitempty"`
	Value               int64  `json:"value"`
}

type blockJSON struct {
	ID     string `json:"id"`
	Height int64  `json:"height"`
}

// coinbaseVin is the one input of a coinbase transaction, as Esplora
// writes it: it spends the null outpoint.
var coinbaseVin = vinJSON{TxID: strings.Repeat("0", 64), Vout: 0xffffffff, IsCoinbase: true}

func addressOf(s chain.AddressStats) addressJSON {
	return addressJSON{Address: s.Address, ChainStats: statsJSON(s.Chain), MempoolStats: statsJSON(s.Mempool)}
}

func txsOf(txs []chain.Tx) []txJSON {
	out := make([]txJSON, len(txs)) // [] rather than null when empty
	for i, t := range txs {
		out[i] = txOf(t)
	}
	return out
}

// txOf writes t. A chain.Tx leaves a coinbase's input out, so a
// transaction without inputs is a coinbase, and gets its input back.
func txOf(t chain.Tx) txJSON {
	w := txJSON{TxID: t.TxID, Fee: t.Fee, Vin: make([]vinJSON, 0, len(t.Inputs)), Vout: make([]voutJSON, 0, len(t.Outputs))}
	if t.Confirmed {
		height, hash, at := t.BlockHeight, t.BlockHash, t.BlockTime.Unix()
		w.Status = statusJSON{Confirmed: true, BlockHeight: &height, BlockTime: &at}
		if hash != "" {
			w.Status.BlockHash = &hash
		}
	}
	for _, in := range t.Inputs {
		prev, vout := spent(in.Spends)
		w.Vin = append(w.Vin, vinJSON{TxID: prev, Vout: vout, Prevout: &voutJSON{ScriptPubKeyAddress: in.Address, Value: in.Value}})
	}
	if len(w.Vin) == 0 {
		w.Vin = append(w.Vin, coinbaseVin)
	}
	for _, out := range t.Outputs {
		w.Vout = append(w.Vout, voutJSON{ScriptPubKeyAddress: out.Address, Value: out.Value})
	}
	return w
}

// spent splits an input's "txid:vout". A Source always fills it; an
// empty or odd one is written as it is, for the client to refuse.
func spent(outpoint string) (string, uint32) {
	txid, n, _ := strings.Cut(outpoint, ":")
	vout, _ := strconv.ParseUint(n, 10, 32)
	return txid, uint32(vout)
}
