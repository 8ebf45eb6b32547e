package actors

import (
	"cmp"
	"slices"

	"github.com/addrwatch/addrwatch/chain"
)

// Watching: what the chain follower saw of the Bitcoin addresses an
// account's cards hold (Account cards and the cards of bitcoin Spaces).
// The follower runs on the leader, reads the chain source, and proposes
// what it saw as facts (ObserveAddress); apply only records them, so every
// replica holds the same observations and shows the same balances, and a
// new leader resumes from what the log recorded. Apply keeps each
// transaction once: a fact seen again changes nothing, so a transaction
// is new once, never twice (what notifications rely on).

// TxState is where a watched transaction stands, as last observed.
type TxState string

const (
	// TxMempool: in the source's mempool, not in a block.
	TxMempool TxState = "mempool"
	// TxConfirmed: in a block of the best chain.
	TxConfirmed TxState = "confirmed"
	// TxReplaced: left the mempool for a transaction that spends one of
	// the same outputs (replace-by-fee); ReplacedBy names it.
	TxReplaced TxState = "replaced"
	// TxDropped: left the mempool unconfirmed and not replaced by a
	// transaction the follower saw (evicted, expired, or replaced by one
	// that pays none of the account's addresses).
	TxDropped TxState = "dropped"
	// TxReorged: its block left the best chain and it is in no block of
	// the new one (yet): it may confirm again, or never.
	TxReorged TxState = "reorged"
)

// validTxState reports whether s is a TxState.
func validTxState(s TxState) bool {
	switch s {
	case TxMempool, TxConfirmed, TxReplaced, TxDropped, TxReorged:
		return true
	}
	return false
}

// AddressTotals are an address's lifetime counters on one side (the chain
// or the mempool) as the source gave them: satoshis paid to it, satoshis
// spent from it, and the transactions that did either.
type AddressTotals struct {
	FundedSat int64 `json:"funded_sat"`
	SpentSat  int64 `json:"spent_sat"`
	TxCount   int64 `json:"tx_count"`
}

// TxObservation is one transaction of a watched address as the follower
// saw it: the fact an ObserveAddress carries.
type TxObservation struct {
	TxID        string  `json:"txid"`
	State       TxState `json:"state"`
	Height      int64   `json:"height,omitempty"`     // confirmed, or the height it had before a reorg
	BlockHash   string  `json:"block_hash,omitempty"` // as Height
	BlockTime   int64   `json:"block_time,omitempty"` // Unix seconds, as Height
	ReceivedSat int64   `json:"received_sat"`         // paid to the address
	SentSat     int64   `json:"sent_sat"`             // spent from the address (its fee share included)
	// Spends are the outputs the transaction spends (txid:vout), kept
	// while it is in the mempool: what tells a replacement, which spends
	// one of them, from a transaction that was merely dropped.
	Spends     []string `json:"spends,omitempty"`
	ReplacedBy string   `json:"replaced_by,omitempty"`
}

// WatchedTx is a recorded observation with the times (of the commands)
// it was first seen and last changed state.
type WatchedTx struct {
	TxObservation
	FirstSeenAt int64 `json:"first_seen_at"`
	ChangedAt   int64 `json:"changed_at"`
	// Entered counts the chain events of each kind the transaction gave
	// on this address: the occurrence in an event's ID (chain_events.go).
	// Only ObserveChain keeps it.
	Entered TxOccurrences `json:"entered,omitzero"`
	// DeepIn is the block the transaction was at least TxDeepConfirmations
	// deep in when its tx_deep was given (or when it was taken in as
	// already deep); empty until then and again after a reorg.
	DeepIn string `json:"deep_in,omitempty"`
	// DeepCards are the cards told tx_deep in the block DeepCardsIn while
	// others, whose rules ask for more depth, wait: until every card is
	// told and DeepIn says so. Without rules every card has one depth and
	// these stay empty.
	DeepCardsIn string   `json:"deep_cards_in,omitempty"`
	DeepCards   []string `json:"deep_cards,omitempty"`
}

