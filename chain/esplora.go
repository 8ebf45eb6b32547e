package chain

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ChainPageSize is how many confirmed transactions Esplora returns on one
// /address/{a}/txs/chain page. A shorter page is the last one.
const ChainPageSize = 25

// Bounds on what one upstream answer may contain. An answer outside them is
// malformed (ErrUpstream), never silently cut: a cut list would be a wrong
// history, and a degraded answer is better than a wrong one.
const (
	// pageTxsMax bounds the transactions in one chain or mempool listing.
	// Esplora sends 25 confirmed or at most 50 mempool transactions.
	pageTxsMax = 100
	// txAddressBytesMax bounds one scriptpubkey_address. The longest
	// Bitcoin address (bech32 P2WSH/P2TR) is 62 characters.
	txAddressBytesMax = 128
	// satoshisMax is 21 million BTC: no value or fee can exceed it.
	satoshisMax = 21_000_000 * 100_000_000
)

// TxIO is one input or output of a transaction as it touches an address.
// Address is empty for a script with no address (OP_RETURN, bare multisig,
// non-standard scripts). Value is in satoshis.
type TxIO struct {
	Address string
	Value   int64
	// Spends is, for an input, the output it spends as "txid:vout": two
	// transactions that spend one output conflict (one replaced the
	// other). Empty for an output.
	Spends string
}

// Tx is a transaction as the history needs it: when it was confirmed, and
// which addresses it moved value from and to.
//
// Inputs lists the spent outputs (Esplora's vin[].prevout); a coinbase input
// spends nothing and is left out. Outputs lists vout in order.
type Tx struct {
	TxID        string // 64 lower-case hex characters
	Confirmed   bool
	BlockHeight int64     // 0 when unconfirmed
	BlockHash   string    // 64 lower-case hex; empty when unconfirmed or not told
	BlockTime   time.Time // UTC; zero when unconfirmed
	Fee         int64     // satoshis
	Inputs      []TxIO
	Outputs     []TxIO
}

// NetAmount is the satoshis address received in t minus the satoshis it
// spent in t: positive for an incoming payment, negative for an outgoing one
// (the fee included when address paid it). address must be in the canonical
// form ValidateBitcoinAddress returns, which is also the form Esplora uses.
func (t Tx) NetAmount(address string) int64 {
	var net int64
	for _, out := range t.Outputs {
		if out.Address == address {
			net += out.Value
		}
	}
	for _, in := range t.Inputs {
		if in.Address == address {
			net -= in.Value
		}
	}
	return net
}

