// Package deliver is the leader's deliverer: it reads what the outbox in
// the replicated state says is due (actors.DueDeliveriesQuery), makes each
// try through the senders of package send, and proposes what each try gave
// through the log (actors.RecordDeliveries), for the accounts this node
// leads. It keeps no state that matters beyond this node's lifetime: the
// outbox, the attempts and the schedule are the state's, so a new leader
// takes over with the same event IDs and at least once. DESIGN.md says why
// it is built this way.
package deliver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/send"
)

// Store is what the deliverer needs of the cluster on its node: the
// accounts it leads, their due deliveries and a way to record tries.
type Store interface {
	// Leadership names the raft groups this node leads and serves, one
	// bit each (an unsharded node has bit 0 alone); 0 when it leads
	// none. A bit that appears is accounts gained: each is read once.
	// gained counts the times this node began to serve a group; it
	// grows too when a group is lost and led again between two asks
	// (the bits alike), when another leader may have changed its
	// accounts meanwhile: they are read again.
	Leadership() (groups, gained uint64)
	// Accounts lists this node's accounts, led or not.
	Accounts() []string
	// Serves reports whether this node leads account now.
	Serves(account string) bool
	// Due reads the account's due deliveries at now
	// (actors.DueDeliveriesQuery) as the system; an account this node
	// does not lead is an error.
	Due(ctx context.Context, account string, now time.Time) (actors.DueDeliveries, error)
	// Record proposes the account's tries (actors.RecordDeliveries) and
	// returns once they are applied. An error says they may not be: a
	// leader deposed meanwhile, whose successor tries again.
	Record(ctx context.Context, account string, results []actors.DeliveryResult) error
}

// Sender makes one try of one due delivery (Channels is the real one).
type Sender interface {
	Send(ctx context.Context, account string, d actors.DueDelivery) send.Outcome
	// Room says, spending nothing, how many tries the budgets of account
	// and of its channel ch allow now, and when each has room for more.
	Room(account string, ch actors.NotifyChannelTarget) send.Room
}

// Options tune a Deliverer; the zero value takes every default.
type Options struct {
	// Workers is how many tries are made at once (DefaultWorkers).
	Workers int
	// PerChannel is how many tries one channel has in flight at most
	// (DefaultPerChannel): a receiver that takes seconds to answer holds
	// that many workers, never all of them.
	PerChannel int
	// FlushAfter is how long a try's result waits for others of its
	// account to share its RecordDeliveries (DefaultFlushAfter); BatchMax
	// results go at once (DefaultBatchMax).
	FlushAfter time.Duration
	BatchMax   int
	// Readers is how many accounts' outboxes are read at once
	// (DefaultReaders).
	Readers int
	// RereadEvery is how often every account this node leads is read
	// anyway, in case a wake was missed (DefaultRereadEvery).
	RereadEvery time.Duration
	// LeadershipEvery is how often Store.Leadership is asked
	// (DefaultLeadershipEvery).
	LeadershipEvery time.Duration
	// RetryEvery is how soon an account is read again after a read or an
	// ack failed, or while it has due entries it could not send yet
	// (DefaultRetryEvery).
	RetryEvery time.Duration
	// Now is the leader's clock: of every try's time (the result's At)
	// and of the schedule. time.Now when nil.
	Now func() time.Time
	// After is the timer of Now's clock; time.After when nil.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
	// Metrics, when set, counts tries and acks (NewMetrics).
	Metrics *Metrics
}

// Defaults of Options.
const (
	DefaultWorkers         = 64
	DefaultPerChannel      = 8
	DefaultFlushAfter      = 10 * time.Millisecond
	DefaultBatchMax        = 64
	DefaultReaders         = 4
	DefaultRereadEvery     = time.Minute
	DefaultLeadershipEvery = 500 * time.Millisecond
	DefaultRetryEvery      = time.Second
)

// ackedKeep is how long the attempt of an applied ack is remembered: a
// read of the outbox that began before the ack applied may still name
// that attempt, and must not send it again. A read takes far less.
const ackedKeep = time.Minute

// Deliverer delivers the due outbox entries of the accounts this node
// leads. Run runs it; Wake tells it an account has news.
type Deliverer struct {
	store  Store
	sender Sender
	opts   Options

	// signal wakes Run's loop: a Wake, a timer added.
	signal chan struct{}
	// readReady wakes a reader: an account queued to read.
	readReady chan struct{}
	// workers is the semaphore of tries in flight.
	workers chan struct{}

	mu sync.Mutex
	// wakes are the accounts to read at the loop's next turn.
	wakes map[string]bool
	// timers are the times accounts are to be read again.
	timers schedule
	// queue holds the accounts to read, in order, each once (queued);
	// reading are those being read, and again those woken meanwhile.
	queue   []string
	queued  map[string]bool
	reading map[string]bool
	again   map[string]bool
	// inFlight are the entries being tried or whose ack is not applied
	// yet, with their channel; perChannel counts them by channel.
	inFlight   map[entryKey]string
	perChannel map[channelKey]int
	// acked is the attempt of each entry whose ack this node saw applied.
	acked map[entryKey]ackMark
	// waiting counts, by account, the due entries its last read left
	// for its budgets (budgets.go); the account is read again when they
	// have room, not when an ack applies.
	waiting map[string]int
	// batches are the results of each account waiting for their flush.
	batches  map[string]*batch
	batchGen uint64
	stats    Stats
	// warned is when each class of this node's own setup was last
	// logged (warnMisconfigured).
	warned map[string]time.Time

	// tasks are the tries and flushes under way, which Run waits for.
	tasks sync.WaitGroup
}

