package electrum

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one connection to the server. Requests from any number of
// goroutines share it: each gets the next ID and waits for the answer
// with that ID, which the reader goroutine (run) hands over, whatever
// order the server answers in. Notifications go to notify.
type conn struct {
	nc      net.Conn
	timeout time.Duration
	lineMax int // lineBytesMax, less in tests
	// notify takes each notification, on the reader goroutine: it must
	// not block.
	notify func(message)

	writeMu sync.Mutex // one request line written at a time
	slots   chan struct{}

	mu      sync.Mutex
	lastID  uint64
	pending map[uint64]chan message // by request ID; each buffered, so the reader never waits
	err     error                   // why the connection ended; nil while it lives
	done    chan struct{}           // closed when it ends

	// lastRead is when the last line arrived (Unix nanoseconds): a
	// request that timed out with nothing read since it was sent finds
	// the connection dead, not just its own answer slow.
	lastRead atomic.Int64
	// lastSent is when the last request went out (Unix nanoseconds).
	lastSent atomic.Int64
}

// inFlightMax bounds the requests awaiting an answer on one connection.
// Electrum servers limit a session's concurrent requests themselves
// (ElectrumX by cost, Fulcrum to a few hundred); past this a call waits.
const inFlightMax = 64

func newConn(nc net.Conn, timeout time.Duration, lineMax int, notify func(message)) *conn {
	c := &conn{
		nc: nc, timeout: timeout, lineMax: lineMax, notify: notify,
		slots:   make(chan struct{}, inFlightMax),
		pending: map[uint64]chan message{},
		done:    make(chan struct{}),
	}
	c.lastRead.Store(time.Now().UnixNano())
	go c.run()
	return c
}

// run reads the server's lines until the connection ends. A line over
// lineMax, one that is no message, and an answer to a request never
// made end it: the stream can no longer be trusted.
func (c *conn) run() {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		line, err := readLine(r, c.lineMax)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				err = unusablef("a line over %d bytes", c.lineMax)
			}
			c.close(err)
			return
		}
		c.lastRead.Store(time.Now().UnixNano())
		m, err := decodeMessage(line)
		if err != nil {
			c.close(unusable{what: err.Error()})
			return
		}
		if !m.isAnswer {
			c.notify(m)
			continue
		}
		c.mu.Lock()
		wait, pending := c.pending[m.id]
		delete(c.pending, m.id)
		asked := m.id <= c.lastID
		c.mu.Unlock()
		switch {
		case pending:
			wait <- m
		case !asked:
			c.close(unusablef("an answer to a request never made"))
			return
		}
		// Otherwise a late answer to a request that gave up: dropped.
	}
}

// alive reports whether the connection has not ended.
func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// close ends the connection with err as the reason; the first reason
// stays. Every call waiting on it fails.
func (c *conn) close(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.mu.Unlock()
	close(c.done)
	_ = c.nc.Close()
}

// lost is the error of a call the connection's end cut short.
func (c *conn) lost() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return connLostError{cause: c.err}
}

// call sends one request and waits for its answer: the result's JSON,
// the server's error answer (*rpcError), or why none came (the caller's
// context, timeoutError, connLostError).
func (c *conn) call(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, c.lost()
	}
	defer func() { <-c.slots }()

	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.lost()
	}
	c.lastID++
	id := c.lastID
	answer := make(chan message, 1)
	c.pending[id] = answer
	c.mu.Unlock()

	line, err := encodeRequest(id, method, params)
	if err != nil {
		c.forget(id)
		return nil, err
	}
	sent := time.Now()
	c.lastSent.Store(sent.UnixNano())
	c.writeMu.Lock()
	_ = c.nc.SetWriteDeadline(sent.Add(c.timeout))
	_, err = c.nc.Write(line)
	c.writeMu.Unlock()
	if err != nil {
		c.close(err)
		return nil, c.lost()
	}

	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case m := <-answer:
		return m.outcome()
	case <-c.done:
		select {
		case m := <-answer: // it came just before the end
			return m.outcome()
		default:
			return nil, c.lost()
		}
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	case <-timer.C:
		c.forget(id)
		if c.lastRead.Load() < sent.UnixNano() {
			// Nothing at all came since the request went out: the
			// server (or the path to it) is stalled, and every other
			// request on this connection would wait as long.
			c.close(timeoutError{c.timeout})
		}
		return nil, timeoutError{c.timeout}
	}
}

func (c *conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// outcome is an answer's result, or its error.
func (m message) outcome() (json.RawMessage, error) {
	if m.rpcErr != nil {
		return nil, m.rpcErr
	}
	return m.result, nil
}
