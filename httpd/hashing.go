package httpd

import (
	"context"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// Password hashing is the one thing the edge does that takes a core for
// tens of milliseconds (bcrypt at its default cost). Left unbounded, eight
// sign-ins at once took both cores and other owner requests waited up to a
// quarter of a second behind them. So at most half the cores hash at a time
// (at least one), a bounded queue waits for them, and past the queue or the
// wait the request is turned away at once with 503 and Retry-After: the
// rest of the server keeps the other half of the machine. The operator's
// account creations (behind the admin token, so not untrusted load) wait
// for a slot as long as their request may last instead of being turned
// away: a bulk creation queues up but still never runs more hashes at once.
const (
	// hashWaitersPerSlot is how many hashes may wait for each running one.
	hashWaitersPerSlot = 8
	// hashWaitMax bounds how long a request waits for a hashing slot.
	hashWaitMax = 2 * time.Second
	// hashBusyRetrySeconds is the Retry-After of a request turned away.
	hashBusyRetrySeconds = 1
)

// hashSlots bounds the password hashes running and waiting at once.
type hashSlots struct {
	running chan struct{} // a token per hash running
	queued  chan struct{} // a token per hash running or waiting
	waitMax time.Duration
}

// newHashSlots sizes the slots from the number of cores Go may use
// (GOMAXPROCS).
func newHashSlots(procs int) *hashSlots {
	slots := max(1, procs/2)
	return &hashSlots{
		running: make(chan struct{}, slots),
		queued:  make(chan struct{}, slots*(1+hashWaitersPerSlot)),
		waitMax: hashWaitMax,
	}
}

// errHashingBusy turns away a password check or change when the hashing
// queue is full; nothing was checked, so it is not a failed attempt.
var errHashingBusy = &actors.Error{
	Code:       actors.CodeHTTPError,
	Message:    "the server is busy checking passwords; retry after Retry-After seconds",
	RetryAfter: hashBusyRetrySeconds,
}

// run runs hash in a slot, or returns errHashingBusy without running it
// when the queue is full or no slot frees up within waitMax.
func (h *hashSlots) run(hash func()) error {
	select {
	case h.queued <- struct{}{}:
	default:
		return errHashingBusy
	}
	defer func() { <-h.queued }()
	select {
	case h.running <- struct{}{}:
	default:
		wait := time.NewTimer(h.waitMax)
		defer wait.Stop()
		select {
		case h.running <- struct{}{}:
		case <-wait.C:
			return errHashingBusy
		}
	}
	defer func() { <-h.running }()
	hash()
	return nil
}

// runForOperator runs hash in a slot, waiting for one as long as c allows
// however many other hashes wait.
func (h *hashSlots) runForOperator(c context.Context, hash func()) error {
	select {
	case h.running <- struct{}{}:
	case <-c.Done():
		return errHashingBusy
	}
	defer func() { <-h.running }()
	hash()
	return nil
}
