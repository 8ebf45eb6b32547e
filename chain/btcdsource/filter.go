package btcdsource

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// btcd's transaction filter (loadtxfilter) matches a transaction that
// pays a filtered address, or that spends a filtered outpoint; it adds
// the outputs it matched to its outpoints itself. It never learns the
// outputs an address holds already: a spend from a watched address of a
// coin it received before the filter was loaded matches nothing unless
// that coin's outpoint was given. So the source keeps what it asks btcd
// to match, filterSet: the watched addresses and the unspent outputs it
// knows each holds, learned from the reads of its history (index.go) and
// from the transactions btcd names. The same outpoints name, when btcd
// sends a transaction that spends one, the watched address it spent
// from: btcd's notification carries the transaction alone.
//
// A payment to a watched address still in the mempool can also leave it
// through a conflict that touches no watched address: its sender spends
// the same coin again, elsewhere (a replacement, a cancellation, a reorg
// that confirms another spend). Nothing btcd would match pays or spends
// from the address then. So the coins a pending payment spends are kept
// too, each naming the watched addresses the payment touches, and the
// conflict is matched by its inputs: the follower reads the address and
// finds the payment gone at once, not at its next full sweep.

// filterSet is the filter btcd is asked to hold: the watched addresses
// and their unspent outputs, with the address each pays.
type filterSet struct {
	params       *chaincfg.Params
	outpointsMax int

	mu      sync.Mutex
	watched map[string]bool
	owners  map[wire.OutPoint]string // an unspent output of a watched address → the address
	// spentBy: a coin a mempool transaction touching watched addresses
	// spends → those addresses, so that a conflict spending it names them.
	spentBy map[wire.OutPoint][]string
	pending map[wire.OutPoint]bool // outpoints of owners or spentBy btcd was not sent since its last reload
}

func newFilterSet(params *chaincfg.Params, outpointsMax int) *filterSet {
	return &filterSet{params: params, outpointsMax: outpointsMax,
		watched: map[string]bool{}, owners: map[wire.OutPoint]string{},
		spentBy: map[wire.OutPoint][]string{}, pending: map[wire.OutPoint]bool{}}
}

// set makes addresses the watched ones and returns those not watched
// before. The outputs of an address no longer watched are forgotten.
func (f *filterSet) set(addresses []string) (added []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	watched := make(map[string]bool, len(addresses))
	for _, a := range addresses {
		watched[a] = true
		if !f.watched[a] {
			added = append(added, a)
		}
	}
	for op, a := range f.owners {
		if !watched[a] {
			delete(f.owners, op)
			delete(f.pending, op)
		}
	}
	for op, as := range f.spentBy {
		as = slices.DeleteFunc(as, func(a string) bool { return !watched[a] })
		if len(as) > 0 {
			f.spentBy[op] = as
			continue
		}
		delete(f.spentBy, op)
		if _, owned := f.owners[op]; !owned {
			delete(f.pending, op)
		}
	}
	f.watched = watched
	return added
}

// snapshot is the whole filter, for a reload; nothing is pending after
// it.
func (f *filterSet) snapshot() (addresses []string, outpoints []btcjson.OutPoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	addresses = make([]string, 0, len(f.watched))
	for a := range f.watched {
		addresses = append(addresses, a)
	}
	slices.Sort(addresses)
	outpoints = make([]btcjson.OutPoint, 0, len(f.owners)+len(f.spentBy))
	for op := range f.owners {
		outpoints = append(outpoints, btcjson.OutPoint{Hash: op.Hash.String(), Index: op.Index})
	}
	for op := range f.spentBy {
		if _, owned := f.owners[op]; !owned {
			outpoints = append(outpoints, btcjson.OutPoint{Hash: op.Hash.String(), Index: op.Index})
		}
	}
	clear(f.pending)
	return addresses, outpoints
}

// takePending is the outpoints learned since btcd was last sent them.
func (f *filterSet) takePending() []btcjson.OutPoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]btcjson.OutPoint, 0, len(f.pending))
	for op := range f.pending {
		out = append(out, btcjson.OutPoint{Hash: op.Hash.String(), Index: op.Index})
	}
	clear(f.pending)
	return out
}

