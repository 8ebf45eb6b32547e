package btcdsource

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
)

// The errors of the JSON-RPC transport. None repeats btcd's own message
// (which may name the address asked about) or the RPC password (no URL
// dialled carries it; the basic authorization does).

// errRefusedCredentials: btcd answered 401 or 403.
var errRefusedCredentials = errors.New("btcd refused the RPC user and password")

// errConnectionLost marks a request whose connection ended before btcd
// answered it: btcd dropped it, it went silent, or the source closed.
var errConnectionLost = errors.New("the connection to btcd ended before its answer")

// errClosed is why the connections of a closed Source ended.
var errClosed = errors.New("the btcd source was closed")

// timeoutError: btcd did not answer within the client's timeout. It does
// not unwrap to context.DeadlineExceeded on purpose: the breaker
// (chain.Guard) takes a DeadlineExceeded for the caller's own deadline,
// which says nothing of the source, while this says btcd is down or
// stalled.
type timeoutError struct{ timeout time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("btcd gave no answer within %s", e.timeout) }

// Timeout reports true, as a net.Error's does.
func (e timeoutError) Timeout() bool { return true }

// lostError is errConnectionLost for one method, with why the
// connection ended.
type lostError struct {
	method string
	cause  error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("the connection to btcd ended before it answered %s: %v", e.method, e.cause)
}

func (e *lostError) Is(target error) bool { return target == errConnectionLost }

func (e *lostError) Unwrap() error { return e.cause }

// rpcError is btcd's JSON-RPC error for one call. Its message is never
// shown, since btcd's messages may repeat the address asked about; it
// only tells apart errors that share a code.
type rpcError struct {
	method  string
	code    btcjson.RPCErrorCode
	message string
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("btcd answered %s with RPC error %d", e.method, e.code)
}

// rpcErrorOf is btcd's RPC error inside err, if btcd answered with one.
func rpcErrorOf(err error) (*rpcError, bool) {
	var re *rpcError
	return re, errors.As(err, &re)
}

// malformed is an answer that arrived whole but does not make sense:
// about what was asked, so the breaker does not take btcd for down (its
// Status is 200, as for an HTTP answer that came).
func malformed(op, format string, args ...any) error {
	return &chain.UpstreamError{Op: op, Status: http.StatusOK, Err: fmt.Errorf("malformed answer from btcd: "+format, args...)}
}

// methodOf is the JSON-RPC method of a btcjson command.
func methodOf(cmd any) string {
	method, err := btcjson.CmdMethod(cmd)
	if err != nil {
		return "?"
	}
	return method
}
