package electrum

import (
	"context"

	"github.com/addrwatch/addrwatch/chain"
)

// history is an address's transactions as blockchain.scripthash.get_history
// lists them: the confirmed ones in the chain's order (oldest first), then
// the mempool's (height 0, or -1 when one of its inputs is unconfirmed).
type history struct {
	confirmed []placed
	mempool   []string // txids, in the server's order
}

// wireHistoryEntry is one entry of get_history's list.
type wireHistoryEntry struct {
	TxHash string `json:"tx_hash"`
	Height int64  `json:"height"`
}

// size is the number of transactions listed.
func (h history) size() int { return len(h.confirmed) + len(h.mempool) }

// history asks for t's history, unless the subscription to t vouches
// for the one held (watcher.cached).
func (s *Source) history(ctx context.Context, t target) (history, error) {
	if h, ok := s.watch.cached(t.scripthash); ok {
		return h, nil
	}
	status, subscribed := s.watch.statusOf(t.scripthash)
	var entries []wireHistoryEntry
	if err := s.call(ctx, "blockchain.scripthash.get_history", []any{t.scripthash}, &entries); err != nil {
		return history{}, err
	}
	h, err := s.checkHistory(entries)
	if err != nil {
		return history{}, err
	}
	if subscribed {
		s.watch.keep(t.scripthash, status, h)
	}
	return h, nil
}

// checkHistory checks a get_history answer: at most HistoryTxsMax
// entries, each txid once, confirmed ones (height above 0) first and in
// the chain's order, then unconfirmed ones (height 0 or -1).
func (s *Source) checkHistory(entries []wireHistoryEntry) (history, error) {
	if len(entries) > s.opts.HistoryTxsMax {
		return history{}, unusablef("the address has more than %d transactions, more than the Electrum source reads for one", s.opts.HistoryTxsMax)
	}
	var h history
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		txid, ok := chain.CanonicalTxID(e.TxHash)
		if !ok || seen[txid] {
			return history{}, unusablef("a history whose transaction IDs are not 64 hex characters, or repeat")
		}
		seen[txid] = true
		switch {
		case e.Height > 0 && len(h.mempool) == 0:
			if n := len(h.confirmed); n > 0 && e.Height < h.confirmed[n-1].height {
				return history{}, unusablef("a history out of the chain's order")
			}
			h.confirmed = append(h.confirmed, placed{txid: txid, height: e.Height})
		case e.Height == 0 || e.Height == -1:
			h.mempool = append(h.mempool, txid)
		default:
			return history{}, unusablef("a history with a confirmed transaction after unconfirmed ones, or a height below -1")
		}
	}
	return h, nil
}
