package chain

import (
	"context"
	"errors"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// The upstream's health, as the client judges it from its calls' failures.
// Two kinds of failure are told apart, because one account must not be
// able to degrade another (issue 28):
//
//   - A failure that says the upstream itself is down: no connection, no
//     answer within the attempt's timeout, a 5xx or a 429. Such failures
//     open the circuit breaker once, since the last call that succeeded,
//     they were seen for BreakerFailures distinct addresses (or
//     transactions), of which one account's count for at most half
//     (rounded up): the rest must be other accounts'.
//     While open, every call fails at once, so a History of many cards is
//     reported degraded in one step instead of after every card's
//     attempts and backoff; then one call is let through, and its success
//     closes the breaker, its failure opens it again. An esplora that
//     fails on one address with too long a history answers 5xx for that
//     address only, and one account holds only its own addresses, so
//     neither can open the breaker for the others.
//   - Any failure of one address (or transaction) counts against that
//     address: after subjectFailuresMax failures in a row it cools down for
//     BreakerOpen, during which its calls fail at once without asking the
//     upstream. Other addresses are asked as before.
//
// A transaction the upstream does not know, and a caller that gave up (its
// context ended), say nothing of the upstream's health and count neither
// way. Every failure the client makes up itself carries a RetryAfter: when
// the breaker or the address's cooldown lets a call through again.

// Breaker defaults for the zero ClientOptions.
const (
	DefaultBreakerFailures = 5
	DefaultBreakerOpen     = 5 * time.Second
)

const (
	// subjectFailuresMax is how many failures in a row cool an address
	// (or transaction) down. Its page's three calls run at once, so one
	// History view of a failing address is enough.
	subjectFailuresMax = 2
	// subjectsCoolingMax bounds the addresses and transactions whose
	// failures are remembered; past it the least recently failed go.
	subjectsCoolingMax = 4096
	// halfOpenRetryAfter is the RetryAfter of a call refused while the
	// one call let through finds out whether the upstream is back.
	halfOpenRetryAfter = time.Second
)

// ErrCircuitOpen is the cause of an UpstreamError returned without asking
// the upstream, while the breaker is open.
var ErrCircuitOpen = errors.New("the upstream failed repeatedly; not asking it again for a while")

// ErrCoolingDown is the cause of an UpstreamError returned without asking
// the upstream, while the address (or transaction) asked for cools down
// after failing repeatedly.
var ErrCoolingDown = errors.New("the upstream failed repeatedly for this address or transaction; not asking it again for a while")

// WithAccount names the account a call is made for, so that the upstream's
// failures for one account's addresses do not open the breaker for others.
func WithAccount(ctx context.Context, account string) context.Context {
	return context.WithValue(ctx, accountKey{}, account)
}

type accountKey struct{}

// AccountOf is the account WithAccount named in ctx; empty when none.
func AccountOf(ctx context.Context) string {
	account, _ := ctx.Value(accountKey{}).(string)
	return account
}

// health is the breaker and the cooldowns of one Client.
type health struct {
	failures int           // distinct subjects seen down that open the breaker
	open     time.Duration // how long the breaker stays open, and a subject cools down

	mu        sync.Mutex
	openUntil time.Time // zero while closed
	probing   bool      // after openUntil: the one call let through is out
	// Since the last success: the subjects whose calls found the upstream
	// down (at most failures), and how many of them each account asked
	// about (at most accountShare). Calls made for no account (no
	// WithAccount) count as one account.
	downSubjects map[string]struct{}
	downAccounts map[string]int
	accountShare int
	subjects     *lru.Cache[string, subjectHealth]
}

// subjectHealth is one address's (or transaction's) run of failures.
type subjectHealth struct {
	failures int
	until    time.Time // cooling down until then
}

func newHealth(failures int, open time.Duration) *health {
	subjects, _ := lru.New[string, subjectHealth](subjectsCoolingMax)
	return &health{failures: failures, open: open, subjects: subjects, accountShare: (failures + 1) / 2,
		downSubjects: map[string]struct{}{}, downAccounts: map[string]int{}}
}

// admit says whether a call for subject may ask the upstream now, and
// whether it is the call that finds out if an open breaker may close.
func (h *health) admit(op, subject string, now time.Time) (probe bool, refusal error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, found := h.subjects.Peek(subject); found && now.Before(s.until) {
		return false, &UpstreamError{Op: op, Err: ErrCoolingDown, RetryAfter: s.until.Sub(now)}
	}
	switch {
	case h.openUntil.IsZero():
		return false, nil
	case now.Before(h.openUntil):
		return false, &UpstreamError{Op: op, Err: ErrCircuitOpen, RetryAfter: h.openUntil.Sub(now)}
	case h.probing:
		return false, &UpstreamError{Op: op, Err: ErrCircuitOpen, RetryAfter: halfOpenRetryAfter}
	}
	h.probing = true
	return true, nil
}

// record takes in the outcome of a call admit let through.
func (h *health) record(ctx context.Context, subject string, probe bool, err error, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if probe {
		h.probing = false
	}
	switch {
	case err == nil:
		h.subjects.Remove(subject)
		h.openUntil = time.Time{}
		clear(h.downSubjects)
		clear(h.downAccounts)
		return
	case notTheUpstreamsFault(err):
		return
	}
	s, _ := h.subjects.Get(subject)
	s.failures++
	if s.failures >= subjectFailuresMax {
		s.until = now.Add(h.open)
	}
	h.subjects.Add(subject, s)
	if !upstreamDown(err) {
		return
	}
	if probe {
		h.openUntil = now.Add(h.open)
		return
	}
	account := AccountOf(ctx)
	if _, counted := h.downSubjects[subject]; !counted && h.downAccounts[account] < h.accountShare {
		h.downSubjects[subject] = struct{}{}
		h.downAccounts[account]++
	}
	if len(h.downSubjects) >= h.failures && len(h.downAccounts) >= 2 {
		h.openUntil = now.Add(h.open)
		clear(h.downSubjects)
		clear(h.downAccounts)
	}
}

// notTheUpstreamsFault: an answer that the thing is not there, or the
// caller's own context ending (an attempt's timeout is the upstream's).
func notTheUpstreamsFault(err error) bool {
	var slow attemptTimeoutError
	switch {
	case errors.Is(err, ErrNotFound):
		return true
	case errors.As(err, &slow):
		return false
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}

// upstreamDown: a failure that says the upstream itself is down rather
// than that it could not serve this one address: no connection or no
// answer in time, a 5xx, or a 429 (the upstream limits this client as a
// whole). A malformed answer or another status is about what was asked.
func upstreamDown(err error) bool {
	var ue *UpstreamError
	if !errors.As(err, &ue) {
		return false
	}
	if ue.Status != 0 {
		return statusSaysDown(ue.Status)
	}
	return !errors.Is(ue.Err, ErrMalformed)
}

// guarded runs call for subject (the address or transaction asked about)
// under the breaker and the subject's cooldown, if the client has them.
func (c *Client) guarded(ctx context.Context, op, subject string, call func() error) error {
	return guardedCall(ctx, c.health, c.now, op, subject, call)
}

// guardedCall runs call for subject under h (nil: as it is), with now as
// the clock: a Client's calls and a guarded Source's (Guard).
func guardedCall(ctx context.Context, h *health, now func() time.Time, op, subject string, call func() error) error {
	if h == nil {
		return call()
	}
	probe, refusal := h.admit(op, subject, now())
	if refusal != nil {
		return refusal
	}
	err := call()
	h.record(ctx, subject, probe, err, now())
	return err
}

// RetryAfter is how long after err, a failure of the upstream, it is worth
// asking again: the upstream's own Retry-After, or the time until the
// breaker or the address's cooldown lets a call through; 0 when nothing
// says.
func RetryAfter(err error) time.Duration {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		return ue.RetryAfter
	}
	return 0
}
