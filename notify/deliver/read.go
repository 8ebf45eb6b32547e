package deliver

import (
	"context"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/send"
)

// reader reads the queued accounts' outboxes, one at a time, until ctx
// ends.
func (d *Deliverer) reader(ctx context.Context) {
	for {
		account, ok := d.nextRead()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-d.readReady:
			}
			continue
		}
		d.read(ctx, account)
		d.mu.Lock()
		delete(d.reading, account)
		if d.again[account] {
			delete(d.again, account)
			d.enqueueLocked(account)
		}
		d.mu.Unlock()
	}
}

// nextRead takes the next account queued, marking it being read.
func (d *Deliverer) nextRead() (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.queue) == 0 {
		return "", false
	}
	account := d.queue[0]
	d.queue = d.queue[1:]
	delete(d.queued, account)
	d.reading[account] = true
	if len(d.queue) > 0 {
		// Another reader may take the rest.
		poke(d.readReady)
	}
	return account, true
}

// read asks what account has due and starts a try of each entry it may
// send now. The answer gives at most one entry per channel and card (the
// first not delivered), so one card's entries on one channel go one at a
// time, in order: the next is due only once this one's ack applies, which
// wakes the account. Left for later, and read again soon: an entry in
// flight, one whose ack this node saw applied (the answer was read before
// it applied), and one whose channel has PerChannel tries in flight.
// Left for later too, and read again when they have room: the entries
// the account's and their channels' budgets have no room for now
// (budgets.go).
func (d *Deliverer) read(ctx context.Context, account string) {
	if !d.store.Serves(account) {
		d.mu.Lock()
		d.setWaitingLocked(account, 0)
		d.mu.Unlock()
		return
	}
	now := d.opts.Now()
	due, err := d.store.Due(ctx, account, now)
	d.mu.Lock()
	d.stats.Reads++
	if err != nil {
		d.stats.ReadErrors++
		d.mu.Unlock()
		if ctx.Err() == nil && d.store.Serves(account) {
			d.opts.Logger.Warn("could not read an account's outbox; trying again", "account", account, "err", err)
			d.at(account, now.Add(d.opts.RetryEvery))
		}
		return
	}
	var start []actors.DueDelivery
	held := false
	room := newBudgets(d.sender, account)
	for _, e := range due.Due {
		k, ck := entryKey{account, e.EntryID}, channelKey{account, e.Channel.ID}
		if _, busy := d.inFlight[k]; busy {
			held = true
			continue
		}
		if m, seen := d.acked[k]; seen && e.Attempt <= m.attempt {
			held = true
			continue
		}
		if d.perChannel[ck] >= d.opts.PerChannel {
			held = true
			continue
		}
		if !room.take(e.Channel) {
			continue
		}
		d.inFlight[k] = e.Channel.ID
		d.perChannel[ck]++
		start = append(start, e)
	}
	d.stats.InFlight = len(d.inFlight)
	d.setWaitingLocked(account, room.waiting)
	d.mu.Unlock()
	d.opts.Metrics.inFlight(len(start))

	if room.waiting > 0 {
		// One timer for the account, when the first budget that held
		// an entry back has room again.
		d.at(account, d.opts.Now().Add(max(room.wait, budgetWaitMin)))
	}

	if next := time.Unix(0, due.NextAt); due.NextAt != 0 && next.After(now) {
		d.at(account, next)
	} else if due.NextAt != 0 {
		// More were due than one answer holds: what it held is in flight
		// now, and each ack wakes the account; this is in case none does.
		held = true
	}
	if held {
		d.at(account, now.Add(d.opts.RetryEvery))
	}
	for _, e := range start {
		select {
		case d.workers <- struct{}{}:
		case <-ctx.Done():
			d.release(account, []actors.DueDelivery{e})
			continue
		}
		d.tasks.Add(1)
		go d.try(ctx, account, e)
	}
}

// try makes one try of e and hands its result to the account's batch.
func (d *Deliverer) try(ctx context.Context, account string, e actors.DueDelivery) {
	defer d.tasks.Done()
	start := d.opts.Now()
	out := d.sender.Send(ctx, account, e)
	<-d.workers
	r := resultOf(e, start, out)
	d.count(e, r, start)
	switch r.Class {
	case send.ClassRateLimited:
		d.holdBack(account, e, start, max(out.RetryAfter, holdBackMin))
		return
	case send.ClassKeyMismatch, ClassNoRelay:
		d.warnMisconfigured(r, start)
		d.holdBack(account, e, start, misconfiguredWait)
		return
	}
	d.add(ctx, account, e, r)
}

// holdBack puts off a try this node refused of its own making: its
// budgets (the account or the channel sent too much lately), or its
// setup (another notify key than the channel's, no SMTP relay). The
// receiver was never asked, so it is no try of the entry's, and another
// node, or this one set up again, may deliver it. Nothing is recorded (no
// attempt spent, no back-off, no line in the delivery log, nothing said of
// the channel's health: a misconfigured leader must not wear out every
// owner's channels); the entry leaves the in-flight set and the account
// is read again after wait.
func (d *Deliverer) holdBack(account string, e actors.DueDelivery, start time.Time, wait time.Duration) {
	d.release(account, []actors.DueDelivery{e})
	d.mu.Lock()
	d.stats.HeldBack++
	d.mu.Unlock()
	d.at(account, start.Add(wait))
}

const (
	// holdBackMin is the shortest wait after a refusal of the budgets.
	holdBackMin = 100 * time.Millisecond
	// misconfiguredWait is the wait after a refusal of this node's
	// setup, which only its operator changes (or a new leader).
	misconfiguredWait = time.Minute
)

// warnMisconfigured tells the operator, at most once a minute a class,
// that this node holds notifications back for its own setup.
func (d *Deliverer) warnMisconfigured(r actors.DeliveryResult, at time.Time) {
	d.mu.Lock()
	last, warned := d.warned[r.Class]
	if !warned || at.Sub(last) >= misconfiguredWait {
		d.warned[r.Class] = at
	}
	d.mu.Unlock()
	if warned && at.Sub(last) < misconfiguredWait {
		return
	}
	d.opts.Logger.Warn("notifications held back: this node cannot send them as set up; they wait, unrecorded, for it to be fixed or for another node to lead",
		"class", r.Class, "detail", r.Detail)
}

// release forgets that entries of account are in flight.
func (d *Deliverer) release(account string, entries []actors.DueDelivery) {
	d.mu.Lock()
	for _, e := range entries {
		d.releaseLocked(account, e.EntryID)
	}
	d.stats.InFlight = len(d.inFlight)
	d.mu.Unlock()
	d.opts.Metrics.inFlight(-len(entries))
}

func (d *Deliverer) releaseLocked(account, entry string) {
	k := entryKey{account, entry}
	channel, ok := d.inFlight[k]
	if !ok {
		return
	}
	delete(d.inFlight, k)
	ck := channelKey{account, channel}
	if d.perChannel[ck]--; d.perChannel[ck] <= 0 {
		delete(d.perChannel, ck)
	}
}
