package watch

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// Target is one address an account watches, with what the account
// recorded of it (nil: nothing yet). DeepFrom is the lowest block height
// of a recorded confirmed transaction not yet deep for every card, and
// DeepAt the lowest tip at which one is deep for a card not yet told
// (each card's rule has its depth) (Store.Deepening only).
type Target struct {
	Account  string
	Address  string
	Recorded *actors.WatchedAddress
	DeepFrom int64
	DeepAt   int64
}

// Store is what the follower needs of the cluster, on the node it runs
// on: the addresses watched by the accounts this node leads, and a way to
// propose what it saw of one of them to the account's log.
type Store interface {
	// Leading reports whether this node leads any accounts: only then
	// does the follower ask the source anything.
	Leading() bool
	// Watched lists every watched address, with the records of those
	// recordsOf picks (nil: all); the others' Recorded is nil.
	Watched(ctx context.Context, recordsOf func(address string) bool) ([]Target, error)
	// Deepening lists the watched addresses whose records hold a
	// confirmed transaction not yet deep, with DeepFrom and no record.
	Deepening(ctx context.Context) ([]Target, error)
	// Observe proposes what the follower saw of one address: as
	// ObserveChain, or, while a voter does not apply that kind yet, as the
	// ObserveAddress it carries (a tip-only one then has nothing to say).
	Observe(ctx context.Context, account string, obs *actors.ObserveChain) error
}

// Options tune a Follower. The zero value takes every default.
type Options struct {
	// Poll is how often the source's tip is asked; a new tip starts a
	// sweep. 0 means DefaultPoll.
	Poll time.Duration
	// MempoolEvery is how often a sweep runs while the tip stays put, to
	// see mempool transactions. 0 means DefaultMempoolEvery.
	MempoolEvery time.Duration
	// Workers is how many addresses are read from the source at once. 0
	// means DefaultWorkers.
	Workers int
	// FullEvery is how often a follower told of changes (chain.Notifier)
	// sweeps every address anyway. 0 means DefaultFullEvery.
	FullEvery time.Duration
	// RereadChunk is how many addresses of such a sweep (and of the one
	// when it starts, or after a change it cannot name) are read before
	// the follower looks for news again, so that a block waits for at most
	// one chunk, not for the whole sweep. 0 means DefaultRereadChunk.
	RereadChunk int
	// AddressTimeout bounds the reads of one address, so that one slow
	// address holds one worker for at most that long. 0 means
	// DefaultAddressTimeout.
	AddressTimeout time.Duration
	Logger         *slog.Logger
}

// Defaults of Options.
const (
	DefaultPoll           = 2 * time.Second
	DefaultMempoolEvery   = 10 * time.Second
	DefaultWorkers        = 8
	DefaultAddressTimeout = 20 * time.Second
	DefaultFullEvery      = 5 * time.Minute
	DefaultRereadChunk    = 256
)

// Follower follows the chain for every watched address: it asks the
// source for its tip, and on a new one (or every MempoolEvery) sweeps
// every watched address, proposing to each account what changed.
type Follower struct {
	src   chain.Source
	store Store
	opts  Options

	mu    sync.Mutex
	stats Stats
}

// Stats count what the follower did, for logs, metrics and tests.
type Stats struct {
	Sweeps       int64          `json:"sweeps"`       // sweeps finished
	Addresses    int64          `json:"addresses"`    // addresses read by them
	Tip          chain.BlockRef `json:"tip"`          // the tip of the last sweep
	Requests     int64          `json:"requests"`     // requests made to the source by sweeps
	Observations int64          `json:"observations"` // observations proposed
	Failures     int64          `json:"failures"`     // addresses whose reads or proposal failed
	TipOnly      int64          `json:"tip_only"`     // tip-only observations proposed (deepen)
}

