package actors

import "slices"

// ObserveChain is ObserveAddress that also derives the chain events of
// what it records (chain_events.go). It is a kind of its own (feature
// version 5) because a node of the previous release applies
// ObserveAddress without events: had the newer release derived them from
// that kind, replicas of the two releases would hold different accounts.
// The follower proposes it once every voter applies it, and
// ObserveAddress until then.
//
// TipOnly is what tx_deep needs: the follower reads only the addresses a
// block touched, so at each new tip it tells the others whose records
// hold a confirmed transaction not yet deep of the tip alone. Such an
// observation carries no transactions and keeps the recorded totals.
type ObserveChain struct {
	ObserveAddress
	TipOnly bool `json:"tip_only,omitempty"`
}

func (*ObserveChain) Kind() Kind { return KindObserveChain }

func (p *ObserveChain) apply(a *Account, c *Command, _ Level) Result {
	if err := a.admitObservation(c, p.Address, p.validate); err != nil {
		return fail(err)
	}
	outbox := a.outboxLen()
	if p.TipOnly {
		v := a.observeTip(c, p)
		v.Enqueued = a.outboxLen() - outbox
		a.settleOutbox(c)
		return ok(v)
	}
	w := a.recordOf(p.Address)
	w.TipHeight, w.TipHash, w.Confirmed, w.Mempool, w.ObservedAt = p.TipHeight, p.TipHash, p.Confirmed, p.Mempool, c.At
	// A record no ObserveChain took in yet (new, or kept by ObserveAddress
	// alone) is first taken as it stands: what is already deep in it is
	// history, not news. A card added for an address with years of
	// payments would otherwise tell each of them at once.
	first := !w.ChainEvents
	w.ChainEvents = true
	cards := a.cardsHolding(p.Address)
	var v ObservedView
	for _, o := range p.Txs {
		t, before, r := w.record(o, c.At)
		v.count(r)
		if r == txAlready {
			continue
		}
		if first {
			if _, reached := a.deepenTx(c, cards, w, t, true); reached {
				continue
			}
		}
		for _, change := range txChanges(before, t.TxObservation) {
			if change.kind == ChainTxReorged {
				t.DeepIn, t.DeepCardsIn, t.DeepCards = "", "", nil
			}
			v.Events += a.tell(c, cards, w, t, change)
		}
	}
	v.Events += a.deepen(c, cards, w, first)
	w.trim()
	v.Enqueued = a.outboxLen() - outbox
	a.settleOutbox(c)
	return ok(v)
}

func (p *ObserveChain) validate() *Error {
	if err := p.ObserveAddress.validate(); err != nil {
		return err
	}
	if p.TipOnly && (len(p.Txs) > 0 || p.Confirmed != (AddressTotals{}) || p.Mempool != (AddressTotals{}) || p.TipHeight <= 0 || !isHash(p.TipHash)) {
		return Errorf(CodeValidation, "a tip-only observation carries a tip and no transactions or totals")
	}
	return nil
}

// observeTip moves the record's tip forward to the observation's (never
// back: a tip-only observation may be proposed after a newer full one)
// and tells what that made deep. An address with no record has nothing
// to deepen; a record no ObserveChain took in yet is taken in as it
// stands, quietly.
func (a *Account) observeTip(c *Command, p *ObserveChain) ObservedView {
	w := a.watched(p.Address)
	if w == nil {
		return ObservedView{}
	}
	first := !w.ChainEvents
	w.ChainEvents = true
	if p.TipHeight > w.TipHeight {
		w.TipHeight, w.TipHash = p.TipHeight, p.TipHash
	}
	return ObservedView{Events: a.deepen(c, a.cardsHolding(p.Address), w, first)}
}

// deepen marks the confirmed transactions of w that are deep at its tip
// for some card and tells each such card (tx_deep), in record order,
// unless quiet (a record taken in as it stands).
func (a *Account) deepen(c *Command, cards []cardPlace, w *WatchedAddress, quiet bool) int {
	told := 0
	for _, t := range w.Txs {
		n, _ := a.deepenTx(c, cards, w, t, quiet)
		told += n
	}
	return told
}

