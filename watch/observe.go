package watch

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// sight is what the source shows of one address at one moment: its
// totals, its mempool transactions and its newest confirmed ones (one
// page), read at tip.
type sight struct {
	tip     chain.BlockRef
	stats   chain.AddressStats
	mempool []chain.Tx
	recent  []chain.Tx // newest first, at most chain.ChainPageSize
}

// lookup asks the source for one transaction (chain.ErrNotFound when it
// knows none by that txid).
type lookup func(ctx context.Context, txid string) (chain.Tx, error)

// observation compares what the source shows of address (s) with what
// the account recorded of it (rec, nil when nothing yet) and returns the
// facts to propose: the totals at the tip, and every transaction whose
// state is new or changed. It returns nil when the account has recorded
// all of it already. Transactions the account recorded as in the mempool
// or confirmed that the source no longer shows so are looked up, to tell
// a confirmation from a replacement, a drop or a reorg.
func observation(ctx context.Context, address string, s sight, rec *actors.WatchedAddress, find lookup) (*actors.ObserveChain, error) {
	obs := &actors.ObserveChain{ObserveAddress: actors.ObserveAddress{
		Address: address, TipHeight: s.tip.Height, TipHash: s.tip.Hash,
		Confirmed: totals(s.stats.Chain), Mempool: totals(s.stats.Mempool),
	}}
	recorded := map[string]*actors.WatchedTx{}
	if rec != nil {
		for _, t := range rec.Txs {
			recorded[t.TxID] = t
		}
	}
	shown := map[string]bool{}
	add := func(o actors.TxObservation) {
		if t := recorded[o.TxID]; t != nil && t.SameAs(o) {
			return
		}
		obs.Txs = append(obs.Txs, o)
	}
	for _, tx := range s.mempool {
		shown[tx.TxID] = true
		o := seen(address, tx)
		if t := recorded[tx.TxID]; t != nil && (t.State == actors.TxConfirmed || t.State == actors.TxReorged) {
			// Back in the mempool from a block that left the chain.
			o = reorgedOut(t)
		}
		add(o)
	}
	for _, tx := range s.recent {
		shown[tx.TxID] = true
		add(seen(address, tx))
	}
	oldestShown := int64(0)
	if len(s.recent) == chain.ChainPageSize {
		oldestShown = s.recent[len(s.recent)-1].BlockHeight
	}
	for _, t := range gone(rec, shown, oldestShown) {
		o, err := whereNow(ctx, address, t, s, find)
		if err != nil {
			return nil, err
		}
		add(o)
	}
	if len(obs.Txs) > observeTxsMax {
		// Keep the mempool and the newest; the rest comes in the next
		// observation, once these are recorded.
		obs.Txs = obs.Txs[:observeTxsMax]
	}
	inOrderOfHappening(obs.Txs, recorded)
	if rec != nil && len(obs.Txs) == 0 && rec.TipHash == obs.TipHash && rec.TipHeight == obs.TipHeight &&
		rec.Confirmed == obs.Confirmed && rec.Mempool == obs.Mempool {
		return nil, nil
	}
	return obs, nil
}

// observeTxsMax is how many transactions one observation carries (the
// rules' bound).
const observeTxsMax = 100

// inOrderOfHappening sorts an observation's transactions in the order
// what they tell happened, since apply derives the chain events in the
// order it is given them, and that is the order of the feed and of a
// card's notifications: a block that left the chain before anything the
// branch replacing it confirmed, an older block before a newer, a block's
// transactions in the block's order, and the mempool's news after every
// block (what left the mempool before what entered it). The sight lists
// the mempool first and the confirmed newest first, so without this a
// follower catching up on two blocks told the newer first, and a spend
// in the mempool came before the confirmation of the coin it spends.
// The order is the proposer's to choose (apply takes a command's as it
// comes), so a node of an older version applies it alike.
func inOrderOfHappening(txs []actors.TxObservation, recorded map[string]*actors.WatchedTx) {
	keyed := make([]happening, len(txs))
	for i, o := range txs {
		keyed[i] = happeningOf(i, o, recorded[o.TxID])
	}
	slices.SortFunc(keyed, func(x, y happening) int {
		return cmp.Or(cmp.Compare(x.height, y.height), cmp.Compare(x.rank, y.rank), cmp.Compare(x.pos, y.pos))
	})
	for i := range keyed {
		txs[i] = keyed[i].o
	}
}