// Addresses lists every address t spends from or pays to, sorted and
// without repeats. The note rules use it: a note needs a grant on every
// Account card among these addresses.
func (t Tx) Addresses() []string {
	all := make([]string, 0, len(t.Inputs)+len(t.Outputs))
	for _, io := range t.Inputs {
		if io.Address != "" {
			all = append(all, io.Address)
		}
	}
	for _, io := range t.Outputs {
		if io.Address != "" {
			all = append(all, io.Address)
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// Involves reports whether t spends from or pays to address.
func (t Tx) Involves(address string) bool {
	for _, io := range t.Inputs {
		if io.Address == address {
			return true
		}
	}
	for _, io := range t.Outputs {
		if io.Address == address {
			return true
		}
	}
	return false
}

// TxoStats are Esplora's per-address counters for one side of the chain
// (confirmed or mempool).
type TxoStats struct {
	TxCount      int64 // transactions touching the address
	FundedTxoSum int64 // satoshis ever paid to the address
	SpentTxoSum  int64 // satoshis ever spent from the address
}

// AddressStats is Esplora's GET /address/{a}: lifetime counters for the
// confirmed chain and for the mempool.
type AddressStats struct {
	Address string
	Chain   TxoStats
	Mempool TxoStats
}

// TxCount is the lifetime number of transactions, confirmed and mempool.
func (s AddressStats) TxCount() int64 { return s.Chain.TxCount + s.Mempool.TxCount }

// Balance is the address's balance in satoshis, mempool included.
func (s AddressStats) Balance() int64 {
	return s.Chain.FundedTxoSum - s.Chain.SpentTxoSum + s.Mempool.FundedTxoSum - s.Mempool.SpentTxoSum
}

// Outpoint names output vout of transaction txid as "txid:vout".
func Outpoint(txid string, vout uint32) string {
	return txid + ":" + strconv.FormatUint(uint64(vout), 10)
}

// CanonicalTxID returns s in lower case when it is a transaction ID: exactly
// 64 hexadecimal characters. Transaction IDs are compared in this form.
func CanonicalTxID(s string) (string, bool) {
	if len(s) != 64 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", false
		}
	}
	return string(b), true
}

// The wire types below are Esplora's JSON, reduced to the fields addrwatch
// reads. The simulated chain encodes the same types, so the client decodes
// the sim's answers exactly as it decodes a real server's.

type esploraAddress struct {
	Address      string       `json:"address"`
	ChainStats   esploraStats `json:"chain_stats"`
	MempoolStats esploraStats `json:"mempool_stats"`
}

type esploraStats struct {
	TxCount      int64 `json:"tx_count"`
	FundedTxoSum int64 `json:"funded_txo_sum"`
	SpentTxoSum  int64 `json:"spent_txo_sum"`
}

type esploraTx struct {
	TxID   string         `json:"txid"`
	Status esploraStatus  `json:"status"`
	Vin    []esploraVin   `json:"vin"`
	Vout   []esploraTxOut `json:"vout"`
	Fee    int64          `json:"fee"`
}

// esploraStatus has pointers so that a confirmed transaction missing its
// height or time is told apart from one at height 0, and so that an
// unconfirmed one encodes as Esplora's bare {"confirmed": false}.
// esploraBlock is one block of GET /blocks.
type esploraBlock struct {
	ID     string `json:"id"`
	Height int64  `json:"height"`
}

func (b esploraBlock) toRef() (BlockRef, error) {
	hash, ok := CanonicalTxID(b.ID) // a block hash is written as a txid is
	if !ok || b.Height < 0 {
		return BlockRef{}, malformed("block %q at height %d", b.ID, b.Height)
	}
	return BlockRef{Height: b.Height, Hash: hash}, nil
}

type esploraStatus struct {
	Confirmed   bool    `json:"confirmed"`
	BlockHeight *int64  `json:"block_height,omitempty"`
	BlockHash   *string `json:"block_hash,omitempty"`
	BlockTime   *int64  `json:"block_time,omitempty"`
}

type esploraVin struct {
	TxID       string        `json:"txid"`
	Vout       uint32        `json:"vout"`
	Prevout    *esploraTxOut `json:"prevout"`
	IsCoinbase bool          `json:"is_coinbase"`
}

type esploraTxOut struct {
	ScriptPubKeyAddress string `json:"scriptpubkey_address,omitempty"`
	Value               int64  `json:"value"`
}

// ErrMalformed marks an answer that arrived but cannot be used as one:
// Esplora JSON that does not make sense as Esplora data, or, from other
// sources, an answer that does not decode or an error the source answered
// with. It is about what was asked, not the upstream's health: the
// breaker counts it against the address asked about alone, and a Client
// does not retry it. An UpstreamError's cause wraps it.
var ErrMalformed = errors.New("malformed upstream data")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

func (w esploraAddress) toStats() (AddressStats, error) {
	for _, s := range []esploraStats{w.ChainStats, w.MempoolStats} {
		if s.TxCount < 0 || s.FundedTxoSum < 0 || s.SpentTxoSum < 0 {
			return AddressStats{}, malformed("negative address counter")
		}
	}
	if len(w.Address) > txAddressBytesMax {
		return AddressStats{}, malformed("address too long")
	}
	return AddressStats{
		Address: w.Address,
		Chain:   TxoStats(w.ChainStats),
		Mempool: TxoStats(w.MempoolStats),
	}, nil
}

// toTx checks one wire transaction and turns it into a Tx.
func (w esploraTx) toTx() (Tx, error) {
	txid, ok := CanonicalTxID(w.TxID)
	if !ok {
		return Tx{}, malformed("txid is not 64 hex characters")
	}
	if w.Fee < 0 || w.Fee > satoshisMax {
		return Tx{}, malformed("fee out of range in %s", txid)
	}
	t := Tx{TxID: txid, Confirmed: w.Status.Confirmed, Fee: w.Fee}
	if t.Confirmed {
		h, bt := w.Status.BlockHeight, w.Status.BlockTime
		if h == nil || bt == nil || *h < 0 || *bt <= 0 {
			return Tx{}, malformed("confirmed %s without block height and time", txid)
		}
		t.BlockHeight = *h
		t.BlockTime = time.Unix(*bt, 0).UTC()
		if w.Status.BlockHash != nil {
			hash, ok := CanonicalTxID(*w.Status.BlockHash)
			if !ok {
				return Tx{}, malformed("confirmed %s in a block whose hash is not 64 hex characters", txid)
			}
			t.BlockHash = hash
		}
	}
	t.Inputs = make([]TxIO, 0, len(w.Vin))
	for _, in := range w.Vin {
		if in.Prevout == nil {
			if in.IsCoinbase {
				continue
			}
			return Tx{}, malformed("input without prevout in %s", txid)
		}
		io, err := in.Prevout.toTxIO()
		if err != nil {
			return Tx{}, fmt.Errorf("%w in %s", err, txid)
		}
		prev, ok := CanonicalTxID(in.TxID)
		if !ok {
			return Tx{}, malformed("an input of %s spends from a txid that is not 64 hex characters", txid)
		}
		io.Spends = Outpoint(prev, in.Vout)
		t.Inputs = append(t.Inputs, io)
	}
	t.Outputs = make([]TxIO, 0, len(w.Vout))
	for _, out := range w.Vout {
		io, err := out.toTxIO()
		if err != nil {
			return Tx{}, fmt.Errorf("%w in %s", err, txid)
		}
		t.Outputs = append(t.Outputs, io)
	}
	return t, nil
}

func (w esploraTxOut) toTxIO() (TxIO, error) {
	if w.Value < 0 || w.Value > satoshisMax {
		return TxIO{}, malformed("value out of range")
	}
	if len(w.ScriptPubKeyAddress) > txAddressBytesMax {
		return TxIO{}, malformed("address too long")
	}
	return TxIO{Address: w.ScriptPubKeyAddress, Value: w.Value}, nil
}

// toTxs checks a listing: at most pageTxsMax transactions, each confirmed
// (chain listings) or each unconfirmed (mempool listings), no repeats.
func toTxs(ws []esploraTx, confirmed bool) ([]Tx, error) {
	if len(ws) > pageTxsMax {
		return nil, malformed("%d transactions in one listing", len(ws))
	}
	txs := make([]Tx, 0, len(ws))
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		t, err := w.toTx()
		if err != nil {
			return nil, err
		}
		if t.Confirmed != confirmed {
			return nil, malformed("%s has the wrong confirmation status for its listing", t.TxID)
		}
		if seen[t.TxID] {
			return nil, malformed("%s listed twice", t.TxID)
		}
		seen[t.TxID] = true
		txs = append(txs, t)
	}
	return txs, nil
}
