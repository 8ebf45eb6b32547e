package btcdsource

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
)

// An address's index is what the source keeps of its history between
// calls: the confirmed transaction IDs in the order btcd's address index
// holds them (oldest first, so a position never moves while blocks are
// added), the lifetime sums, and the mempool as last read. It is what
// lets AddressStats cost one request however long the history (only
// what was added since is read), and ChainTxs map Esplora's "the 25
// before this txid" onto searchrawtransactions' skip and count.
// DESIGN.md has the whole story.

const (
	// searchChunk is how many transactions one searchrawtransactions
	// asks for while reading a history.
	searchChunk = 200
	// mempoolTxsMax is how many unconfirmed transactions MempoolTxs
	// lists, as Esplora does. The stats count them all.
	mempoolTxsMax = 50
)

// txKey is a transaction ID as 32 bytes, in the order it is written.
type txKey [32]byte

func keyOf(txid string) (k txKey, ok bool) {
	_, err := hex.Decode(k[:], []byte(txid))
	return k, err == nil && len(txid) == 64
}

// is reports whether t is the confirmed transaction k names.
func (t rpcTx) is(k txKey) bool {
	got, ok := keyOf(t.TxID)
	return ok && got == k && t.confirmed()
}

// addressIndex is one address's index. Its ctxLock guards the fields
// below it.
type addressIndex struct {
	addr string
	ctxLock
	reads atomic.Uint64 // complete reads so far

	heldTxids int // what indexCache counts for it, under indexCache.mu

	// stale: the index was forgotten since its last read (a reorg moved
	// the history under it), so no call may take it as it is.
	stale        bool
	confirmed    []txKey // position i: the address's i-th confirmed transaction
	chainStats   chain.TxoStats
	mempoolStats chain.TxoStats
	mempool      []chain.Tx // newest first, at most mempoolTxsMax
}

func newAddressIndex(addr string) *addressIndex {
	return &addressIndex{addr: addr, ctxLock: make(ctxLock, 1)}
}

// ctxLock is a lock held across requests, so it is a channel: waiting
// for it honors the caller's context.
type ctxLock chan struct{}

func (l ctxLock) acquire(ctx context.Context, op string) error {
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &chain.UpstreamError{Op: op, Err: ctx.Err()}
	}
}

func (l ctxLock) release() { <-l }

// position is where txid sits in the confirmed history, -1 if nowhere.
func (ix *addressIndex) position(txid string) int {
	k, ok := keyOf(txid)
	if !ok {
		return -1
	}
	// From the end: cursors name recent pages more often than old ones.
	for i := len(ix.confirmed) - 1; i >= 0; i-- {
		if ix.confirmed[i] == k {
			return i
		}
	}
	return -1
}

func (ix *addressIndex) reset() {
	ix.confirmed, ix.chainStats, ix.mempoolStats, ix.mempool = nil, chain.TxoStats{}, chain.TxoStats{}, nil
	ix.stale = true
}

// fresh returns addr's index, locked (the caller calls release), as read
// from btcd by a read that ended after the call began: its own, or one
// another call had under way, which the three calls of one History
// refresh share that way.
func (s *Source) fresh(ctx context.Context, op, addr string) (*addressIndex, error) {
	ix := s.indexes.entry(addr)
	seen := ix.reads.Load()
	if err := ix.acquire(ctx, op); err != nil {
		return nil, err
	}
	if ix.stale || ix.reads.Load() == seen {
		if err := s.read(ctx, op, ix); err != nil {
			ix.release()
			return nil, err
		}
	}
	return ix, nil
}

// read brings ix up to date: it lists the address's history from its
// last known confirmed transaction on, which must still be there (else
// a reorg changed the history and it starts over, once), adds what
// confirmed since, and takes the mempool as it is now. The outputs it
// finds of a watched address reach btcd's filter before it returns
// (filter.go). On error ix keeps a true confirmed history, perhaps
// longer than its mempool's read knew, so it is stale: no call takes it
// without reading again.
func (s *Source) read(ctx context.Context, op string, ix *addressIndex) (err error) {
	defer func() {
		if err != nil {
			ix.stale = true
		}
	}()
	count := s.chunk
	restarted := false
	// Each answer but the last adds chunk-1 transactions; a restart
	// reads everything again; the mempool may take one more.
	readsMax := 2*(s.txsPerAddressMax/(s.chunk-1)+1) + 2
	for range readsMax {
		known := len(ix.confirmed)
		page, err := s.search(ctx, op, ix.addr, max(known-1, 0), count)
		if err != nil {
			return err
		}
		if known > 0 {
			if len(page) == 0 || !page[0].is(ix.confirmed[known-1]) {
				if restarted {
					return malformed(op, "the history changed twice while it was read")
				}
				ix.reset()
				s.indexes.resized(ix, 0)
				restarted, count = true, s.chunk
				continue
			}
			page = page[1:]
		}
		confirmed, pool, err := splitListing(op, page)
		if err != nil {
			return err
		}
		txs, err := s.toTxs(ctx, op, page)
		if err != nil {
			return err
		}
		added, err := ix.addConfirmed(op, txs[:len(confirmed)])
		if err != nil {
			return err
		}
		s.notify.filter.learn(ix.addr, added, true)
		s.indexes.resized(ix, len(ix.confirmed))
		if len(ix.confirmed)+len(pool) > s.txsPerAddressMax {
			return tooMany(op, s.txsPerAddressMax)
		}
		if len(page)+min(known, 1) < count {
			// The answer ran out before count: it holds the rest of
			// the history, the whole mempool included.
			pooled, err := ix.setMempool(op, txs[len(confirmed):], confirmed)
			if err != nil {
				return err
			}
			s.notify.filter.learn(ix.addr, pooled, false)
			ix.stale = false
			ix.reads.Add(1)
			s.notify.flush(ctx)
			return nil
		}
		if len(pool) > 0 {
			// btcd lists the mempool in no order of its own, so parts
			// of it from two answers need not fit together: ask for
			// all of it (and one more, to see the bound passed).
			count = s.txsPerAddressMax - len(ix.confirmed) + 2
		}
	}
	return malformed(op, "no end to the history after %d answers", readsMax)
}

