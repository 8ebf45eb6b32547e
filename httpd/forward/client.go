package forward

import (
	"bufio"
	"sync"
	"time"

	"github.com/valyala/bytebufferpool"
	"github.com/valyala/fasthttp"
)

// framedConn is a follower's framed connection to one leader: requests
// go out through its writer, and its reader hands each answer to the
// request waiting for that ID.
type framedConn struct {
	writer *frameWriter
	close  func() error

	mu       sync.Mutex
	next     uint32
	waiting  map[uint32]chan []byte // closed, unanswered, when the connection is lost
	lost     bool
	retiring bool // lost once nothing is waiting: the leader has changed
}

// dialFramed opens a framed connection to the leader at addr.
func dialFramed(cluster Cluster, addr string) (*framedConn, error) {
	conn, err := cluster.DialNode(addr, StreamFrames, forwardDialTimeout)
	if err != nil {
		return nil, &dialError{err}
	}
	c := &framedConn{close: conn.Close, waiting: map[uint32]chan []byte{}}
	c.writer = newFrameWriter(conn, func(error) { c.fail() })
	go c.read(bufio.NewReaderSize(conn, frameWriteBuffer))
	return c, nil
}

func (c *framedConn) read(br *bufio.Reader) {
	for {
		f, err := readFrame(br)
		if err != nil {
			c.fail()
			return
		}
		c.mu.Lock()
		answer := c.waiting[f.id]
		delete(c.waiting, f.id)
		done := c.retiring && len(c.waiting) == 0
		c.mu.Unlock()
		if answer != nil {
			answer <- f.data
		}
		if done {
			c.fail()
			return
		}
	}
}

// fail closes the connection and fails every request still waiting on it.
func (c *framedConn) fail() {
	c.mu.Lock()
	if c.lost {
		c.mu.Unlock()
		return
	}
	c.lost = true
	waiting := c.waiting
	c.waiting = nil
	c.mu.Unlock()
	c.writer.close()
	c.close()
	for _, answer := range waiting {
		close(answer)
	}
}

// usable reports whether the connection may take another request.
func (c *framedConn) usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.lost && !c.retiring
}

// retire closes the connection once its last answer has arrived.
func (c *framedConn) retire() {
	c.mu.Lock()
	c.retiring = true
	idle := len(c.waiting) == 0
	c.mu.Unlock()
	if idle {
		c.fail()
	}
}

// forget drops a request that will not wait for its answer, closing a
// retiring connection it was the last to wait on.
func (c *framedConn) forget(id uint32) {
	c.mu.Lock()
	delete(c.waiting, id)
	done := c.retiring && len(c.waiting) == 0
	c.mu.Unlock()
	if done {
		c.fail()
	}
}

// writerPool holds the bufio.Writers that write requests and answers into
// frames.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4096) }}

// encodeFrame returns what write puts out, as the data of one frame. It
// writes into a pooled buffer and returns a copy of exactly the size
// written, rather than growing a new buffer to fit for every frame.
func encodeFrame(write func(*bufio.Writer) error) ([]byte, error) {
	buf := bytebufferpool.Get()
	defer bytebufferpool.Put(buf)
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(buf)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writerPool.Put(bw)
	return append([]byte(nil), buf.B...), err
}

// do sends req to the leader and reads its answer into resp, within
// timeout. A dialError means the request was not sent.
func (c *framedConn) do(req *fasthttp.Request, resp *fasthttp.Response, timeout time.Duration) error {
	// The client's body is here already: the leader has nothing to
	// agree to.
	req.Header.Del(fasthttp.HeaderExpect)
	data, err := encodeFrame(req.Write)
	if err != nil {
		return err // nothing was sent, but sending again would fail alike
	}
	answer := make(chan []byte, 1)
	c.mu.Lock()
	if c.lost || c.retiring {
		c.mu.Unlock()
		return &dialError{errFramesLost}
	}
	c.next++
	id := c.next
	c.waiting[id] = answer
	c.mu.Unlock()
	if !c.writer.send(frame{id: id, data: data}) {
		c.forget(id)
		return &dialError{errFramesLost}
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case data, answered := <-answer:
		if !answered {
			return errFramesLost
		}
		resp.SkipBody = req.Header.IsHead()
		return parseFrame(data, func(br *bufio.Reader) error { return resp.ReadLimitBody(br, frameBytesMax) })
	case <-timer.C:
		// A leader that has not answered in forwardTimeout may be gone
		// without a word (its machine lost): later requests take a new
		// connection, while this one waits out the others in flight.
		c.retire()
		c.forget(id)
		return fasthttp.ErrTimeout
	}
}

// framedTo returns the framed connection to the leader at addr, opening
// it if need be, or an error when that leader refused one lately. A
// connection to a node that no longer leads is retired once it is found
// unusable; a sharded cluster has one per leader at once.
func (f *Forwarder) framedTo(addr string) (*framedConn, error) {
	f.framesMu.Lock()
	defer f.framesMu.Unlock()
	if c := f.framed[addr]; c != nil && c.usable() {
		return c, nil
	}
	if at, refused := f.framesRefused[addr]; refused && time.Since(at) < framesRetryAfter {
		return nil, errFramesRefused
	}
	for a, c := range f.framed {
		if a == addr || !c.usable() {
			c.retire()
			delete(f.framed, a)
		}
	}
	c, err := dialFramed(f.cfg.Cluster, addr)
	if err != nil {
		if f.framesRefused == nil {
			f.framesRefused = map[string]time.Time{}
		}
		f.framesRefused[addr] = time.Now()
		return nil, err
	}
	if f.framed == nil {
		f.framed = map[string]*framedConn{}
	}
	f.framed[addr] = c
	return c, nil
}
