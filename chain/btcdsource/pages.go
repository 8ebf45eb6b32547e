package btcdsource

import (
	"context"
	"fmt"
	"slices"

	"github.com/addrwatch/addrwatch/chain"
)

// ChainTxs is one page of the address's confirmed transactions, newest
// first, as Esplora's /address/{a}/txs/chain[/{last}]: the newest
// chain.ChainPageSize, or the ChainPageSize just older than
// lastSeenTxID, which must be a confirmed transaction of the address
// (any other gives an empty page).
//
// The index maps the page onto positions of the confirmed history, which
// btcd lists oldest first from any position: the page before the
// cursor's position p is one searchrawtransactions of the positions
// p-25 to p, whose answer must name the transactions the index holds
// there, the cursor last. When it does not, a reorg moved the history
// under the index, which is read again and the page looked up once more.
// A first page reads the index up to date first (a request shared with
// the AddressStats and MempoolTxs of the same History refresh); a page
// after a cursor the index holds costs one request, and at most one
// more for its blocks' heights.
func (s *Source) ChainTxs(ctx context.Context, addr, lastSeenTxID string) ([]chain.Tx, error) {
	addr, err := s.address(addr)
	if err != nil {
		return nil, err
	}
	const op = "chain txs"
	cursor := ""
	if lastSeenTxID != "" {
		var ok bool
		if cursor, ok = chain.CanonicalTxID(lastSeenTxID); !ok {
			return nil, fmt.Errorf("%w: last seen txid is not 64 hex characters", chain.ErrInvalidArgument)
		}
	}
	for attempt := range 2 {
		txs, moved, err := s.page(ctx, op, addr, cursor, attempt > 0)
		if err != nil || !moved {
			return txs, err
		}
	}
	return nil, malformed(op, "the history kept changing under the page; retry")
}

// page is one attempt at ChainTxs; moved says the history moved under
// the index, which is then forgotten for the next attempt to read again.
func (s *Source) page(ctx context.Context, op, addr, cursor string, readFirst bool) (txs []chain.Tx, moved bool, err error) {
	ix, end, err := s.pageEnd(ctx, op, addr, cursor, readFirst)
	if err != nil {
		return nil, false, err
	}
	defer ix.release()
	if end < 0 {
		return []chain.Tx{}, false, nil // the cursor is no confirmed transaction of the address
	}
	stop := end // the positions read are [start, stop): the page, and the cursor after it
	if cursor != "" {
		stop = end + 1
	}
	start := max(end-chain.ChainPageSize, 0)
	if start == stop {
		return []chain.Tx{}, false, nil
	}
	raws, err := s.search(ctx, op, addr, start, stop-start)
	if err != nil {
		return nil, false, err
	}
	if !matches(raws, ix.confirmed[start:stop]) {
		ix.reset()
		s.indexes.resized(ix, 0)
		return nil, true, nil
	}
	raws = raws[:end-start]
	if txs, err = s.toTxs(ctx, op, raws); err != nil {
		return nil, false, err
	}
	if err := s.setHeights(ctx, op, txs, raws); err != nil {
		return nil, false, err
	}
	slices.Reverse(txs)
	return txs, false, nil
}

// pageEnd locks addr's index and finds the position the page ends
// before: the end of the confirmed history, or the cursor's position (-1
// if the history does not hold it). The index is read afresh for a first
// page, for a cursor it does not hold yet, and when readFirst.
func (s *Source) pageEnd(ctx context.Context, op, addr, cursor string, readFirst bool) (*addressIndex, int, error) {
	if cursor != "" && !readFirst {
		ix := s.indexes.entry(addr)
		if err := ix.acquire(ctx, op); err != nil {
			return nil, 0, err
		}
		if p := ix.position(cursor); p >= 0 {
			return ix, p, nil
		}
		ix.release()
	}
	ix, err := s.fresh(ctx, op, addr)
	if err != nil {
		return nil, 0, err
	}
	if cursor == "" {
		return ix, len(ix.confirmed), nil
	}
	return ix, ix.position(cursor), nil
}

// matches reports whether raws are the confirmed transactions keys name,
// in order.
func matches(raws []rpcTx, keys []txKey) bool {
	if len(raws) != len(keys) {
		return false
	}
	for i, raw := range raws {
		if !raw.is(keys[i]) {
			return false
		}
	}
	return true
}
