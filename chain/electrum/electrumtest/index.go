package electrumtest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// The index is what an Electrum server keeps of its node's chain: every
// block's header and transactions, every output by outpoint with the
// script hash it pays, and for each script hash the transactions that
// pay it or spend from it (its history), the chain's and the mempool's.
// It is rebuilt from the blocks held when the chain reorganises: a
// regtest chain is a few hundred blocks.

// output is one output: the script hash it pays and its value.
type output struct {
	scripthash string
	value      int64
}

// historyEntry is one transaction of a script hash's history: height
// above 0 in a block, 0 in the mempool with every input confirmed, -1 in
// the mempool spending an unconfirmed output (the protocol's heights).
type historyEntry struct {
	txid   string
	height int64
	fee    int64 // mempool entries only
}

// indexedBlock is a block of the best chain.
type indexedBlock struct {
	hash   chainhash.Hash
	header wire.BlockHeader
	txs    []*wire.MsgTx
}

type index struct {
	blocks []indexedBlock // by height, from the genesis block

	// Of the blocks' transactions.
	confirmed map[chainhash.Hash]*wire.MsgTx
	outputs   map[wire.OutPoint]output
	history   map[string][]historyEntry // in the chain's order

	// Of the mempool's, which spend the chain's outputs or each other's.
	pool        map[chainhash.Hash]*wire.MsgTx
	poolOutputs map[wire.OutPoint]output
	poolHistory map[string][]historyEntry
}

func newIndex() *index {
	ix := &index{pool: map[chainhash.Hash]*wire.MsgTx{}}
	ix.reset()
	ix.indexPool()
	return ix
}

func (ix *index) reset() {
	ix.blocks = nil
	ix.confirmed = map[chainhash.Hash]*wire.MsgTx{}
	ix.outputs = map[wire.OutPoint]output{}
	ix.history = map[string][]historyEntry{}
}

// tip is the best block's height; -1 before the genesis block.
func (ix *index) tip() int64 { return int64(len(ix.blocks)) - 1 }

// connect adds the block after the tip. The genesis block's coinbase
// cannot be spent, and servers leave it out, as they do outputs no one
// can spend (OP_RETURN).
func (ix *index) connect(b *wire.MsgBlock) {
	height := int64(len(ix.blocks))
	ix.blocks = append(ix.blocks, indexedBlock{hash: b.BlockHash(), header: b.Header, txs: b.Transactions})
	if height == 0 {
		return
	}
	for _, tx := range b.Transactions {
		hash := tx.TxHash()
		ix.confirmed[hash] = tx
		for _, sh := range ix.touched(tx, ix.confirmedOutput) {
			ix.history[sh] = append(ix.history[sh], historyEntry{txid: hash.String(), height: height})
		}
		addOutputs(ix.outputs, tx)
	}
}

// truncate drops the blocks above height and rebuilds the rest.
func (ix *index) truncate(height int64) {
	kept := ix.blocks[:height+1]
	ix.reset()
	for _, b := range kept {
		ix.connect(&wire.MsgBlock{Header: b.header, Transactions: b.txs})
	}
}

