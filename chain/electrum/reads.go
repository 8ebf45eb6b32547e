package electrum

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/wire"
)

// mempoolTxsMax is the most mempool transactions MempoolTxs lists, as
// Esplora lists at most 50; AddressStats counts them all.
const mempoolTxsMax = 50

// AddressStats is the address's lifetime counters, confirmed and in the
// mempool, summed over its whole history (Electrum keeps no such
// counters): get_history, then every transaction of it not kept yet.
// The outputs it spends are among them: whatever spends an output paying
// the address is in its history too.
func (s *Source) AddressStats(ctx context.Context, addr string) (chain.AddressStats, error) {
	const op = "address"
	t, err := s.targetOf(addr)
	if err != nil {
		return chain.AddressStats{}, err
	}
	h, err := s.history(ctx, t)
	if err != nil {
		return chain.AddressStats{}, upstream(op, err)
	}
	ids := make([]string, 0, h.size())
	for _, c := range h.confirmed {
		ids = append(ids, c.txid)
	}
	ids = append(ids, h.mempool...)
	msgs, err := s.rawTxs(ctx, ids)
	if err != nil {
		return chain.AddressStats{}, upstream(op, err)
	}
	confirmed := make([]*wire.MsgTx, 0, len(h.confirmed))
	for _, c := range h.confirmed {
		msg, ok := msgs[c.txid]
		if !ok {
			return chain.AddressStats{}, upstream(op, unusablef("the server does not know a transaction it lists as confirmed"))
		}
		confirmed = append(confirmed, msg)
	}
	var pending []*wire.MsgTx
	for _, id := range h.mempool {
		if msg, ok := msgs[id]; ok { // one it no longer knows left the mempool since
			pending = append(pending, msg)
		}
	}
	paid := paidOutputs(t.script, confirmed, pending)
	stats := chain.AddressStats{Address: addr}
	if stats.Chain, err = tally(t.script, confirmed, paid); err != nil {
		return chain.AddressStats{}, upstream(op, err)
	}
	if stats.Mempool, err = tally(t.script, pending, paid); err != nil {
		return chain.AddressStats{}, upstream(op, err)
	}
	return stats, nil
}

// paidOutputs are the outputs paying script in any of txs, by outpoint.
func paidOutputs(script []byte, txs ...[]*wire.MsgTx) map[wire.OutPoint]int64 {
	paid := map[wire.OutPoint]int64{}
	for _, list := range txs {
		for _, msg := range list {
			hash := msg.TxHash()
			for i, o := range msg.TxOut {
				if bytes.Equal(o.PkScript, script) {
					paid[wire.OutPoint{Hash: hash, Index: uint32(i)}] = o.Value
				}
			}
		}
	}
	return paid
}

// tally is Esplora's counters over txs: how many, what they pay to
// script, and what they spend of paid; neither sum can pass 21 million
// BTC.
func tally(script []byte, txs []*wire.MsgTx, paid map[wire.OutPoint]int64) (chain.TxoStats, error) {
	s := chain.TxoStats{TxCount: int64(len(txs))}
	for _, msg := range txs {
		for _, o := range msg.TxOut {
			if o.Value < 0 || o.Value > satoshisMax {
				return chain.TxoStats{}, unusablef("a value out of range")
			}
			if bytes.Equal(o.PkScript, script) {
				s.FundedTxoSum += o.Value
			}
		}
		for _, in := range msg.TxIn {
			s.SpentTxoSum += paid[in.PreviousOutPoint]
		}
		if s.FundedTxoSum > satoshisMax || s.SpentTxoSum > satoshisMax {
			return chain.TxoStats{}, unusablef("an address holding more than there is")
		}
	}
	return s, nil
}

