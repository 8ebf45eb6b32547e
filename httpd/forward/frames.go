package forward

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Framed forwarding: a follower passes public requests to the leader over
// one node connection that carries many at once, each in a frame tagged
// with an ID, instead of one pooled connection per request in flight.
// Under load that is most of forwarding's cost: a follower writing 40
// requests to 40 connections makes 40 writes and 40 reads on each side,
// where one connection carries them in fewer writes, since frames that
// are ready together share a write (frameWriter).
//
// A frame holds the request, or the answer, exactly as HTTP/1.1 would put
// it on the wire, and fasthttp reads it back: the leader serves a framed
// request with the same handlers, and the follower relays the same
// answer, as over a connection of its own. History CSV downloads, which
// stream, and admin requests keep their own connections.
//
// A leader too old to know framed connections refuses them when they
// are opened; the follower then forwards that leader's requests one per
// connection, as before, and asks again after framesRetryAfter.

const (
	// frameHeadBytes is a frame's head: its ID and its length.
	frameHeadBytes = 8
	// frameBytesMax bounds one frame. A request is at most the public
	// listener's body limit plus its head; an answer at most a Sheet
	// Space read whole, escaped.
	frameBytesMax = 64 << 20
	// frameWriteBuffer is how much a connection's writer gathers before
	// it must write.
	frameWriteBuffer = 64 << 10
	// framesInFlightMax bounds the requests one framed connection has
	// the leader serve at once; past it the leader stops reading the
	// connection until one is answered.
	framesInFlightMax = 1024
	// framesRetryAfter is how long a follower forwards one request per
	// connection to a leader that refused a framed connection.
	framesRetryAfter = 10 * time.Second
)

// errFramesLost fails the requests in flight on a framed connection that
// broke: each may or may not have been served.
var errFramesLost = errors.New("the framed connection to the leader was lost")

// errFramesRefused means the leader refused a framed connection lately.
var errFramesRefused = errors.New("the leader takes no framed connections")

// frame is one request or answer and the ID that pairs them.
type frame struct {
	id   uint32
	data []byte
}

// readFrame reads the next frame from br.
func readFrame(br *bufio.Reader) (frame, error) {
	var head [frameHeadBytes]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return frame{}, err
	}
	size := binary.BigEndian.Uint32(head[4:])
	if size > frameBytesMax {
		return frame{}, fmt.Errorf("a frame of %d bytes is over the limit of %d", size, frameBytesMax)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(br, data); err != nil {
		return frame{}, err
	}
	return frame{id: binary.BigEndian.Uint32(head[:4]), data: data}, nil
}

// parseBufferBytes is the buffer of a bufio.Reader that parses a frame:
// the edge's read buffer (fasthttp's per connection).
const parseBufferBytes = 16 << 10

// readerPool holds the bufio.Readers that parse frames.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, parseBufferBytes) }}

// parseFrame runs read on a bufio.Reader over data.
func parseFrame(data []byte, read func(*bufio.Reader) error) error {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(bytes.NewReader(data))
	err := read(br)
	br.Reset(nil)
	readerPool.Put(br)
	return err
}
