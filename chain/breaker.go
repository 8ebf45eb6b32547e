package chain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"
)

// The circuit breaker around the upstream (sony/gobreaker). Each call still
// retries as before (Client.get), but once calls have failed
// BreakerFailures times in a row the breaker opens: for BreakerOpen every
// call fails at once, so a History of many cards is reported degraded in
// one step instead of after every card's attempts and backoff. Then one
// call is let through; its success closes the breaker, its failure opens
// it again. A transaction the upstream does not know, and a caller that
// gave up (its context ended), say nothing of the upstream's health and
// count neither way.

// Breaker defaults for the zero ClientOptions.
const (
	DefaultBreakerFailures = 5
	DefaultBreakerOpen     = 5 * time.Second
)

// ErrCircuitOpen is the cause of an UpstreamError returned without asking
// the upstream, while the breaker is open.
var ErrCircuitOpen = errors.New("the upstream failed repeatedly; not asking it again for a while")

func newBreaker(failures int, open time.Duration) *gobreaker.CircuitBreaker[struct{}] {
	return gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "esplora",
		MaxRequests: 1,
		Timeout:     open,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(failures) },
		IsExcluded:  notTheUpstreamsFault,
	})
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

// guarded runs call under the breaker, if the client has one.
func (c *Client) guarded(op string, call func() error) error {
	if c.breaker == nil {
		return call()
	}
	_, err := c.breaker.Execute(func() (struct{}, error) { return struct{}{}, call() })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return &UpstreamError{Op: op, Err: fmt.Errorf("%w (circuit %s)", ErrCircuitOpen, c.breaker.State())}
	}
	return err
}
