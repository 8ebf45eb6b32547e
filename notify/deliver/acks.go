package deliver

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/send"
)

// batch is an account's results waiting to be proposed together: a block
// that brings an account dozens of events brings dozens of results within
// milliseconds, and one RecordDeliveries for them all is one log entry.
type batch struct {
	gen     uint64
	results []actors.DeliveryResult
}

// add puts r in its account's batch, which is proposed once it holds
// BatchMax results or FlushAfter after its first.
func (d *Deliverer) add(ctx context.Context, account string, e actors.DueDelivery, r actors.DeliveryResult) {
	d.mu.Lock()
	b := d.batches[account]
	if b == nil {
		d.batchGen++
		b = &batch{gen: d.batchGen}
		d.batches[account] = b
	}
	b.results = append(b.results, r)
	if len(b.results) >= d.opts.BatchMax {
		delete(d.batches, account)
		d.mu.Unlock()
		d.flush(ctx, account, b.results)
		return
	}
	first := len(b.results) == 1
	d.mu.Unlock()
	if first {
		d.tasks.Add(1)
		go func() {
			defer d.tasks.Done()
			select {
			case <-d.opts.After(d.opts.FlushAfter):
			case <-ctx.Done():
			}
			d.flushGen(ctx, account, b.gen)
		}()
	}
}

// flushGen proposes account's batch if it is still the one numbered gen
// (a full one went already).
func (d *Deliverer) flushGen(ctx context.Context, account string, gen uint64) {
	d.mu.Lock()
	b := d.batches[account]
	if b == nil || b.gen != gen {
		d.mu.Unlock()
		return
	}
	delete(d.batches, account)
	d.mu.Unlock()
	d.flush(ctx, account, b.results)
}

// flush proposes results, once: an ack that fails is dropped, never sent
// again, so that no try is recorded twice. Its entries are pending still;
// this node tries them again if it still leads (the next attempt names
// the same number, and the log keeps the first that applies), and a new
// leader does otherwise: at least once, with the same event IDs. Either
// way the entries leave the in-flight set and the account is read again:
// at once after a success (the next entries of those cards are due now),
// or when its budgets have room if it is waiting for them (it could start
// nothing more before); after RetryEvery after a failure.
func (d *Deliverer) flush(ctx context.Context, account string, results []actors.DeliveryResult) {
	err := d.store.Record(ctx, account, results)
	now := d.opts.Now()
	d.mu.Lock()
	for _, r := range results {
		d.releaseLocked(account, r.EntryID)
		if err == nil {
			d.acked[entryKey{account, r.EntryID}] = ackMark{attempt: r.Attempt, at: now}
		}
	}
	d.stats.InFlight = len(d.inFlight)
	waits := d.waitsForBudgetLocked(account)
	d.stats.AckBatches++
	if err == nil {
		d.stats.AcksRecorded += int64(len(results))
	} else {
		d.stats.AckErrors++
		d.stats.LastError, d.stats.LastErrorAt = "recording tries: "+err.Error(), now.UTC().Format(time.RFC3339)
	}
	d.mu.Unlock()
	d.opts.Metrics.inFlight(-len(results))
	d.opts.Metrics.acked(len(results), err == nil)
	if err == nil {
		if !waits {
			d.Wake(account)
		}
		return
	}
	if ctx.Err() == nil {
		d.opts.Logger.Warn("could not record notification tries; they will be tried again", "account", account, "tries", len(results), "err", err)
		if d.store.Serves(account) {
			d.at(account, now.Add(d.opts.RetryEvery))
		}
	}
}

// resultOf is the result to record of the try of e that started at start
// (the leader's clock, which decides its schedule) and gave out: every
// field within what RecordDeliveries accepts, so that one odd outcome
// cannot get a whole batch refused.
func resultOf(e actors.DueDelivery, start time.Time, out send.Outcome) actors.DeliveryResult {
	r := actors.DeliveryResult{EntryID: e.EntryID, Attempt: e.Attempt, At: start.UnixNano(), Delivered: out.Delivered,
		Status:       min(max(out.Status, 0), statusMax),
		LatencyMs:    min(max(out.Latency.Milliseconds(), 0), latencyMsMax),
		RetryAfterMs: min(max(out.RetryAfter.Milliseconds(), 0), retryAfterMsMax),
		Detail:       oneLine(out.Detail, actors.DeliveryDetailBytesMax)}
	if !out.Delivered {
		r.Class = classOf(out.Class)
	}
	return r
}

// Bounds RecordDeliveries enforces (actors/notify_deliveries.go).
const (
	statusMax       = 999
	latencyMsMax    = int64(time.Hour / time.Millisecond)
	retryAfterMsMax = int64(24 * time.Hour / time.Millisecond)
	classBytesMax   = 32
)

// ClassOther stands for a failure whose class is empty or not a word
// (never from this repository's senders).
const ClassOther = "other"

// classOf is class when it is a short word of letters, digits, - and _.
func classOf(class string) string {
	if class == "" || len(class) > classBytesMax {
		return ClassOther
	}
	for i := 0; i < len(class); i++ {
		c := class[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return ClassOther
		}
	}
	return class
}

// oneLine is s with every character that is not printable (a newline, a
// control, an invisible format character) made a space, cut to at most
// maxBytes bytes on a character's boundary.
func oneLine(s string, maxBytes int) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			r = ' '
		}
		if b.Len()+utf8.RuneLen(r) > maxBytes {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
