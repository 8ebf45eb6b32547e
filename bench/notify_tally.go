package main

import (
	"context"
	"time"
)

// The tally of bench notify: every webhook the receivers got, the first
// arrival of each (channel, kind, transaction, address) kept, redeliveries
// and refused requests counted.

// The event kinds bench notify waits for.
const (
	kindSeen      = "tx_seen"
	kindConfirmed = "tx_confirmed"
	kindDeep      = "tx_deep"
)

// hookKey names one expected webhook: an event of a kind for a payment
// to an address, on a channel. A transaction paying several addresses of
// one account makes one event per card, so the address is in the key.
type hookKey struct {
	channel *hookChannel
	kind    string
	txid    string
	address string
}

// eventOnChannel is one event as one channel got it.
type eventOnChannel struct {
	channel *hookChannel
	id      string
}

// problemsKept bounds the refused requests whose reasons are kept for the
// report; all are counted.
const problemsKept = 5

// hookTally is what the receivers got, taken in order.
type hookTally struct {
	rc     *receivers
	cursor int // the index of the next arrival to take
	first  map[hookKey]hookArrival
	// tries counts the requests of each (channel, event ID): more than
	// one is a redelivery, which at-least-once allows.
	tries       map[eventOnChannel]int
	byKind      map[string]int
	redelivered int
	refused     int
	problems    []string
	// wrongBlock counts tx_confirmed events that named another block
	// than the one their wait expected (there are no reorgs here).
	wrongBlock int
}

func newHookTally(rc *receivers) *hookTally {
	return &hookTally{rc: rc, first: map[hookKey]hookArrival{}, tries: map[eventOnChannel]int{}, byKind: map[string]int{}}
}

// take counts one arrival and returns its key (zero when refused).
func (t *hookTally) take(a hookArrival) hookKey {
	if a.problem != "" {
		t.refused++
		if len(t.problems) < problemsKept {
			t.problems = append(t.problems, a.problem)
		}
		return hookKey{}
	}
	k := hookKey{channel: a.channel, kind: a.event.Type, txid: a.event.TxID, address: a.event.Address}
	id := eventOnChannel{a.channel, a.event.ID}
	t.tries[id]++
	if t.tries[id] > 1 {
		t.redelivered++
		return k
	}
	t.byKind[a.event.Type]++
	if _, ok := t.first[k]; !ok {
		t.first[k] = a
	}
	return k
}

// wait takes arrivals until every key of want has arrived or limit
// passes, and returns the keys still missing. want is emptied of those
// that arrived.
func (t *hookTally) wait(ctx context.Context, want map[hookKey]bool, limit time.Duration) (int, error) {
	for k := range want {
		if _, ok := t.first[k]; ok {
			delete(want, k)
		}
	}
	if len(want) == 0 {
		return 0, nil
	}
	next, _, err := t.rc.waitArrivals(ctx, t.cursor, limit, func(a hookArrival) bool {
		delete(want, t.take(a))
		return len(want) == 0
	})
	t.cursor = next
	return len(want), err
}

// arrived is the first arrival of k; ok is false when it never came.
func (t *hookTally) arrived(k hookKey) (hookArrival, bool) {
	a, ok := t.first[k]
	return a, ok
}

// drain takes every arrival so far.
func (t *hookTally) drain() {
	got, end := t.rc.next(t.cursor)
	for _, a := range got {
		t.take(a)
	}
	t.cursor = end
}