// WatchedAddress is what the account recorded of one watched address:
// the source's totals at the tip it was last observed at, and its recent
// transactions (at most watchedTxsMax; an address's whole history stays
// with the source).
type WatchedAddress struct {
	Address    string        `json:"address"`
	TipHeight  int64         `json:"tip_height"`
	TipHash    string        `json:"tip_hash"`
	Confirmed  AddressTotals `json:"confirmed"`
	Mempool    AddressTotals `json:"mempool"`
	ObservedAt int64         `json:"observed_at"`
	Txs        []*WatchedTx  `json:"txs"`
	// ChainEvents says an ObserveChain has taken the record in: what
	// changes from then on is a chain event. A record only ObserveAddress
	// kept (an older release's kind) has none, and the first ObserveChain
	// takes what is already deep in it as it stands.
	ChainEvents bool `json:"chain_events,omitempty"`
}

// Bounds of what is recorded per address.
const (
	// watchedTxsMax is how many transactions an address keeps: enough
	// for its mempool and its last blocks; the oldest settled ones go
	// first.
	watchedTxsMax = 100
	// observeTxsMax bounds the transactions one ObserveAddress carries.
	observeTxsMax = watchedTxsMax
	// observeSpendsMax bounds the outputs one observed transaction spends
	// that are recorded (a larger one is still recorded, without them).
	observeSpendsMax = 64
	// satoshisMax is 21 million BTC: no amount or total exceeds it.
	satoshisMax = 21_000_000 * 100_000_000
	// txCountMax bounds an address's transaction count.
	txCountMax = 1 << 40
)

// ObserveAddress records what the follower saw of one address: the
// source's totals at its tip, and the transactions whose state is new or
// changed since what the account recorded. Only the system proposes it.
type ObserveAddress struct {
	Address   string          `json:"address"`
	TipHeight int64           `json:"tip_height"`
	TipHash   string          `json:"tip_hash"`
	Confirmed AddressTotals   `json:"confirmed"`
	Mempool   AddressTotals   `json:"mempool"`
	Txs       []TxObservation `json:"txs,omitempty"`
}

func (*ObserveAddress) Kind() Kind { return KindObserveAddress }

// ObservedView is the body of an applied ObserveAddress: how many of its
// transactions were new to the account and how many changed state (the
// rest it had recorded already).
type ObservedView struct {
	New     int `json:"new"`
	Changed int `json:"changed"`
	// Events is how many chain events it gave (ObserveChain only).
	Events int `json:"events,omitempty"`
	// Enqueued is how many outbox entries those events made: the leader's
	// deliverer, on the node that proposed it, need not wait for its next
	// look at the account.
	Enqueued int `json:"enqueued,omitempty"`
}

func (p *ObserveAddress) apply(a *Account, c *Command, _ Level) Result {
	if err := a.admitObservation(c, p.Address, p.validate); err != nil {
		return fail(err)
	}
	w := a.recordOf(p.Address)
	w.TipHeight, w.TipHash, w.Confirmed, w.Mempool, w.ObservedAt = p.TipHeight, p.TipHash, p.Confirmed, p.Mempool, c.At
	var v ObservedView
	for _, o := range p.Txs {
		_, _, r := w.record(o, c.At)
		v.count(r)
	}
	w.trim()
	return ok(v)
}

// admitObservation checks that an observation of address may be
// recorded: the system's, well formed (validate), of an address a card
// holds. Then, and only then, it forgets the records of addresses no card
// holds any more.
func (a *Account) admitObservation(c *Command, address string, validate func() *Error) *Error {
	if c.Principal.Kind != PrincipalSystem {
		return errUnauthorized
	}
	if err := validate(); err != nil {
		return err
	}
	if !a.holdsBitcoinAddress(address) {
		return Errorf(CodeNotFound, "no card of the account holds this address")
	}
	a.forgetUnwatched()
	return nil
}

// recordOf is the account's record of address, made empty when it has
// none, kept in address order.
func (a *Account) recordOf(address string) *WatchedAddress {
	if w := a.watched(address); w != nil {
		return w
	}
	w := &WatchedAddress{Address: address, Txs: []*WatchedTx{}}
	a.Watched = append(a.Watched, w)
	slices.SortFunc(a.Watched, func(x, y *WatchedAddress) int { return cmp.Compare(x.Address, y.Address) })
	return w
}