// search is one searchrawtransactions: count transactions of addr from
// position skip of its history, oldest first, verbose but filtered to
// addr (the inputs spending from it, with the outputs they spend, and
// the outputs paying it: txs.go has the rest from each one's hex). btcd lists the confirmed transactions first, in
// the order its address index holds them, then the mempool's.
func (s *Source) search(ctx context.Context, op, addr string, skip, count int) ([]rpcTx, error) {
	verbose, vinExtra, reverse, only := 1, 1, false, []string{addr}
	cmd := btcjson.NewSearchRawTransactionsCmd(addr, &verbose, &skip, &count, &vinExtra, &reverse, &only)
	var page []rpcTx
	err := s.rpc.call(ctx, op, cmd, &page)
	if re, ok := rpcErrorOf(err); ok && re.code == btcjson.ErrRPCNoTxInfo {
		if strings.HasPrefix(re.message, "No information available about address") {
			return nil, nil // nothing at or past skip
		}
		return nil, &chain.UpstreamError{Op: op, Status: http.StatusOK,
			Err: fmt.Errorf("btcd does not take the address (is it on another network?): %w", re)}
	}
	if err != nil {
		return nil, err
	}
	if len(page) > count {
		return nil, malformed(op, "%d transactions where %d were asked for", len(page), count)
	}
	return page, nil
}

// splitListing splits a listing into its confirmed transactions and the
// mempool's after them.
func splitListing(op string, page []rpcTx) (confirmed, pool []rpcTx, err error) {
	n := 0
	for n < len(page) && page[n].confirmed() {
		n++
	}
	for _, t := range page[n:] {
		if t.confirmed() {
			return nil, nil, malformed(op, "a confirmed transaction listed after the mempool's")
		}
	}
	return page[:n], page[n:], nil
}

// addConfirmed appends transactions that confirmed, and their sums, and
// returns them. Nothing is added unless all of them check out.
func (ix *addressIndex) addConfirmed(op string, page []chain.Tx) ([]chain.Tx, error) {
	keys := make([]txKey, 0, len(page))
	txs := make([]chain.Tx, 0, len(page))
	stats := ix.chainStats
	for _, tx := range page {
		k, _ := keyOf(tx.TxID)
		if slices.Contains(keys, k) {
			return nil, malformed(op, "%s listed twice", tx.TxID)
		}
		keys = append(keys, k)
		txs = append(txs, tx)
		tally(&stats, tx, ix.addr)
	}
	ix.confirmed = append(ix.confirmed, keys...)
	ix.chainStats = stats
	return txs, nil
}

// setMempool takes pool as the mempool's transactions of the address,
// but those that the same answer lists as confirmed (one mined while
// btcd answered), and returns them all.
func (ix *addressIndex) setMempool(op string, pool []chain.Tx, confirmed []rpcTx) ([]chain.Tx, error) {
	txs := make([]chain.Tx, 0, len(pool))
	var stats chain.TxoStats
	for _, tx := range pool {
		if slices.ContainsFunc(confirmed, func(c rpcTx) bool { return strings.EqualFold(c.TxID, tx.TxID) }) {
			continue
		}
		if slices.ContainsFunc(txs, func(t chain.Tx) bool { return t.TxID == tx.TxID }) {
			return nil, malformed(op, "%s listed twice", tx.TxID)
		}
		txs = append(txs, tx)
		tally(&stats, tx, ix.addr)
	}
	sortNewestFirst(txs, pool)
	ix.mempool = txs[:min(len(txs), mempoolTxsMax)]
	ix.mempoolStats = stats
	return txs, nil
}

// sortNewestFirst orders mempool transactions as best btcd lets it
// without fetching its whole mempool (only getrawmempool's verbose answer
// says when it saw each one): a transaction before those it spends from
// (it came after them), and otherwise by txid, so that the order is the
// same from one read to the next. pool is every mempool transaction of
// the answer, txs among them.
func sortNewestFirst(txs, pool []chain.Tx) {
	parents := map[string][]string{}
	for _, tx := range pool {
		for _, in := range tx.Inputs {
			prev, _, _ := strings.Cut(in.Spends, ":")
			parents[tx.TxID] = append(parents[tx.TxID], prev)
		}
	}
	depth := map[string]int{}
	var depthOf func(id string, hops int) int
	depthOf = func(id string, hops int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		d := 0
		if hops < len(txs) { // a cycle cannot be, but is not followed forever
			for _, p := range parents[id] {
				if _, listed := parents[p]; listed {
					d = max(d, depthOf(p, hops+1)+1)
				}
			}
		}
		depth[id] = d
		return d
	}
	slices.SortFunc(txs, func(a, b chain.Tx) int {
		if c := cmp.Compare(depthOf(b.TxID, 0), depthOf(a.TxID, 0)); c != 0 {
			return c
		}
		return strings.Compare(a.TxID, b.TxID)
	})
}

// tooMany: the address has more transactions than the source reads.
func tooMany(op string, bound int) error {
	return &chain.UpstreamError{Op: op, Status: http.StatusOK,
		Err: fmt.Errorf("the address has more than %d transactions, more than the btcd source reads for one address", bound)}
}