func (f *filterSet) hasPending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending) > 0
}

// learn takes what a read of addr's history found, in btcd's order: the
// outputs paying addr; for mempool transactions, every coin they spend
// (a conflict would spend one again); for confirmed transactions, the
// coins they spend, which no longer need matching. An output spent only
// in the mempool is kept, so that a replacement spending it again is
// matched too.
func (f *filterSet) learn(addr string, txs []chain.Tx, confirmed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.watched[addr] {
		return
	}
	for _, tx := range txs {
		for _, in := range tx.Inputs {
			op, ok := parseOutpoint(in.Spends)
			switch {
			case !ok:
			case confirmed:
				f.spent(op)
			case f.owners[op] != addr: // addr's own coin names it already
				f.addSpentBy(op, addr)
			}
		}
		hash, err := chainhash.NewHashFromStr(tx.TxID)
		if err != nil {
			continue // toTx checked it is 64 hex characters
		}
		for i, out := range tx.Outputs {
			if out.Address == addr {
				f.add(wire.OutPoint{Hash: *hash, Index: uint32(i)}, addr)
			}
		}
	}
}

// touched names, sorted, the watched addresses txs (one block's, or a
// mempool transaction) pay or spend from, and keeps the outputs they pay
// to watched addresses. An output a block's transaction spends needs no
// more matching.
func (f *filterSet) touched(txs []*wire.MsgTx, inBlock bool) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	named := map[string]bool{}
	for _, tx := range txs {
		for _, in := range tx.TxIn {
			op := in.PreviousOutPoint
			if a, ok := f.owners[op]; ok {
				named[a] = true
			}
			for _, a := range f.spentBy[op] {
				named[a] = true
			}
			if inBlock {
				f.spent(op)
			}
		}
		hash := tx.TxHash()
		for i, out := range tx.TxOut {
			// Every address the script names, as btcd's filter matches
			// them: a public key by its P2PKH address too.
			_, addrs, _, err := txscript.ExtractPkScriptAddrs(out.PkScript, f.params)
			if err != nil {
				continue
			}
			for _, addr := range addrs {
				if a := addr.EncodeAddress(); f.watched[a] {
					named[a] = true
					f.add(wire.OutPoint{Hash: hash, Index: uint32(i)}, a)
				}
			}
		}
	}
	out := make([]string, 0, len(named))
	for a := range named {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// add keeps op as an unspent output of addr, to be sent to btcd, unless
// the filter holds outpointsMax already (a spend of op is then seen when
// something else names the address, or by the follower's full sweeps).
// f.mu is held.
func (f *filterSet) add(op wire.OutPoint, addr string) {
	if _, held := f.owners[op]; held || f.full() {
		return
	}
	f.owners[op] = addr
	f.pending[op] = true
}

// addSpentBy keeps op as a coin a mempool transaction touching addr
// spends, within the same bound as add. f.mu is held.
func (f *filterSet) addSpentBy(op wire.OutPoint, addr string) {
	as, held := f.spentBy[op]
	switch {
	case slices.Contains(as, addr):
		return
	case !held && f.full():
		return
	}
	f.spentBy[op] = append(as, addr)
	f.pending[op] = true
}

// spent forgets op, spent for good (by a confirmed transaction): no
// later transaction can spend it. f.mu is held.
func (f *filterSet) spent(op wire.OutPoint) {
	delete(f.owners, op)
	delete(f.spentBy, op)
	delete(f.pending, op)
}

// full says the filter holds outpointsMax outpoints. f.mu is held.
func (f *filterSet) full() bool { return len(f.owners)+len(f.spentBy) >= f.outpointsMax }

// parseOutpoint reads chain.Outpoint's "txid:vout".
func parseOutpoint(s string) (wire.OutPoint, bool) {
	txid, vout, found := strings.Cut(s, ":")
	hash, err := chainhash.NewHashFromStr(txid)
	n, errN := strconv.ParseUint(vout, 10, 32)
	if !found || len(txid) != 64 || err != nil || errN != nil {
		return wire.OutPoint{}, false
	}
	return wire.OutPoint{Hash: *hash, Index: uint32(n)}, true
}
