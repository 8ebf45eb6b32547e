package electrum

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// Every failure of the server reaches the caller as a *chain.UpstreamError
// whose cause says which kind it is, as the breaker (chain/breaker.go)
// tells them apart:
//
//   - the server is down: no connection, the connection lost, no answer
//     within the timeout (timeoutError, which does not unwrap to
//     context.DeadlineExceeded: that would read as the caller's own
//     deadline, which says nothing of the server);
//   - the server answered, but not usably (unusable, rpcError): a
//     malformed line, an error answer, a history over the bound. These
//     wrap chain.ErrMalformed, so they count against the address asked
//     about alone; but an error answer saying the server is busy or
//     limits this client (rpcError.saysBusy) is the server down;
//   - the caller gave up: its context's error, counted neither way.
//
// No message names the address or script hash asked about, nor repeats
// what the server said.

// rpcError is the server's JSON-RPC error answer to one request.
type rpcError struct {
	code    int64
	message string // matched (notFoundMessage), never shown
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("electrum: the server answered with error %d", e.code)
}

// Is makes an error answer a chain.ErrMalformed, about what was asked:
// the server is up and answering. But not the codes by which ElectrumX
// (aiorpcx's) says the server as a whole cannot serve now, as an HTTP
// 503 or 429 would: unavailable (-100), excessive resource usage
// (-101), busy (-102).
func (e *rpcError) Is(target error) bool {
	return target == chain.ErrMalformed && !e.saysBusy()
}

func (e *rpcError) saysBusy() bool { return e.code <= -100 && e.code >= -102 }

// rpcErrorOf is the server's error answer inside err, if it is one.
func rpcErrorOf(err error) (*rpcError, bool) {
	var re *rpcError
	return re, errors.As(err, &re)
}

// notFoundMessages are what servers say of a transaction they do not
// know: bitcoind's "No such mempool or blockchain transaction" (passed
// on by electrs, ElectrumX and Fulcrum), btcd's "No information
// available about transaction", and the plain "not found" of others.
var notFoundMessages = []string{"no such mempool or blockchain transaction", "no information available about transaction", "not found"}

// saysNotFound reports whether an error answer says the transaction is
// unknown.
func (e *rpcError) saysNotFound() bool {
	if e.code <= -32600 && e.code >= -32700 { // JSON-RPC's own: method not found, invalid params...
		return false
	}
	msg := strings.ToLower(e.message)
	for _, m := range notFoundMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// unusable is an answer that arrived and cannot be used: it does not
// decode, does not make sense, or is over a bound.
type unusable struct{ what string }

func (e unusable) Error() string { return "electrum: " + e.what }

// Is makes it a chain.ErrMalformed.
func (e unusable) Is(target error) bool { return target == chain.ErrMalformed }

func unusablef(format string, args ...any) error {
	return unusable{what: fmt.Sprintf(format, args...)}
}

// timeoutError: the server gave no answer within the per-request
// timeout.
type timeoutError struct{ timeout time.Duration }

func (e timeoutError) Error() string {
	return fmt.Sprintf("electrum: no answer within %s", e.timeout)
}

// Timeout reports true, as a net.Error's does.
func (e timeoutError) Timeout() bool { return true }

// connLostError: the connection broke before the answer came.
type connLostError struct{ cause error }

func (e connLostError) Error() string {
	return fmt.Sprintf("electrum: the connection to the server was lost: %v", e.cause)
}

func (e connLostError) Unwrap() error { return e.cause }

// errClosed: the source was closed.
var errClosed = errors.New("electrum: the source is closed")

// upstream wraps err as the *chain.UpstreamError of op, unless it is one
// already or a chain error the caller tells apart (ErrNotFound,
// ErrInvalidArgument).
func upstream(op string, err error) error {
	var ue *chain.UpstreamError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue), errors.Is(err, chain.ErrNotFound), errors.Is(err, chain.ErrInvalidArgument):
		return err
	}
	return &chain.UpstreamError{Op: op, Err: err}
}
