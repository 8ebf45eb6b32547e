package btcdsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/gorilla/websocket"
)

// The websocket transport: btcd's RPC server at wss://HOST:PORT/ws, which
// takes every RPC command, serves several at once and names in each
// answer the ID of its request. The reads (rpc.go) and the
// notifications (notify.go) each hold a connection of their own to it.
// btcd's rpcclient is not used; DESIGN.md says why.

const (
	// wsMessageBytesMax caps one message on the notifications'
	// connection. The largest is a filteredblockconnected naming every
	// transaction of a full block: 4 MB of transactions, twice that in
	// hex.
	wsMessageBytesMax = 16 << 20
	// pingEvery is how often btcd is asked whether it is still there,
	// and pongWait how long the connection may go without a word from it
	// (a message or a pong) before it is taken for lost: a half-open
	// connection would otherwise wait for notifications for ever.
	pingEvery = 20 * time.Second
	pongWait  = 60 * time.Second
)

// wsConn is one websocket connection to btcd: requests answered by ID,
// several in flight at once, and notifications handed on in the order
// btcd sent them.
type wsConn struct {
	ws      *websocket.Conn
	timeout time.Duration
	max     int64      // a message's bound
	writing sync.Mutex // gorilla's Conn takes one writer at a time
	lastID  atomic.Uint64
	heard   atomic.Int64 // when btcd last said anything (a message, a pong), in Unix nanoseconds

	mu      sync.Mutex
	waiting map[uint64]chan rpcAnswer // by request ID; nil once closed
	done    chan struct{}             // closed when the connection ended
	err     error                     // why it ended, set before done is closed
}

// read hands each notification to note (none expected when nil) and
// each answer to the request waiting for it, until the connection ends:
// btcd closed it, it went silent past pongWait, a message made no sense
// or was over the bound without naming its request, or note failed.
func (c *wsConn) read(note func(method string, params []json.RawMessage) error) {
	waitFor := func() error { return c.ws.SetReadDeadline(time.Now().Add(pongWait)) }
	c.ws.SetPongHandler(func(string) error {
		c.heard.Store(time.Now().UnixNano())
		return waitFor()
	})
	for {
		_ = waitFor()
		data, tail, err := readMessage(c.ws, c.max)
		if err != nil {
			c.close(fmt.Errorf("reading from btcd: %w", err))
			return
		}
		c.heard.Store(time.Now().UnixNano())
		if data == nil {
			id, ok := trailingID(tail)
			if !ok {
				c.close(fmt.Errorf("btcd sent a message over %d bytes that answers no request", c.max))
				return
			}
			c.answer(id, rpcAnswer{over: true})
			continue
		}
		if id, ok := trailingID(data); ok {
			c.answer(id, rpcAnswer{data: data})
			continue
		}
		var m wsMessage
		if json.Unmarshal(data, &m) == nil && m.Method != "" {
			if note == nil {
				continue
			}
			if err := note(m.Method, m.Params); err != nil {
				c.close(err)
				return
			}
			continue
		}
		id, ok := leadingID(data)
		if !ok {
			c.close(errors.New("btcd sent a message that is neither an answer nor a notification"))
			return
		}
		c.answer(id, rpcAnswer{data: data})
	}
}

// keepAlive pings btcd every pingEvery until the connection ends; btcd's
// pong (or any message) keeps read waiting.
func (c *wsConn) keepAlive() {
	tick := time.NewTicker(pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.timeout)); err != nil {
				c.close(fmt.Errorf("pinging btcd: %w", err))
				return
			}
		}
	}
}

// exchange sends body, a request (or a batch) of the given IDs, and
// waits for its answer within the connection's timeout and ctx. It
// returns as soon as the connection ends, ctx ends, or the timeout
// passes; a timeout with no word at all from btcd since the request was
// sent ends the connection too, as lost, so that the next call dials
// afresh rather than wait on a dead one.
func (c *wsConn) exchange(ctx context.Context, op, method string, ids []uint64, body []byte) (rpcAnswer, error) {
	ctx, cancel := requestContext(ctx, c.timeout)
	defer cancel()
	answer := make(chan rpcAnswer, 1)
	c.mu.Lock()
	if c.waiting == nil {
		c.mu.Unlock()
		return rpcAnswer{}, c.lost(op, method)
	}
	for _, id := range ids {
		c.waiting[id] = answer
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		for _, id := range ids {
			delete(c.waiting, id)
		}
		c.mu.Unlock()
	}()
	if ctx.Err() != nil {
		return rpcAnswer{}, &chain.UpstreamError{Op: op, Err: context.Cause(ctx)}
	}
	sent := time.Now().UnixNano()
	if err := c.write(body); err != nil {
		// gorilla's Conn (and TLS's) is of no more use after a failed
		// write.
		c.close(fmt.Errorf("writing to btcd: %w", err))
		return rpcAnswer{}, c.lost(op, method)
	}
	select {
	case a := <-answer:
		return a, nil
	case <-c.done:
		return rpcAnswer{}, c.lost(op, method)
	case <-ctx.Done():
		cause := context.Cause(ctx)
		if errors.As(cause, new(timeoutError)) && c.heard.Load() < sent {
			c.close(fmt.Errorf("btcd said nothing for %s", c.timeout))
		}
		return rpcAnswer{}, &chain.UpstreamError{Op: op, Err: cause}
	}
}

// write sends one message within the connection's timeout. The
// caller's context does not cut it short: a message written in part
// would break the connection for every request on it. A request is a
// few hundred bytes (a filter a few hundred kilobytes) that the
// socket's buffer takes at once unless btcd stopped reading.
func (c *wsConn) write(body []byte) error {
	c.writing.Lock()
	defer c.writing.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.timeout))
	return c.ws.WriteMessage(websocket.TextMessage, body)
}

// answer hands btcd's answer to request id to its caller, if it still
// waits.
func (c *wsConn) answer(id uint64, a rpcAnswer) {
	c.mu.Lock()
	waiting := c.waiting[id]
	c.mu.Unlock()
	if waiting != nil {
		select {
		case waiting <- a:
		default: // a second answer to one request
		}
	}
}

// lost is the error of a request on a connection that ended.
func (c *wsConn) lost(op, method string) error {
	<-c.done
	return &chain.UpstreamError{Op: op, Err: &lostError{method: method, cause: c.err}}
}

// live reports whether the connection has not ended.
func (c *wsConn) live() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// close ends the connection for err; the first reason given stays. Every
// request waiting fails at once.
func (c *wsConn) close(err error) {
	c.mu.Lock()
	if c.waiting == nil {
		c.mu.Unlock()
		return
	}
	c.waiting, c.err = nil, err
	close(c.done)
	c.mu.Unlock()
	_ = c.ws.Close()
}

// requestContext bounds one request by timeout within ctx; when the
// timeout is what ends it, its cause is a timeoutError, which the
// breaker takes for btcd down, unlike the caller's own deadline.
func requestContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, timeoutError{timeout})
}