// New returns a follower of src for the accounts of store.
func New(src chain.Source, store Store, opts Options) *Follower {
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.MempoolEvery <= 0 {
		opts.MempoolEvery = DefaultMempoolEvery
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.FullEvery <= 0 {
		opts.FullEvery = DefaultFullEvery
	}
	if opts.RereadChunk <= 0 {
		opts.RereadChunk = DefaultRereadChunk
	}
	if opts.AddressTimeout <= 0 {
		opts.AddressTimeout = DefaultAddressTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Follower{src: src, store: store, opts: opts}
}

// Stats returns the counts so far.
func (f *Follower) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Run follows until ctx ends, on the node that leads accounts. With a
// source that notifies (chain.Notifier) it reads only the addresses a
// change names, as soon as it is told; otherwise it asks the tip every
// Poll and sweeps every address on a new tip and every MempoolEvery.
func (f *Follower) Run(ctx context.Context) {
	poll := time.NewTicker(f.opts.Poll)
	defer poll.Stop()
	n, notifies := f.src.(chain.Notifier)
	for ctx.Err() == nil {
		switch {
		case !f.store.Leading():
		case notifies:
			if err := f.runNotified(ctx, n, poll.C); err != nil && ctx.Err() == nil {
				f.opts.Logger.Warn("the chain source's notifications stopped; asking again", "err", err)
			}
		default:
			f.runPolling(ctx, poll.C)
		}
		select {
		case <-ctx.Done():
		case <-poll.C:
		}
	}
}

// runPolling sweeps every address on a new tip and every MempoolEvery,
// until ctx ends or this node stops leading.
func (f *Follower) runPolling(ctx context.Context, poll <-chan time.Time) {
	var last chain.BlockRef
	var swept time.Time
	for f.store.Leading() {
		tip, err := f.src.Tip(ctx)
		switch {
		case err != nil:
			f.opts.Logger.Warn("the chain source did not say its tip", "err", err)
		case tip != last || time.Since(swept) >= f.opts.MempoolEvery:
			if err := f.Sweep(ctx, tip); err == nil {
				last, swept = tip, time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-poll:
		}
	}
}

// runNotified reads every address once (whatever happened while nobody
// listened), then reads what each notification names, until ctx ends,
// this node stops leading or the notifications stop. Every Poll it looks
// for addresses new since (a card added), reads them and watches them;
// every FullEvery it reads everything again, in case a notification was
// lost. The reads of everything go RereadChunk addresses at a time, and
// a notification is taken between two chunks: at 100,000 addresses a
// whole re-read takes minutes, and a block must not wait for it.
func (f *Follower) runNotified(ctx context.Context, n chain.Notifier, poll <-chan time.Time) error {
	changes, err := n.Notify(ctx)
	if err != nil {
		return err
	}
	tip, err := f.src.Tip(ctx)
	if err != nil {
		return err
	}
	// rereads are the addresses still to read again, in order.
	watched, rereads, err := f.watchAll(ctx, n, nil)
	if err != nil {
		return err
	}
	take := func(c chain.Change) error {
		newTip := c.Tip.Hash != "" && c.Tip != tip
		if c.Tip.Hash != "" {
			tip = c.Tip
		}
		if c.All {
			// The re-read observes every address at the tip of its chunk.
			watched, rereads, err = f.watchAll(ctx, n, watched)
			return err
		}
		read := setOf(c.Addresses)
		if len(read) > 0 {
			if err := f.sweep(ctx, tip, read); err != nil {
				return err
			}
		}
		if newTip {
			return f.deepen(ctx, tip, read)
		}
		return nil
	}
	full := time.NewTicker(f.opts.FullEvery)
	defer full.Stop()
	for f.store.Leading() {
		// With re-reads to do, a change goes first and nothing is waited
		// for: the next chunk is read at once.
		var idle <-chan time.Time
		if len(rereads) > 0 {
			idle = closedTime
			select {
			case c, open := <-changes:
				if !open {
					return errNotificationsEnded
				}
				f.report(ctx, take(c))
				continue
			default:
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case c, open := <-changes:
			if !open {
				return errNotificationsEnded
			}
			err = take(c)
		case <-full.C:
			watched, rereads, err = f.watchAll(ctx, n, watched)
		case <-poll:
			watched, err = f.sweepAndWatch(ctx, n, tip, watched)
		case <-idle:
			chunk := rereads[:min(len(rereads), f.opts.RereadChunk)]
			rereads = rereads[len(chunk):]
			err = f.sweep(ctx, tip, setOf(chunk))
		}
		f.report(ctx, err)
	}
	return nil
}

var errNotificationsEnded = errors.New("the notifications ended")

// report logs a sweep's failure, unless the follower is stopping.
func (f *Follower) report(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		f.opts.Logger.Warn("a sweep failed", "err", err)
	}
}

// closedTime is a channel that is always ready.
var closedTime = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

// watchAll tells the source to watch every watched address and returns
// the set and every address to read again, in order (known is the set
// watched so far, kept when the listing fails).
func (f *Follower) watchAll(ctx context.Context, n chain.Notifier, known map[string]bool) (map[string]bool, []string, error) {
	targets, err := f.store.Watched(ctx, none)
	if err != nil {
		return known, nil, err
	}
	all := map[string]bool{}
	for _, t := range targets {
		all[t.Address] = true
	}
	// Watched again even when the set is the same: after a reorg or a
	// reconnection the source's filter may need building anew (btcd's
	// holds the outpoints the addresses own).
	order := slices.Sorted(maps.Keys(all))
	if err := n.Watch(ctx, order); err != nil {
		return known, nil, err
	}
	return all, order, nil
}

// none picks no record: the listing is for the addresses alone.
func none(string) bool { return false }

// sweepAndWatch sweeps the watched addresses not in known and, when the
// set changed, tells the source to watch it. It returns the set watched.
func (f *Follower) sweepAndWatch(ctx context.Context, n chain.Notifier, tip chain.BlockRef, known map[string]bool) (map[string]bool, error) {
	unknown := func(address string) bool { return !known[address] } // the records of the addresses to sweep
	targets, err := f.store.Watched(ctx, unknown)
	if err != nil {
		return known, err
	}
	all := map[string]bool{}
	fresh := map[string]bool{}
	for _, t := range targets {
		all[t.Address] = true
		if !known[t.Address] {
			fresh[t.Address] = true
		}
	}
	if len(fresh) == 0 && len(all) == len(known) {
		return known, nil
	}
	if err := n.Watch(ctx, slices.Sorted(maps.Keys(all))); err != nil {
		return known, err
	}
	return all, f.sweepTargets(ctx, tip, targets, fresh)
}

func setOf(addresses []string) map[string]bool {
	set := make(map[string]bool, len(addresses))
	for _, a := range addresses {
		set[a] = true
	}
	return set
}

// Sweep observes every watched address once at tip: each address is read
// from the source once however many accounts watch it, and each account
// is told what it has not recorded. One address's failure is counted and
// logged, and holds back no other.
func (f *Follower) Sweep(ctx context.Context, tip chain.BlockRef) error {
	return f.sweep(ctx, tip, nil)
}

// sweep is Sweep of the addresses in only (nil: all).
func (f *Follower) sweep(ctx context.Context, tip chain.BlockRef, only map[string]bool) error {
	var picked func(string) bool
	if only != nil {
		picked = func(address string) bool { return only[address] }
	}
	targets, err := f.store.Watched(ctx, picked)
	if err != nil {
		return err
	}
	return f.sweepTargets(ctx, tip, targets, only)
}

func (f *Follower) sweepTargets(ctx context.Context, tip chain.BlockRef, targets []Target, only map[string]bool) error {
	byAddress := map[string][]Target{}
	var order []string
	for _, t := range targets {
		if only != nil && !only[t.Address] {
			continue
		}
		if _, seen := byAddress[t.Address]; !seen {
			order = append(order, t.Address)
		}
		byAddress[t.Address] = append(byAddress[t.Address], t)
	}
	inParallel(ctx, f.opts.Workers, order, func(address string) { f.follow(ctx, tip, address, byAddress[address]) })
	f.mu.Lock()
	f.stats.Sweeps++
	f.stats.Addresses += int64(len(order))
	f.stats.Tip = tip
	f.mu.Unlock()
	return ctx.Err()
}

// deepen tells the addresses the change at tip did not name (read), whose
// records hold a confirmed transaction tip makes deep, of tip alone: a
// tip-only ObserveChain, from which apply gives tx_deep. The addresses a
// change names are observed at tip already. A polling follower needs
// none of it: it observes every address at each new tip. The proposals go
// Workers at a time, as a sweep's do, so that a block that deepens many
// addresses at once costs a few group commits, not one each.
func (f *Follower) deepen(ctx context.Context, tip chain.BlockRef, read map[string]bool) error {
	targets, err := f.store.Deepening(ctx)
	if err != nil {
		return err
	}
	targets = slices.DeleteFunc(targets, func(t Target) bool {
		return read[t.Address] || tip.Height < t.DeepAt
	})
	var proposed atomic.Int64
	inParallel(ctx, f.opts.Workers, targets, func(t Target) {
		obs := &actors.ObserveChain{ObserveAddress: actors.ObserveAddress{Address: t.Address, TipHeight: tip.Height, TipHash: tip.Hash}, TipOnly: true}
		if err := f.store.Observe(ctx, t.Account, obs); err != nil {
			f.failed(t.Address, "deepen", err, 0)
			return
		}
		proposed.Add(1)
	})
	f.mu.Lock()
	f.stats.TipOnly += proposed.Load()
	f.mu.Unlock()
	return ctx.Err()
}

// inParallel calls do for each item, workers at a time, and returns once
// every call has; when ctx ends, the items not handed out yet are left.
func inParallel[T any](ctx context.Context, workers int, items []T, do func(T)) {
	work := make(chan T)
	var wg sync.WaitGroup
	for range min(workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range work {
				do(item)
			}
		}()
	}
	for _, item := range items {
		select {
		case work <- item:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
}

// follow reads one address and proposes to each account watching it what
// that account has not recorded.
func (f *Follower) follow(ctx context.Context, tip chain.BlockRef, address string, targets []Target) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.AddressTimeout)
	defer cancel()
	src := &counting{Source: f.src}
	s, err := read(ctx, src, tip, address)
	if err != nil {
		f.failed(address, "read", err, src.calls.Load())
		return
	}
	var proposed int64
	for _, t := range targets {
		obs, err := observation(chain.WithAccount(ctx, t.Account), address, s, t.Recorded, src.Tx)
		if err == nil && obs != nil {
			err = f.store.Observe(ctx, t.Account, obs)
			proposed++
		}
		if err != nil {
			f.failed(address, "observe", err, 0)
		}
	}
	f.mu.Lock()
	f.stats.Requests += src.calls.Load()
	f.stats.Observations += proposed
	f.mu.Unlock()
}

func (f *Follower) failed(address, step string, err error, requests int64) {
	f.opts.Logger.Warn("could not follow an address", "step", step, "err", err)
	f.mu.Lock()
	f.stats.Failures++
	f.stats.Requests += requests
	f.mu.Unlock()
}

// read is what the source shows of address: its totals, its mempool and
// its newest confirmed page, with each confirmed transaction's block hash
// (asked by height where the source does not say it).
func read(ctx context.Context, src *counting, tip chain.BlockRef, address string) (sight, error) {
	s := sight{tip: tip}
	// The three at once, as History asks them: a source that reads an
	// address's history once for all three (btcd's index, chain/btcdsource
	// DESIGN.md) then reads it once, not three times, and none waits for
	// another's answer. What each says is what it said one after another.
	var errs [3]error
	var wg sync.WaitGroup
	wg.Go(func() { s.stats, errs[0] = src.AddressStats(ctx, address) })
	wg.Go(func() { s.mempool, errs[1] = src.MempoolTxs(ctx, address) })
	wg.Go(func() { s.recent, errs[2] = src.ChainTxs(ctx, address, "") })
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return s, err
		}
	}
	var err error
	hashes := map[int64]string{}
	for i := range s.recent {
		tx := &s.recent[i]
		if tx.BlockHash != "" {
			continue
		}
		if hashes[tx.BlockHeight] == "" {
			if hashes[tx.BlockHeight], err = src.BlockHash(ctx, tx.BlockHeight); err != nil {
				return s, err
			}
		}
		tx.BlockHash = hashes[tx.BlockHeight]
	}
	return s, nil
}

// counting is a Source that counts the requests a follow makes.
type counting struct {
	chain.Source
	calls atomic.Int64
}

func (c *counting) AddressStats(ctx context.Context, a string) (chain.AddressStats, error) {
	c.calls.Add(1)
	return c.Source.AddressStats(ctx, a)
}

func (c *counting) MempoolTxs(ctx context.Context, a string) ([]chain.Tx, error) {
	c.calls.Add(1)
	return c.Source.MempoolTxs(ctx, a)
}

func (c *counting) ChainTxs(ctx context.Context, a, last string) ([]chain.Tx, error) {
	c.calls.Add(1)
	return c.Source.ChainTxs(ctx, a, last)
}

func (c *counting) Tx(ctx context.Context, txid string) (chain.Tx, error) {
	c.calls.Add(1)
	return c.Source.Tx(ctx, txid)
}

func (c *counting) BlockHash(ctx context.Context, height int64) (string, error) {
	c.calls.Add(1)
	return c.Source.BlockHash(ctx, height)
}