// touched are the script hashes tx pays or spends from, each once, the
// outputs it spends looked up with spent.
func (ix *index) touched(tx *wire.MsgTx, spent func(wire.OutPoint) (output, bool)) []string {
	var out []string
	if !blockchain.IsCoinBaseTx(tx) {
		for _, in := range tx.TxIn {
			if o, ok := spent(in.PreviousOutPoint); ok {
				out = append(out, o.scripthash)
			}
		}
	}
	for _, o := range tx.TxOut {
		if !txscript.IsUnspendable(o.PkScript) {
			out = append(out, scriptHash(o.PkScript))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// confirmedOutput is an output of the chain.
func (ix *index) confirmedOutput(op wire.OutPoint) (output, bool) {
	o, ok := ix.outputs[op]
	return o, ok
}

// anyOutput is an output of the chain or the mempool.
func (ix *index) anyOutput(op wire.OutPoint) (output, bool) {
	if o, ok := ix.outputs[op]; ok {
		return o, true
	}
	o, ok := ix.poolOutputs[op]
	return o, ok
}

func addOutputs(outputs map[wire.OutPoint]output, tx *wire.MsgTx) {
	hash := tx.TxHash()
	for i, o := range tx.TxOut {
		if !txscript.IsUnspendable(o.PkScript) {
			outputs[wire.OutPoint{Hash: hash, Index: uint32(i)}] = output{scripthash: scriptHash(o.PkScript), value: o.Value}
		}
	}
}

// setPool makes txs the mempool, but those a block holds already.
func (ix *index) setPool(txs map[chainhash.Hash]*wire.MsgTx) {
	ix.pool = map[chainhash.Hash]*wire.MsgTx{}
	for hash, tx := range txs {
		if _, mined := ix.confirmed[hash]; !mined {
			ix.pool[hash] = tx
		}
	}
	ix.indexPool()
}

// indexPool indexes the mempool: its outputs, and each transaction in
// the history of what it touches, at height -1 when it spends a mempool
// output, with its fee; ordered as protocol 1.5 orders them (height 0
// first, then by ID), 1.4 leaving the order open.
func (ix *index) indexPool() {
	ix.poolOutputs = map[wire.OutPoint]output{}
	for _, tx := range ix.pool {
		addOutputs(ix.poolOutputs, tx)
	}
	ix.poolHistory = map[string][]historyEntry{}
	for hash, tx := range ix.pool {
		e := historyEntry{txid: hash.String()}
		var in, out int64
		for _, txIn := range tx.TxIn {
			if _, unconfirmed := ix.pool[txIn.PreviousOutPoint.Hash]; unconfirmed {
				e.height = -1
			}
			o, _ := ix.anyOutput(txIn.PreviousOutPoint)
			in += o.value
		}
		for _, o := range tx.TxOut {
			out += o.Value
		}
		e.fee = max(in-out, 0)
		for _, sh := range ix.touched(tx, ix.anyOutput) {
			ix.poolHistory[sh] = append(ix.poolHistory[sh], e)
		}
	}
	for _, entries := range ix.poolHistory {
		slices.SortFunc(entries, func(a, b historyEntry) int {
			if a.height != b.height {
				return int(b.height - a.height)
			}
			return strings.Compare(a.txid, b.txid)
		})
	}
}

// historyOf is the script hash's history: the chain's, then the
// mempool's.
func (ix *index) historyOf(sh string) []historyEntry {
	return append(slices.Clone(ix.history[sh]), ix.poolHistory[sh]...)
}

// tx is a transaction of the chain or the mempool.
func (ix *index) tx(hash chainhash.Hash) (*wire.MsgTx, bool) {
	if tx, ok := ix.confirmed[hash]; ok {
		return tx, true
	}
	tx, ok := ix.pool[hash]
	return tx, ok
}

// status is the script hash's status as protocol 1.4 defines it
// ("Old Status"): SHA-256 of "tx_hash:height:" for each transaction of
// its history in order, in hex; empty (null) for no history.
func (ix *index) status(sh string) string {
	entries := ix.historyOf(sh)
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.txid)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(e.height, 10))
		b.WriteByte(':')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// scriptHash is the protocol's script hash: SHA-256 of the script, its
// bytes reversed, in hex.
func scriptHash(script []byte) string {
	sum := sha256.Sum256(script)
	slices.Reverse(sum[:])
	return hex.EncodeToString(sum[:])
}

// balance is what the script hash's outputs hold: the chain's (paid
// less spent in blocks) and the mempool's change to it.
func (ix *index) balance(sh string) (confirmed, unconfirmed int64) {
	for _, e := range ix.historyOf(sh) {
		hash, _ := chainhash.NewHashFromStr(e.txid)
		tx, _ := ix.tx(*hash)
		delta := int64(0)
		for _, o := range tx.TxOut {
			if !txscript.IsUnspendable(o.PkScript) && scriptHash(o.PkScript) == sh {
				delta += o.Value
			}
		}
		if !blockchain.IsCoinBaseTx(tx) {
			for _, in := range tx.TxIn {
				if o, ok := ix.anyOutput(in.PreviousOutPoint); ok && o.scripthash == sh {
					delta -= o.value
				}
			}
		}
		if e.height > 0 {
			confirmed += delta
		} else {
			unconfirmed += delta
		}
	}
	return confirmed, unconfirmed
}

// unspentEntry is one output of listunspent.
type unspentEntry struct {
	TxHash string `json:"tx_hash"`
	TxPos  uint32 `json:"tx_pos"`
	Height int64  `json:"height"`
	Value  int64  `json:"value"`
}

// unspent lists the script hash's outputs no transaction of the chain
// or the mempool spends: the chain's in its order, then the mempool's
// (height 0).
func (ix *index) unspent(sh string) []unspentEntry {
	spent := map[wire.OutPoint]bool{}
	var out []unspentEntry
	entries := ix.historyOf(sh)
	for _, e := range entries {
		hash, _ := chainhash.NewHashFromStr(e.txid)
		tx, _ := ix.tx(*hash)
		for _, in := range tx.TxIn {
			spent[in.PreviousOutPoint] = true
		}
	}
	for _, e := range entries {
		hash, _ := chainhash.NewHashFromStr(e.txid)
		tx, _ := ix.tx(*hash)
		for i, o := range tx.TxOut {
			op := wire.OutPoint{Hash: *hash, Index: uint32(i)}
			if !spent[op] && !txscript.IsUnspendable(o.PkScript) && scriptHash(o.PkScript) == sh {
				out = append(out, unspentEntry{TxHash: e.txid, TxPos: uint32(i), Height: max(e.height, 0), Value: o.Value})
			}
		}
	}
	return out
}