// deepenTx tells tx_deep of t to each card of cards whose depth w's tip
// reached and that was not told in t's block yet, and reports how many
// events it told and whether any card was reached. Each card has its
// rule's depth; once every card holding the address is told, DeepIn
// says so, as it did when one depth served every card (and then the
// cards are told together, as before). The cards of one block's tx_deep
// share its occurrence, counted when the first of them is told.
func (a *Account) deepenTx(c *Command, cards []cardPlace, w *WatchedAddress, t *WatchedTx, quiet bool) (int, bool) {
	if t.State != TxConfirmed || t.DeepIn == t.BlockHash {
		return 0, false
	}
	if t.DeepCardsIn != t.BlockHash {
		t.DeepCardsIn, t.DeepCards = "", nil
	}
	depth := w.TipHeight - t.Height + 1
	var reached []cardPlace
	waiting := false
	for _, card := range cards {
		switch {
		case slices.Contains(t.DeepCards, card.cardID):
		case depth >= card.depth:
			reached = append(reached, card)
		default:
			waiting = true
		}
	}
	if len(cards) == 0 && depth >= TxDeepConfirmations {
		// No card holds the address (apply refuses such observations
		// first): the record is deep as it was before rules.
		t.DeepIn = t.BlockHash
		return 0, true
	}
	if len(reached) == 0 {
		return 0, false
	}
	var occurrence uint32
	if !quiet {
		if len(t.DeepCards) > 0 && t.Entered.Deep > 0 {
			occurrence = t.Entered.Deep
		} else {
			occurrence = t.Entered.enter(ChainTxDeep)
		}
	}
	if waiting {
		t.DeepCardsIn = t.BlockHash
		for _, card := range reached {
			t.DeepCards = append(t.DeepCards, card.cardID)
		}
	} else {
		t.DeepIn, t.DeepCardsIn, t.DeepCards = t.BlockHash, "", nil
	}
	if quiet {
		return 0, true
	}
	return a.tellAs(c, reached, w, t, txChange{ChainTxDeep, t.TxObservation}, occurrence), true
}

// DeepFrom is the lowest block height of a confirmed transaction of w
// not yet deep for every card (0: none).
func (w *WatchedAddress) DeepFrom() int64 {
	var from int64
	for _, t := range w.Txs {
		if t.State == TxConfirmed && t.DeepIn != t.BlockHash && (from == 0 || t.Height < from) {
			from = t.Height
		}
	}
	return from
}

// deepAt is the lowest tip height at which a card of cards not yet told
// tx_deep of a confirmed transaction of w would be (0: none): the tip at
// which the follower must tell the address of the tip (TipOnly).
func (w *WatchedAddress) deepAt(cards []cardPlace) int64 {
	var at int64
	for _, t := range w.Txs {
		if t.State != TxConfirmed || t.DeepIn == t.BlockHash {
			continue
		}
		for _, card := range cards {
			if t.DeepCardsIn == t.BlockHash && slices.Contains(t.DeepCards, card.cardID) {
				continue
			}
			if h := t.Height + card.depth - 1; at == 0 || h < at {
				at = h
			}
		}
	}
	return at
}

// DeepeningQuery is the follower's read, at a new tip, of the addresses
// whose records hold a confirmed transaction not yet deep for every card
// holding it, each with DeepFrom, DeepAt and no record: those a tip-only
// ObserveChain may deepen. Only
// the system reads it. It scans the records' transactions (at most
// watchedTxsMax an address) and copies nothing.
type DeepeningQuery struct{}

func (DeepeningQuery) answer(a *Account, who Principal, _ Level, _ int64) ([]WatchTarget, *Error) {
	if who.Kind != PrincipalSystem {
		return nil, errUnauthorized
	}
	var out []WatchTarget
	rules := a.Notify != nil && len(a.Notify.Rules) > 0
	for _, w := range a.Watched {
		if from := w.DeepFrom(); from > 0 && a.holdsBitcoinAddress(w.Address) {
			// Without rules every card's depth is TxDeepConfirmations,
			// and the cards' list is not worth making.
			at := from + TxDeepConfirmations - 1
			if rules {
				at = w.deepAt(a.cardsHolding(w.Address))
			}
			out = append(out, WatchTarget{Address: w.Address, DeepFrom: from, DeepAt: at})
		}
	}
	return out, nil
}