type entryKey struct{ account, entry string }
type channelKey struct{ account, channel string }

type ackMark struct {
	attempt int
	at      time.Time
}

// New returns a deliverer for store's accounts through sender.
func New(store Store, sender Sender, opts Options) *Deliverer {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.PerChannel <= 0 {
		opts.PerChannel = DefaultPerChannel
	}
	if opts.FlushAfter <= 0 {
		opts.FlushAfter = DefaultFlushAfter
	}
	if opts.BatchMax <= 0 || opts.BatchMax > actors.DeliveryResultsMax {
		opts.BatchMax = DefaultBatchMax
	}
	if opts.Readers <= 0 {
		opts.Readers = DefaultReaders
	}
	if opts.RereadEvery <= 0 {
		opts.RereadEvery = DefaultRereadEvery
	}
	if opts.LeadershipEvery <= 0 {
		opts.LeadershipEvery = DefaultLeadershipEvery
	}
	if opts.RetryEvery <= 0 {
		opts.RetryEvery = DefaultRetryEvery
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Deliverer{store: store, sender: sender, opts: opts,
		signal: make(chan struct{}, 1), readReady: make(chan struct{}, 1), workers: make(chan struct{}, opts.Workers),
		wakes: map[string]bool{}, queued: map[string]bool{}, reading: map[string]bool{}, again: map[string]bool{},
		inFlight: map[entryKey]string{}, perChannel: map[channelKey]int{}, acked: map[entryKey]ackMark{},
		waiting: map[string]int{}, batches: map[string]*batch{}, stats: Stats{Failed: map[string]int64{}}, warned: map[string]time.Time{}}
}

// Wake tells the deliverer that account has entries that may be due now:
// an observation enqueued some, the owner asked to send one again or
// enabled a channel. It never blocks.
func (d *Deliverer) Wake(account string) {
	d.mu.Lock()
	d.wakes[account] = true
	d.mu.Unlock()
	poke(d.signal)
}

// poke makes c ready without blocking.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends. Every turn it asks which groups this node
// leads (reading every account once when it gains some, and every
// RereadEvery), then queues for reading the accounts woken and those
// whose next entry's time has come, and sleeps until the next of these.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range d.opts.Readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.reader(ctx)
		}()
	}
	defer d.tasks.Wait()
	defer wg.Wait()
	var led, gainedBefore uint64
	var reread time.Time
	for ctx.Err() == nil {
		now := d.opts.Now()
		lead, gained := d.store.Leadership()
		if lead&^led != 0 || (lead != 0 && gained != gainedBefore) || (lead != 0 && !now.Before(reread)) {
			d.wakeAll()
			reread = now.Add(d.opts.RereadEvery)
			d.forgetAcked(now)
		}
		led, gainedBefore = lead, gained
		wait := d.opts.LeadershipEvery
		if lead != 0 {
			if next, any := d.takeWoken(now); any && next.Sub(now) < wait {
				wait = next.Sub(now)
			}
		} else {
			d.dropWakes()
		}
		select {
		case <-ctx.Done():
		case <-d.signal:
		case <-d.opts.After(max(wait, 0)):
		}
	}
}

// wakeAll wakes every account of the node: those it does not lead are
// dropped when read.
func (d *Deliverer) wakeAll() {
	ids := d.store.Accounts()
	d.mu.Lock()
	for _, id := range ids {
		d.wakes[id] = true
	}
	d.mu.Unlock()
}

// dropWakes forgets the wakes and timers of a node that leads nothing:
// it reads everything again when it leads again.
func (d *Deliverer) dropWakes() {
	d.mu.Lock()
	clear(d.wakes)
	d.timers = schedule{}
	clear(d.waiting)
	d.stats.WaitingForBudget = 0
	d.opts.Metrics.waitingForBudget(0)
	d.mu.Unlock()
}

// takeWoken queues the accounts woken and those whose time has come,
// and returns the next timer's time, if any.
func (d *Deliverer) takeWoken(now time.Time) (next time.Time, any bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.timers.due(now) {
		d.wakes[a] = true
	}
	for a := range d.wakes {
		d.enqueueLocked(a)
	}
	clear(d.wakes)
	return d.timers.next()
}

// enqueueLocked queues account for reading, once; one being read is read
// again when that read ends.
func (d *Deliverer) enqueueLocked(account string) {
	switch {
	case d.reading[account]:
		d.again[account] = true
	case !d.queued[account]:
		d.queued[account] = true
		d.queue = append(d.queue, account)
		poke(d.readReady)
	}
}

// at schedules account to be read at t (the earlier of t and any time it
// is scheduled at already).
func (d *Deliverer) at(account string, t time.Time) {
	d.mu.Lock()
	changed := d.timers.add(account, t)
	d.mu.Unlock()
	if changed {
		poke(d.signal)
	}
}

// forgetAcked drops the acks older than ackedKeep.
func (d *Deliverer) forgetAcked(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, m := range d.acked {
		if now.Sub(m.at) > ackedKeep {
			delete(d.acked, k)
		}
	}
}
