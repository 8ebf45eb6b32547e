package btcdsource

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// The reads' transport. Every request of the reads (Tip, BlockHash, the
// addresses' indexes, Tx) goes over one websocket connection to btcd,
// several in flight at once and each answer matched to its request by
// ID. btcd closes an HTTP connection after each answer, so posting the
// requests cost a TCP and a TLS handshake each: half the server's CPU
// under bench watch. The connection is dialled by the first call that
// needs it, and again by the first call after it ended; a call is never
// retried. btcd's rpcclient is not used (DESIGN.md says why); its
// commands and their answers' shapes are (btcjson, wire.go).

// responseBytesMax caps one answer. A search page of 200 large
// transactions, each in hex and decoded, stays well below it.
const responseBytesMax = 32 << 20

// rpcClient sends JSON-RPC requests to one btcd.
type rpcClient struct {
	endpoint *wsEndpoint
	timeout  time.Duration
	slots    chan struct{} // one token per request in flight
	// answerBytesMax bounds an answer: responseBytesMax, less in tests.
	answerBytesMax int64
	// sent, when set (by tests), is told of each request as it goes: its
	// method, or "batch:" and its first call's method.
	sent func(method string)

	held    heldConn
	mu      sync.Mutex
	dialing *dialing // the dial under way, if one is
}

// dialing is a dial under way, which every call that finds no
// connection waits for: one dial at a time, whoever asked.
type dialing struct {
	done chan struct{}
	conn *wsConn              // set before done is closed, or
	err  *chain.UpstreamError // this
}

// call sends one command and decodes its result into result; see
// wsConn.call.
func (c *rpcClient) call(ctx context.Context, op string, cmd, result any) error {
	return c.do(ctx, op, methodOf(cmd), func(ctx context.Context, conn *wsConn) error {
		return conn.call(ctx, op, cmd, result)
	})
}

// batch sends calls in one request and decodes each result, or sets its
// err; see wsConn.batch.
func (c *rpcClient) batch(ctx context.Context, op string, calls []rpcCall) error {
	if len(calls) == 0 {
		return nil
	}
	return c.do(ctx, op, "batch:"+methodOf(calls[0].cmd), func(ctx context.Context, conn *wsConn) error {
		return conn.batch(ctx, op, calls)
	})
}

// do makes one request with send once a slot is free, within the
// client's timeout (the dial, if one is needed, included) and ctx.
func (c *rpcClient) do(ctx context.Context, op, method string, send func(context.Context, *wsConn) error) error {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return &chain.UpstreamError{Op: op, Err: ctx.Err()}
	}
	defer func() { <-c.slots }()
	ctx, cancel := requestContext(ctx, c.timeout)
	defer cancel()
	conn, err := c.connection(ctx, op)
	if err != nil {
		return err
	}
	if c.sent != nil {
		c.sent(method)
	}
	return send(ctx, conn)
}

// connection is the live connection, or the one a dial brings; the
// caller waits for the dial as long as ctx lets it.
func (c *rpcClient) connection(ctx context.Context, op string) (*wsConn, error) {
	switch conn, closed := c.held.current(); {
	case closed:
		return nil, &chain.UpstreamError{Op: op, Err: errClosed}
	case conn != nil:
		return conn, nil
	}
	c.mu.Lock()
	d := c.dialing
	if d == nil {
		d = &dialing{done: make(chan struct{})}
		c.dialing = d
		go c.dial(d)
	}
	c.mu.Unlock()
	select {
	case <-d.done:
		if d.err != nil {
			ue := *d.err
			ue.Op = op
			return nil, &ue
		}
		return d.conn, nil
	case <-ctx.Done():
		return nil, &chain.UpstreamError{Op: op, Err: context.Cause(ctx)}
	}
}

// dial opens the connection d stands for, within the client's timeout
// but no caller's context: a caller that gives up leaves the connection
// to the next.
func (c *rpcClient) dial(d *dialing) {
	ctx, cancel := requestContext(context.Background(), c.timeout)
	defer cancel()
	conn, err := c.endpoint.dial(ctx, "", c.answerBytesMax)
	switch {
	case err != nil:
		if !errors.As(err, &d.err) {
			d.err = &chain.UpstreamError{Err: err}
		}
	default:
		if _, ok := c.held.replace(conn); !ok {
			d.err = &chain.UpstreamError{Err: errClosed}
			break
		}
		d.conn = conn
		go conn.read(nil) // no notification is asked for on it
		go conn.keepAlive()
	}
	c.mu.Lock()
	c.dialing = nil
	c.mu.Unlock()
	close(d.done)
}