// count adds what recording one transaction did.
func (v *ObservedView) count(r txRecorded) {
	switch r {
	case txNew:
		v.New++
	case txChanged:
		v.Changed++
	}
}

func (p *ObserveAddress) validate() *Error {
	if p.Address == "" || len(p.Address) > 128 {
		return Errorf(CodeValidation, "address must be 1 to 128 bytes")
	}
	if p.TipHeight < 0 || (p.TipHash != "" && !isHash(p.TipHash)) {
		return Errorf(CodeValidation, "the tip must be a height and a block hash")
	}
	for _, t := range []AddressTotals{p.Confirmed, p.Mempool} {
		if !t.valid() {
			return Errorf(CodeValidation, "address totals out of range")
		}
	}
	if len(p.Txs) > observeTxsMax {
		return Errorf(CodeValidation, "at most %d transactions an observation", observeTxsMax)
	}
	seen := make(map[string]bool, len(p.Txs))
	for i := range p.Txs {
		if err := p.Txs[i].validate(); err != nil {
			return err
		}
		if seen[p.Txs[i].TxID] {
			return Errorf(CodeValidation, "transaction %s observed twice", p.Txs[i].TxID)
		}
		seen[p.Txs[i].TxID] = true
	}
	return nil
}

func (t AddressTotals) valid() bool {
	return t.FundedSat >= 0 && t.FundedSat <= satoshisMax && t.SpentSat >= 0 && t.SpentSat <= satoshisMax &&
		t.TxCount >= 0 && t.TxCount <= txCountMax
}

func (o TxObservation) validate() *Error {
	switch {
	case !isHash(o.TxID):
		return Errorf(CodeValidation, "txid must be 64 lower-case hex characters")
	case !validTxState(o.State):
		return Errorf(CodeValidation, "unknown transaction state %q", o.State)
	case o.State == TxConfirmed && (o.Height <= 0 || !isHash(o.BlockHash) || o.BlockTime <= 0):
		return Errorf(CodeValidation, "a confirmed transaction needs its block's height, hash and time")
	case o.Height < 0 || (o.BlockHash != "" && !isHash(o.BlockHash)) || o.BlockTime < 0:
		return Errorf(CodeValidation, "block height, hash or time out of range")
	case o.ReceivedSat < 0 || o.ReceivedSat > satoshisMax || o.SentSat < 0 || o.SentSat > satoshisMax:
		return Errorf(CodeValidation, "amounts out of range")
	case (o.ReplacedBy != "") != (o.State == TxReplaced), o.ReplacedBy != "" && !isHash(o.ReplacedBy):
		return Errorf(CodeValidation, "a replaced transaction, and only one, names what replaced it")
	}
	return nil
}

// isHash reports whether s is 64 lower-case hex characters (a txid or a
// block hash as explorers print them).
func isHash(s string) bool {
	canonical, ok := chain.CanonicalTxID(s)
	return ok && canonical == s
}

// What recording an observation did.
type txRecorded int

const (
	txAlready txRecorded = iota // recorded as it is: nothing new
	txNew
	txChanged
)

// record takes one observation in: a transaction not recorded is added,
// one whose state, block or replacement differs is updated, and one
// recorded as it is stays as it is. It returns the transaction's record
// and what it was before (nil when it is new).
func (w *WatchedAddress) record(o TxObservation, at int64) (*WatchedTx, *TxObservation, txRecorded) {
	if o.State != TxMempool || len(o.Spends) > observeSpendsMax {
		// Spends only tell a replacement apart, which only a transaction
		// in the mempool may meet; a huge list is not worth refusing the
		// fact for.
		o.Spends = nil
	}
	for _, t := range w.Txs {
		if t.TxID != o.TxID {
			continue
		}
		if t.SameAs(o) {
			return t, &t.TxObservation, txAlready
		}
		before := t.TxObservation
		t.TxObservation, t.ChangedAt = o, at
		return t, &before, txChanged
	}
	t := &WatchedTx{TxObservation: o, FirstSeenAt: at, ChangedAt: at}
	w.Txs = append(w.Txs, t)
	return t, nil, txNew
}

