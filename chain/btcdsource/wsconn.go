package btcdsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
	"github.com/gorilla/websocket"
)

// The websocket transport of Notify (notify.go): btcd's RPC server at
// wss://HOST:PORT/ws, reached as the HTTP reads reach it (the same user
// and password, the same certificate trusted, the same proxy). btcd's
// rpcclient is not used for it either; DESIGN.md says why.

const (
	// wsMessageBytesMax caps one message from btcd. The largest is a
	// filteredblockconnected naming every transaction of a full block: 4
	// MB of transactions, twice that in hex.
	wsMessageBytesMax = 16 << 20
	// pingEvery is how often btcd is asked whether it is still there,
	// and pongWait how long the connection may go without a word from it
	// (a message or a pong) before it is taken for lost: a half-open
	// connection would otherwise wait for notifications for ever.
	pingEvery = 20 * time.Second
	pongWait  = 60 * time.Second
)

// wsDialer dials btcd's websocket as the HTTP transport t dials its
// requests: TLS as t's (the certificate pinned, sessions resumed), and
// through the SOCKS5 proxy when there is one (chain.Reach), which
// resolves the host name itself.
func wsDialer(t *http.Transport, proxy *url.URL, timeout time.Duration) (*websocket.Dialer, error) {
	dial, err := chain.Reach{Proxy: proxy}.DialContext()
	if err != nil {
		return nil, err
	}
	return &websocket.Dialer{NetDialContext: dial, TLSClientConfig: t.TLSClientConfig.Clone(), HandshakeTimeout: timeout}, nil
}

// wsConn is one websocket connection to btcd: JSON-RPC requests answered
// by ID, and notifications handed on in the order btcd sent them.
type wsConn struct {
	ws      *websocket.Conn
	timeout time.Duration
	writing sync.Mutex // gorilla's Conn takes one writer at a time
	lastID  atomic.Uint64

	mu      sync.Mutex
	waiting map[uint64]chan *btcjson.RPCError // nil once closed
	done    chan struct{}                     // closed when the connection ended
	err     error                             // why it ended, set before done is closed
}

// wsMessage is a message from btcd: a notification (Method, Params) or
// an answer (ID, Error; the requests sent here answer a null result).
type wsMessage struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	ID     json.RawMessage   `json:"id"`
	Error  *btcjson.RPCError `json:"error"`
}

// dialWS opens a connection to endpoint (wss://HOST:PORT/ws) with
// header (the basic authorization btcd wants), within timeout, that
// takes messages of messageBytesMax at most.
func dialWS(ctx context.Context, d *websocket.Dialer, endpoint string, header http.Header, timeout time.Duration, messageBytesMax int64) (*wsConn, error) {
	ws, resp, err := d.DialContext(ctx, endpoint, header)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		ue := &chain.UpstreamError{Op: opNotify, Err: err}
		switch {
		case ctx.Err() != nil:
			ue.Err = ctx.Err()
		case errors.Is(err, websocket.ErrBadHandshake) && resp != nil:
			ue.Status = resp.StatusCode
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				ue.Err = errRefusedCredentials
			}
		}
		return nil, ue
	}
	ws.SetReadLimit(messageBytesMax)
	return &wsConn{ws: ws, timeout: timeout, waiting: map[uint64]chan *btcjson.RPCError{}, done: make(chan struct{})}, nil
}

// read hands each notification to note and each answer to the request
// waiting for it, until the connection ends: btcd closed it, it went
// silent past pongWait, a message was over its bound or malformed, or
// note failed.
func (c *wsConn) read(note func(method string, params []json.RawMessage) error) {
	alive := func(string) error { return c.ws.SetReadDeadline(time.Now().Add(pongWait)) }
	c.ws.SetPongHandler(alive)
	for {
		_ = alive("")
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.close(&chain.UpstreamError{Op: opNotify, Err: fmt.Errorf("btcd's notifications ended: %w", err)})
			return
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil {
			c.close(malformed(opNotify, "no JSON-RPC message: %v", err))
			return
		}
		if m.Method != "" {
			if err := note(m.Method, m.Params); err != nil {
				c.close(err)
				return
			}
			continue
		}
		var id uint64
		if err := json.Unmarshal(m.ID, &id); err != nil {
			c.close(malformed(opNotify, "an answer without its request's ID"))
			return
		}
		c.answer(id, m.Error)
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
				c.close(&chain.UpstreamError{Op: opNotify, Err: fmt.Errorf("pinging btcd: %w", err)})
				return
			}
		}
	}
}

// call sends cmd and waits, at most the timeout, for btcd's answer.
func (c *wsConn) call(ctx context.Context, cmd any) error {
	id := c.lastID.Add(1)
	body, err := btcjson.MarshalCmd(btcjson.RpcVersion1, id, cmd)
	if err != nil {
		return fmt.Errorf("%w: %v", chain.ErrInvalidArgument, err)
	}
	answer := make(chan *btcjson.RPCError, 1)
	c.mu.Lock()
	if c.waiting == nil {
		c.mu.Unlock()
		return c.err
	}
	c.waiting[id] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}()
	if err := c.write(body); err != nil {
		return &chain.UpstreamError{Op: opNotify, Err: err}
	}
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case rpcErr := <-answer:
		if rpcErr != nil {
			return &chain.UpstreamError{Op: opNotify, Status: http.StatusOK, Err: &rpcError{method: methodOf(cmd), code: rpcErr.Code, message: rpcErr.Message}}
		}
		return nil
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return &chain.UpstreamError{Op: opNotify, Err: ctx.Err()}
	case <-timer.C:
		return &chain.UpstreamError{Op: opNotify, Err: timeoutError{c.timeout}}
	}
}

func (c *wsConn) write(body []byte) error {
	c.writing.Lock()
	defer c.writing.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.timeout))
	return c.ws.WriteMessage(websocket.TextMessage, body)
}

// answer hands btcd's answer to request id to its caller, if it still
// waits.
func (c *wsConn) answer(id uint64, rpcErr *btcjson.RPCError) {
	c.mu.Lock()
	waiting := c.waiting[id]
	c.mu.Unlock()
	if waiting != nil {
		select {
		case waiting <- rpcErr:
		default: // a second answer to one request
		}
	}
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

// close ends the connection for err; the first reason given stays.
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
