package btcdsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
)

// The JSON-RPC transport. btcd's own rpcclient is not used for the reads:
// in HTTP POST mode it sends one request at a time per client, has no
// context and no timeout (a stalled btcd would stall every later call),
// retries a refused connection ten times over some twenty seconds, reads
// an answer of any size, and puts the server's body in its errors. The
// requests and their parameters are still btcd's (btcjson), and so are
// the answers' shapes (wire.go).

const (
	// responseBytesMax caps one answer. A search page of 200 large
	// transactions, each in hex and decoded, stays well below it.
	responseBytesMax = 32 << 20
	// errorBodyBytesMax is how much of a non-200 answer is read (and
	// thrown away) before the connection is closed.
	errorBodyBytesMax = 4 << 10
)

// rpcClient posts JSON-RPC requests to one btcd.
type rpcClient struct {
	// endpoint is https://HOST:PORT/ without the user and password, so
	// that no error of net/http, which names the URL, can show them.
	endpoint string
	user     string
	password string
	http     *http.Client
	timeout  time.Duration
	slots    chan struct{} // one token per request in flight
	lastID   atomic.Uint64
}

// rpcCall is one request: a btcjson command (btcjson.New…Cmd) and where
// its result goes.
type rpcCall struct {
	cmd    any
	result any
	// err is the call's own RPC error when the request as a whole was
	// answered (batches only; a single call returns it).
	err *btcjson.RPCError
}

// rpcResponse is a JSON-RPC answer, version 1.0 or 2.0.
type rpcResponse struct {
	Result json.RawMessage   `json:"result"`
	Error  *btcjson.RPCError `json:"error"`
	ID     *json.RawMessage  `json:"id"`
}

// call sends one command and decodes its result into result. An RPC
// error comes back as an *rpcError inside the *chain.UpstreamError, for
// the caller to tell "not found" apart (rpcCode).
func (c *rpcClient) call(ctx context.Context, op string, cmd, result any) error {
	id := c.lastID.Add(1)
	body, err := btcjson.MarshalCmd(btcjson.RpcVersion1, id, cmd)
	if err != nil {
		return fmt.Errorf("%w: %v", chain.ErrInvalidArgument, err)
	}
	var resp rpcResponse
	if err := c.post(ctx, op, body, &resp); err != nil {
		return err
	}
	if resp.Error != nil {
		return &chain.UpstreamError{Op: op, Status: http.StatusOK, Err: &rpcError{method: methodOf(cmd), code: resp.Error.Code, message: resp.Error.Message}}
	}
	if resp.ID == nil || string(*resp.ID) != strconv.FormatUint(id, 10) {
		return malformed(op, "the answer is to another request")
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return malformed(op, "%s: %v", methodOf(cmd), err)
	}
	return nil
}

// batch sends calls in one request (a JSON-RPC 2.0 batch, which btcd
// answers in one response) and decodes each result, or sets its err.
func (c *rpcClient) batch(ctx context.Context, op string, calls []rpcCall) error {
	first := c.lastID.Add(uint64(len(calls))) - uint64(len(calls)) + 1
	var body bytes.Buffer
	body.WriteByte('[')
	for i, call := range calls {
		one, err := btcjson.MarshalCmd(btcjson.RpcVersion2, first+uint64(i), call.cmd)
		if err != nil {
			return fmt.Errorf("%w: %v", chain.ErrInvalidArgument, err)
		}
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(one)
	}
	body.WriteByte(']')
	var resps []rpcResponse
	if err := c.post(ctx, op, body.Bytes(), &resps); err != nil {
		return err
	}
	if len(resps) != len(calls) {
		return malformed(op, "%d answers to a batch of %d", len(resps), len(calls))
	}
	answered := make([]bool, len(calls))
	for _, resp := range resps {
		var id uint64
		if resp.ID == nil || json.Unmarshal(*resp.ID, &id) != nil || id < first || id >= first+uint64(len(calls)) || answered[id-first] {
			return malformed(op, "a batch answer names no request of the batch")
		}
		i := id - first
		answered[i] = true
		if resp.Error != nil {
			calls[i].err = resp.Error
			continue
		}
		if err := json.Unmarshal(resp.Result, calls[i].result); err != nil {
			return malformed(op, "%s: %v", methodOf(calls[i].cmd), err)
		}
	}
	return nil
}

// post makes one HTTP request within the client's timeout and decodes a
// 200 answer's body into out.
func (c *rpcClient) post(ctx context.Context, op string, body []byte, out any) error {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return &chain.UpstreamError{Op: op, Err: ctx.Err()}
	}
	defer func() { <-c.slots }()

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return &chain.UpstreamError{Op: op, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(c.user, c.password)
	resp, err := c.http.Do(req)
	if err != nil {
		return &chain.UpstreamError{Op: op, Err: c.cause(ctx, actx, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyBytesMax))
		ue := &chain.UpstreamError{Op: op, Status: resp.StatusCode}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			ue.Err = errRefusedCredentials
		}
		return ue
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, responseBytesMax+1))
	if err != nil {
		return &chain.UpstreamError{Op: op, Status: resp.StatusCode, Err: c.cause(ctx, actx, err)}
	}
	if len(data) > responseBytesMax {
		return malformed(op, "an answer over %d bytes", responseBytesMax)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return malformed(op, "no JSON-RPC answer: %v", err)
	}
	return nil
}

// cause names why a request got no answer: the caller gave up, the
// request outlived the client's timeout, or the transport failed (with
// the URL, which names no password anyway, left out).
func (c *rpcClient) cause(ctx, actx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case actx.Err() != nil:
		return timeoutError{c.timeout}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errRefusedCredentials: btcd answered 401 or 403.
var errRefusedCredentials = errors.New("btcd refused the RPC user and password")

// timeoutError: btcd did not answer within the client's timeout. It does
// not unwrap to context.DeadlineExceeded on purpose: the breaker
// (chain.Guard) takes a DeadlineExceeded for the caller's own deadline,
// which says nothing of the source, while this says btcd is down or
// stalled.
type timeoutError struct{ timeout time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("btcd gave no answer within %s", e.timeout) }

// Timeout reports true, as a net.Error's does.
func (e timeoutError) Timeout() bool { return true }

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

// malformed is an answer that arrived whole (HTTP 200) but does not make
// sense: about what was asked, so the breaker does not take btcd for
// down (its Status is 200).
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