// SameAs reports whether o says nothing t does not: the same state, block
// and replacement (amounts do not change while the txid stays). The
// follower asks it too, to propose only what apply would record.
func (t *WatchedTx) SameAs(o TxObservation) bool {
	return t.State == o.State && t.Height == o.Height && t.BlockHash == o.BlockHash && t.ReplacedBy == o.ReplacedBy
}

// trim keeps the newest watchedTxsMax transactions: those in the mempool
// always, then the most recently changed.
func (w *WatchedAddress) trim() {
	if len(w.Txs) <= watchedTxsMax {
		return
	}
	slices.SortStableFunc(w.Txs, func(x, y *WatchedTx) int {
		if xm, ym := x.State == TxMempool, y.State == TxMempool; xm != ym {
			if xm {
				return 1
			}
			return -1
		}
		return cmp.Compare(x.ChangedAt, y.ChangedAt)
	})
	w.Txs = slices.Clone(w.Txs[len(w.Txs)-watchedTxsMax:])
}

// watched is the account's record of address, nil when it has none.
func (a *Account) watched(address string) *WatchedAddress {
	for _, w := range a.Watched {
		if w.Address == address {
			return w
		}
	}
	return nil
}

// holdsBitcoinAddress reports whether an Account card or a bitcoin
// Space's card holds address.
func (a *Account) holdsBitcoinAddress(address string) bool {
	for _, c := range a.Portfolio {
		if c.Address == address {
			return true
		}
	}
	for _, s := range a.Spaces {
		if s.Type != SpaceBitcoin {
			continue
		}
		for _, c := range s.Cards {
			if c.Address == address {
				return true
			}
		}
	}
	return false
}

// forgetUnwatched drops the records of addresses no card holds any more
// (their cards were deleted or moved away since).
func (a *Account) forgetUnwatched() {
	a.Watched = slices.DeleteFunc(a.Watched, func(w *WatchedAddress) bool { return !a.holdsBitcoinAddress(w.Address) })
}

// WatchTargetsQuery is the follower's read of an account: every Bitcoin
// address its cards hold, with what the account recorded of each. Only
// the system reads it.
type WatchTargetsQuery struct {
	// RecordsOf picks the addresses whose records are copied into the
	// answer (nil: every one). The follower asks every few seconds
	// whether a card brought a new address, and copying every record
	// for that would cost more than the question.
	RecordsOf func(address string) bool
}

// WatchTarget is one watched address and its record (nil: nothing yet).
// The record is a copy: the follower may keep it while the account
// changes. DeepFrom and DeepAt are set by DeepeningQuery alone: the
// lowest height of a block not yet deep for every card, and the lowest
// tip at which some card's rule makes a transaction deep.
type WatchTarget struct {
	Address  string
	Recorded *WatchedAddress
	DeepFrom int64
	DeepAt   int64
}

func (q WatchTargetsQuery) answer(a *Account, who Principal, _ Level, _ int64) ([]WatchTarget, *Error) {
	if who.Kind != PrincipalSystem {
		return nil, errUnauthorized
	}
	var out []WatchTarget
	seen := map[string]bool{}
	add := func(address string) {
		if seen[address] {
			return
		}
		seen[address] = true
		t := WatchTarget{Address: address}
		if q.RecordsOf == nil || q.RecordsOf(address) {
			if w := a.watched(address); w != nil {
				t.Recorded = w.clone()
			}
		}
		out = append(out, t)
	}
	for _, c := range a.Portfolio {
		add(c.Address)
	}
	for _, s := range a.Spaces {
		if s.Type == SpaceBitcoin {
			for _, c := range s.Cards {
				add(c.Address)
			}
		}
	}
	return out, nil
}

