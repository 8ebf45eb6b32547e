package chain

import (
	"context"
	"time"
)

// Source is where addrwatch learns what the chain holds: an Esplora server
// (Client), the owner's own btcd (chain/btcdsource) or Electrum server
// (chain/electrum), or the simulated chain. Every source answers in
// Esplora's terms, so that History (windows, preview, ceiling, degraded,
// total_count) works the same whichever one the operator chose.
//
// Errors: ErrNotFound for a transaction the source does not know,
// ErrInvalidArgument for an argument no request is sent for, and any
// failure of the source itself as an *UpstreamError (ErrUpstream), which
// History reports as degraded, never as an empty history.
type Source interface {
	// AddressStats is the address's lifetime counters, confirmed and in
	// the mempool.
	AddressStats(ctx context.Context, addr string) (AddressStats, error)
	// ChainTxs is one page of the address's confirmed transactions,
	// newest first: the first ChainPageSize when lastSeenTxID is empty,
	// otherwise the ChainPageSize just older than lastSeenTxID (a
	// transaction of the address's history; any other gives an empty
	// page). A page shorter than ChainPageSize is the last.
	ChainTxs(ctx context.Context, addr, lastSeenTxID string) ([]Tx, error)
	// MempoolTxs is the address's unconfirmed transactions, newest first,
	// at most pageTxsMax.
	MempoolTxs(ctx context.Context, addr string) ([]Tx, error)
	// Tx is one transaction, with the outputs its inputs spend.
	Tx(ctx context.Context, txid string) (Tx, error)
	// Tip is the source's best block.
	Tip(ctx context.Context) (BlockRef, error)
	// BlockHash is the hash of the source's block at height on its best
	// chain, ErrNotFound above its tip.
	BlockHash(ctx context.Context, height int64) (string, error)
}

// Notifier is a source that says when something may have changed, so
// that the follower reads only what changed, when it changed, instead of
// every address on a timer: btcd's websocket notifications with its
// transaction filter, Electrum's subscriptions. It is optional.
type Notifier interface {
	// Notify sends a Change for every new tip and for every mempool
	// transaction that touches a watched address, until ctx ends. The
	// channel is closed when the source's connection is lost; the
	// follower then calls Notify again.
	Notify(ctx context.Context) (<-chan Change, error)
	// Watch sets the addresses whose changes Notify names.
	Watch(ctx context.Context, addresses []string) error
}

// Change is what a Notifier says changed: the new tip (zero when only the
// mempool changed), and the watched addresses the change touched (none
// known: any may have).
type Change struct {
	Tip       BlockRef
	Addresses []string
	// All says the source cannot name the addresses: every one may have
	// changed (a reorg, a reconnection, more changes than it keeps while
	// the follower was busy).
	All bool
}

// BlockRef names a block: its height and its hash (64 lower-case hex
// characters, as explorers print it).
type BlockRef struct {
	Height int64  `json:"height"`
	Hash   string `json:"hash"`
}

// Guard puts src behind the circuit breaker and per-address cooldowns of
// breaker.go, so that a failing source fails History at once instead of
// after every card's timeout, and one account's failing addresses never
// degrade another's. failures and open are as ClientOptions'
// BreakerFailures and BreakerOpen (0: the defaults; failures < 0: src
// as it is). A Client has them already; Guard is for the other sources.
func Guard(src Source, failures int, open time.Duration) Source {
	if failures < 0 {
		return src
	}
	if failures == 0 {
		failures = DefaultBreakerFailures
	}
	if open <= 0 {
		open = DefaultBreakerOpen
	}
	g := &guarded{src: src, health: newHealth(failures, open), now: time.Now}
	if n, notifies := src.(Notifier); notifies {
		return guardedNotifier{g, n}
	}
	return g
}

// guardedNotifier is a guarded Source that keeps its Notifier: being told
// of changes is not a call the breaker judges.
type guardedNotifier struct {
	*guarded
	Notifier
}

// guarded is a Source behind a breaker (Guard).
type guarded struct {
	src    Source
	health *health
	now    func() time.Time
}

func (g *guarded) call(ctx context.Context, op, subject string, call func() error) error {
	return guardedCall(ctx, g.health, g.now, op, subject, call)
}

func (g *guarded) AddressStats(ctx context.Context, addr string) (s AddressStats, err error) {
	err = g.call(ctx, "address", addr, func() (err error) { s, err = g.src.AddressStats(ctx, addr); return err })
	return s, err
}

func (g *guarded) ChainTxs(ctx context.Context, addr, lastSeenTxID string) (txs []Tx, err error) {
	err = g.call(ctx, "chain txs", addr, func() (err error) { txs, err = g.src.ChainTxs(ctx, addr, lastSeenTxID); return err })
	return txs, err
}

func (g *guarded) MempoolTxs(ctx context.Context, addr string) (txs []Tx, err error) {
	err = g.call(ctx, "mempool txs", addr, func() (err error) { txs, err = g.src.MempoolTxs(ctx, addr); return err })
	return txs, err
}

func (g *guarded) Tx(ctx context.Context, txid string) (t Tx, err error) {
	err = g.call(ctx, "tx", txid, func() (err error) { t, err = g.src.Tx(ctx, txid); return err })
	return t, err
}

// Tip and BlockHash are not guarded: they name no address, and the
// follower asks them on its own schedule.
func (g *guarded) Tip(ctx context.Context) (BlockRef, error) { return g.src.Tip(ctx) }

func (g *guarded) BlockHash(ctx context.Context, height int64) (string, error) {
	return g.src.BlockHash(ctx, height)
}