// happening is when what an observation tells happened.
type happening struct {
	height int64 // the block it left or entered; past every block for the mempool's news
	rank   int   // at one height: leaving, then entering; past the blocks: leaving the mempool, then entering
	pos    int   // the source's order, oldest first within a block
	o      actors.TxObservation
}

const (
	leavesBlock = iota
	entersBlock
	leavesMempool
	entersMempool
)

// happeningOf is when o, the source's i-th, happened; t is the record
// of its transaction (nil when new).
func happeningOf(i int, o actors.TxObservation, t *actors.WatchedTx) happening {
	if t != nil && t.State == actors.TxConfirmed && (o.State != actors.TxConfirmed || o.BlockHash != t.BlockHash) {
		return happening{t.Height, leavesBlock, i, o}
	}
	switch o.State {
	case actors.TxConfirmed:
		// The source lists a block's transactions newest first.
		return happening{o.Height, entersBlock, -i, o}
	case actors.TxReplaced, actors.TxDropped:
		return happening{math.MaxInt64, leavesMempool, i, o}
	}
	return happening{math.MaxInt64, entersMempool, i, o}
}

// gone lists, in the record's order, the transactions the account holds
// as in the mempool or confirmed that the source no longer shows so. A
// confirmed one older than the oldest of a full page is not gone: it is
// beyond the page.
func gone(rec *actors.WatchedAddress, shown map[string]bool, oldestShown int64) []*actors.WatchedTx {
	if rec == nil {
		return nil
	}
	var out []*actors.WatchedTx
	for _, t := range rec.Txs {
		switch {
		case shown[t.TxID]:
		case t.State == actors.TxMempool:
			out = append(out, t)
		case t.State == actors.TxConfirmed && t.Height >= oldestShown:
			out = append(out, t)
		}
	}
	return out
}

// whereNow finds out what became of a recorded transaction the source no
// longer shows where it was: confirmed (in another block), replaced by a
// transaction it shows that spends one of the same outputs, dropped, or,
// if it was confirmed, reorged out.
func whereNow(ctx context.Context, address string, t *actors.WatchedTx, s sight, find lookup) (actors.TxObservation, error) {
	tx, err := find(ctx, t.TxID)
	switch {
	case errors.Is(err, chain.ErrNotFound):
	case err != nil:
		return actors.TxObservation{}, err
	case tx.Confirmed:
		return seen(address, tx), nil
	case t.State == actors.TxMempool:
		return t.TxObservation, nil // still in the mempool: the listing missed it
	}
	if t.State == actors.TxConfirmed {
		return reorgedOut(t), nil
	}
	o := t.TxObservation
	if by := replacer(t.Spends, s); by != "" {
		o.State, o.ReplacedBy = actors.TxReplaced, by
	} else {
		o.State = actors.TxDropped
	}
	o.Spends = nil
	return o, nil
}

// replacer is a transaction the source shows that spends one of spends.
func replacer(spends []string, s sight) string {
	for _, txs := range [][]chain.Tx{s.mempool, s.recent} {
		for _, tx := range txs {
			for _, in := range tx.Inputs {
				if in.Spends != "" && slices.Contains(spends, in.Spends) {
					return tx.TxID
				}
			}
		}
	}
	return ""
}

// reorgedOut is t, confirmed until its block left the chain.
func reorgedOut(t *actors.WatchedTx) actors.TxObservation {
	o := t.TxObservation
	o.State, o.Spends, o.ReplacedBy = actors.TxReorged, nil, ""
	return o
}

// seen is tx as the source shows it now, for address.
func seen(address string, tx chain.Tx) actors.TxObservation {
	o := actors.TxObservation{TxID: tx.TxID, State: actors.TxMempool}
	for _, out := range tx.Outputs {
		if out.Address == address {
			o.ReceivedSat += out.Value
		}
	}
	for _, in := range tx.Inputs {
		if in.Address == address {
			o.SentSat += in.Value
		}
		if in.Spends != "" {
			o.Spends = append(o.Spends, in.Spends)
		}
	}
	if tx.Confirmed {
		o.State, o.Height, o.BlockHash, o.BlockTime, o.Spends = actors.TxConfirmed, tx.BlockHeight, tx.BlockHash, tx.BlockTime.Unix(), nil
	}
	return o
}

func totals(s chain.TxoStats) actors.AddressTotals {
	return actors.AddressTotals{FundedSat: s.FundedTxoSum, SpentSat: s.SpentTxoSum, TxCount: s.TxCount}
}
