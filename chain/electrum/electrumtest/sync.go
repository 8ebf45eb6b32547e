package electrumtest

import (
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// The server follows btcd as an Electrum server follows its node: it
// asks the best block (getbestblock) and, when it moved, fetches the
// blocks since the last one it holds on the same chain (getblock,
// walking back by each block's parent: a reorganisation is where the
// walk meets the chain held), and the mempool (getrawmempool, then
// getrawtransaction for each transaction new to it). Then it notifies
// each subscriber of what changed.
//
// It does so every Poll, and before answering any request (fresh), so
// that a request made after a payment or a block sees it, as tests
// expect; a real server may lag its node by a moment.

// fresh brings the index up to date with btcd, unless a sync that began
// after this call did already. Concurrent callers share one sync.
func (s *Server) fresh() error {
	ticket := s.tickets.Add(1)
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.synced >= ticket {
		return nil
	}
	start := s.tickets.Load()
	changed, err := s.sync()
	if err != nil {
		return err
	}
	s.synced = start
	if changed {
		s.notifyAll()
	}
	return nil
}

// sync reads btcd's chain and mempool into the index, and reports
// whether anything changed. s.syncMu is held: the index changes only
// here, so reading it here needs no lock.
func (s *Server) sync() (bool, error) {
	bestHash, bestHeight, err := s.rpc.GetBestBlock()
	if err != nil {
		return false, fmt.Errorf("getbestblock: %w", err)
	}
	var fetched []*wire.MsgBlock // newest first
	fork := int64(bestHeight)
	for hash := *bestHash; fork >= 0; fork-- {
		if fork <= s.ix.tip() && s.ix.blocks[fork].hash == hash {
			break
		}
		b, err := s.rpc.GetBlock(&hash)
		if err != nil {
			return false, fmt.Errorf("getblock: %w", err)
		}
		fetched = append(fetched, b)
		hash = b.Header.PrevBlock
	}
	pool, poolChanged, err := s.mempool()
	if err != nil {
		return false, err
	}
	if len(fetched) == 0 && !poolChanged {
		return false, nil
	}
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	if fork < s.ix.tip() {
		s.ix.truncate(fork)
	}
	slices.Reverse(fetched)
	for _, b := range fetched {
		s.ix.connect(b)
	}
	s.ix.setPool(pool)
	return true, nil
}

// mempool is btcd's mempool, the transactions the index holds already
// taken from it, and whether its set of transactions changed.
func (s *Server) mempool() (map[chainhash.Hash]*wire.MsgTx, bool, error) {
	hashes, err := s.rpc.GetRawMempool()
	if err != nil {
		return nil, false, fmt.Errorf("getrawmempool: %w", err)
	}
	pool := make(map[chainhash.Hash]*wire.MsgTx, len(hashes))
	changed := len(hashes) != len(s.knownPool)
	for _, h := range hashes {
		if tx, ok := s.knownPool[*h]; ok {
			pool[*h] = tx
			continue
		}
		changed = true
		tx, err := s.rpc.GetRawTransaction(h)
		if err != nil {
			continue // it left the mempool since it was listed
		}
		pool[*h] = tx.MsgTx()
	}
	s.knownPool = pool
	return pool, changed, nil
}
