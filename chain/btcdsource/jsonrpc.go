package btcdsource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
)

// JSON-RPC over a websocket connection: btcd's own commands (btcjson),
// encoded here, answered by ID, their results decoded by the caller's
// goroutine rather than the connection's reader, so that one large
// answer holds up no other.

// rpcCall is one request of a batch: a btcjson command
// (btcjson.New…Cmd) and where its result goes.
type rpcCall struct {
	cmd    any
	result any
	// err is the call's own RPC error when the batch as a whole was
	// answered.
	err *btcjson.RPCError
}

// call sends one command and decodes its result into result (nil: a
// result is not wanted). An RPC error comes back as an *rpcError inside
// the *chain.UpstreamError, for the caller to tell "not found" apart
// (rpcErrorOf).
func (c *wsConn) call(ctx context.Context, op string, cmd, result any) error {
	id := c.lastID.Add(1)
	body, err := btcjson.MarshalCmd(btcjson.RpcVersion1, id, cmd)
	if err != nil {
		return fmt.Errorf("%w: %v", chain.ErrInvalidArgument, err)
	}
	method := methodOf(cmd)
	a, err := c.exchange(ctx, op, method, []uint64{id}, body)
	if err != nil {
		return err
	}
	if a.over {
		return malformed(op, "%s: an answer over %d bytes", method, c.max)
	}
	var resp rpcResponse
	if err := json.Unmarshal(a.data, &resp); err != nil {
		return malformed(op, "no JSON-RPC answer: %v", err)
	}
	if resp.ID == nil || string(*resp.ID) != strconv.FormatUint(id, 10) {
		return malformed(op, "the answer is to another request")
	}
	if resp.Error != nil {
		return &chain.UpstreamError{Op: op, Status: http.StatusOK, Err: &rpcError{method: method, code: resp.Error.Code, message: resp.Error.Message}}
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return malformed(op, "%s: %v", method, err)
	}
	return nil
}

// batch sends calls in one message (a JSON-RPC 2.0 batch, which btcd
// answers in one) and decodes each result, or sets its err.
func (c *wsConn) batch(ctx context.Context, op string, calls []rpcCall) error {
	if len(calls) == 0 {
		return nil
	}
	first := c.lastID.Add(uint64(len(calls))) - uint64(len(calls)) + 1
	ids := make([]uint64, len(calls))
	var body bytes.Buffer
	body.WriteByte('[')
	for i, call := range calls {
		ids[i] = first + uint64(i)
		one, err := btcjson.MarshalCmd(btcjson.RpcVersion2, ids[i], call.cmd)
		if err != nil {
			return fmt.Errorf("%w: %v", chain.ErrInvalidArgument, err)
		}
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(one)
	}
	body.WriteByte(']')
	method := "batch of " + methodOf(calls[0].cmd)
	a, err := c.exchange(ctx, op, method, ids, body.Bytes())
	if err != nil {
		return err
	}
	if a.over {
		return malformed(op, "%s: an answer over %d bytes", method, c.max)
	}
	var resps []rpcResponse
	if err := json.Unmarshal(a.data, &resps); err != nil {
		return malformed(op, "no JSON-RPC answer to a batch: %v", err)
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