// ChainTxs is one page of the address's confirmed transactions, newest
// first: get_history, then the page's transactions, those their inputs
// spend from, and their blocks' headers, each unless kept.
func (s *Source) ChainTxs(ctx context.Context, addr, lastSeenTxID string) ([]chain.Tx, error) {
	const op = "chain txs"
	t, err := s.targetOf(addr)
	if err != nil {
		return nil, err
	}
	cursor := ""
	if lastSeenTxID != "" {
		var ok bool
		if cursor, ok = chain.CanonicalTxID(lastSeenTxID); !ok {
			return nil, fmt.Errorf("%w: last seen txid is not 64 hex characters", chain.ErrInvalidArgument)
		}
	}
	h, err := s.history(ctx, t)
	if err != nil {
		return nil, upstream(op, err)
	}
	newest := slices.Clone(h.confirmed)
	slices.Reverse(newest)
	start := 0
	if cursor != "" {
		at := slices.IndexFunc(newest, func(p placed) bool { return p.txid == cursor })
		if at < 0 {
			return []chain.Tx{}, nil // as Esplora: a cursor outside the history gives an empty page
		}
		start = at + 1
	}
	page := newest[start:min(start+chain.ChainPageSize, len(newest))]
	txs, err := s.listing(ctx, page)
	return txs, upstream(op, err)
}

// MempoolTxs is the address's unconfirmed transactions, newest first
// as far as can be told (Electrum gives no times): a transaction that
// spends another's output before that one, otherwise get_history's
// order reversed; at most mempoolTxsMax, then put together as
// ChainTxs'. One the server no longer knows has left the mempool since
// and is not listed.
func (s *Source) MempoolTxs(ctx context.Context, addr string) ([]chain.Tx, error) {
	const op = "mempool txs"
	t, err := s.targetOf(addr)
	if err != nil {
		return nil, err
	}
	h, err := s.history(ctx, t)
	if err != nil {
		return nil, upstream(op, err)
	}
	newest := slices.Clone(h.mempool)
	slices.Reverse(newest)
	msgs, err := s.rawTxs(ctx, newest)
	if err != nil {
		return nil, upstream(op, err)
	}
	newest = slices.DeleteFunc(newest, func(id string) bool { _, known := msgs[id]; return !known })
	newest = spendsFirst(newest, msgs)
	newest = newest[:min(len(newest), mempoolTxsMax)]
	placedTxs := make([]placed, len(newest))
	for i, id := range newest {
		placedTxs[i] = placed{txid: id}
	}
	txs, err := s.txsOf(ctx, placedTxs, msgs)
	return txs, upstream(op, err)
}

// spendsFirst orders ids so that a transaction comes before every one
// among ids whose outputs it spends, keeping the order given otherwise:
// by how many of them it descends from, most first.
func spendsFirst(ids []string, msgs map[string]*wire.MsgTx) []string {
	listed := make(map[string]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	depth := map[string]int{}
	var depthOf func(id string, seen map[string]bool) int
	depthOf = func(id string, seen map[string]bool) int {
		if d, ok := depth[id]; ok {
			return d
		}
		if seen[id] { // a cycle no valid chain holds: cut it
			return 0
		}
		seen[id] = true
		d := 0
		for _, in := range msgs[id].TxIn {
			if parent := in.PreviousOutPoint.Hash.String(); listed[parent] {
				d = max(d, depthOf(parent, seen)+1)
			}
		}
		depth[id] = d
		return d
	}
	ordered := slices.Clone(ids)
	for _, id := range ordered {
		depthOf(id, map[string]bool{})
	}
	slices.SortStableFunc(ordered, func(a, b string) int { return depth[b] - depth[a] })
	return ordered
}

// listing puts together the listed confirmed transactions, all of
// which the server must know.
func (s *Source) listing(ctx context.Context, listed []placed) ([]chain.Tx, error) {
	ids := make([]string, len(listed))
	for i, p := range listed {
		ids[i] = p.txid
	}
	msgs, err := s.rawTxs(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, p := range listed {
		if _, ok := msgs[p.txid]; !ok {
			return nil, unusablef("the server does not know a transaction it lists as confirmed")
		}
	}
	return s.txsOf(ctx, listed, msgs)
}