// clone is a deep copy of w.
func (w *WatchedAddress) clone() *WatchedAddress {
	c := *w
	c.Txs = make([]*WatchedTx, len(w.Txs))
	for i, t := range w.Txs {
		tc := *t
		tc.Spends = slices.Clone(t.Spends)
		tc.DeepCards = slices.Clone(t.DeepCards)
		c.Txs[i] = &tc
	}
	return &c
}

// AddressRecordQuery is what the follower recorded of one address of the
// account, for its balance. Only the system reads it (the edge, for a
// card it has already shown the reader may see).
type AddressRecordQuery struct{ Address string }

// AddressRecordView is an address's recorded totals and the block time of its
// newest recorded confirmed transaction (Unix seconds, 0 when none);
// Observed is false when the follower has recorded nothing of it yet.
type AddressRecordView struct {
	Observed        bool
	Confirmed       AddressTotals
	Mempool         AddressTotals
	LastConfirmedAt int64
}

func (q AddressRecordQuery) answer(a *Account, who Principal, _ Level, _ int64) (AddressRecordView, *Error) {
	if who.Kind != PrincipalSystem {
		return AddressRecordView{}, errUnauthorized
	}
	w := a.watched(q.Address)
	if w == nil {
		return AddressRecordView{}, nil
	}
	v := AddressRecordView{Observed: true, Confirmed: w.Confirmed, Mempool: w.Mempool}
	for _, t := range w.Txs {
		if t.State == TxConfirmed {
			v.LastConfirmedAt = max(v.LastConfirmedAt, t.BlockTime)
		}
	}
	return v, nil
}

// WatchedQuery is the owner's GET /owner/v1/watched: what the chain
// follower recorded of every address the cards hold.
type WatchedQuery struct{}

// WatchedView is the body of GET /owner/v1/watched, in address order.
type WatchedView struct {
	Addresses []WatchedAddressView `json:"addresses"`
}

// WatchedAddressView is one address's record. An address a card holds
// that the follower has not observed yet is listed with observed false.
type WatchedAddressView struct {
	Address      string          `json:"address"`
	Observed     bool            `json:"observed"`
	TipHeight    int64           `json:"tip_height"`
	TipHash      string          `json:"tip_hash"`
	Confirmed    AddressTotals   `json:"confirmed"`
	Mempool      AddressTotals   `json:"mempool"`
	ObservedAt   *string         `json:"observed_at"`
	Transactions []WatchedTxView `json:"transactions"`
}

// WatchedTxView is one recorded transaction, newest change first.
type WatchedTxView struct {
	TxObservation
	FirstSeenAt string `json:"first_seen_at"`
	ChangedAt   string `json:"changed_at"`
}

func (WatchedQuery) answer(a *Account, who Principal, _ Level, _ int64) (WatchedView, *Error) {
	if who.isAgent() {
		return WatchedView{}, Errorf(CodeForbidden, "API keys cannot read the follower's record")
	}
	v := WatchedView{Addresses: []WatchedAddressView{}}
	targets, _ := WatchTargetsQuery{}.answer(a, Principal{Kind: PrincipalSystem}, LevelWrite, 0)
	slices.SortFunc(targets, func(x, y WatchTarget) int { return cmp.Compare(x.Address, y.Address) })
	for _, t := range targets {
		av := WatchedAddressView{Address: t.Address, Transactions: []WatchedTxView{}}
		if w := t.Recorded; w != nil {
			at := formatTime(w.ObservedAt)
			av.Observed, av.TipHeight, av.TipHash, av.Confirmed, av.Mempool, av.ObservedAt = true, w.TipHeight, w.TipHash, w.Confirmed, w.Mempool, &at
			txs := slices.Clone(w.Txs)
			slices.SortStableFunc(txs, func(x, y *WatchedTx) int { return cmp.Compare(y.ChangedAt, x.ChangedAt) })
			for _, tx := range txs {
				o := tx.TxObservation
				o.Spends = nil
				av.Transactions = append(av.Transactions, WatchedTxView{TxObservation: o, FirstSeenAt: formatTime(tx.FirstSeenAt), ChangedAt: formatTime(tx.ChangedAt)})
			}
		}
		v.Addresses = append(v.Addresses, av)
	}
	return v, nil
}
