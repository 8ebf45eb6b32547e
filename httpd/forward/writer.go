package forward

import (
	"encoding/binary"
	"net"
	"runtime"
	"sync"
	"time"
)

// frameWriter writes frames to one connection for many goroutines, with
// no goroutine of its own. A sender that finds no write under way becomes
// the writer: it lets the goroutines that are ready to run go first, then
// writes everything queued by then in one write, and goes on writing
// whatever was queued meanwhile until nothing is left. A sender that
// finds a write under way only queues its frame.
//
// Why: frames are ready in bursts. On the leader, the answers of one raft
// entry are all released at once, to the goroutines serving them, which
// then encode their answers one after another; on a follower, requests
// come in from many clients. The writer goroutine this replaced (fed
// through a channel, flushing whenever the channel was empty) was woken
// by the first frame of a burst and wrote it alone, before the rest were
// encoded: under sheet-put on three nodes the leader made one write per
// answer, 0.99 writes per durable write, and each write on a node
// connection also wakes the reader at the other end. With the yield
// before the first write (runtime.Gosched: the goroutines readied
// together run first, and each only queues its frame) the leader makes
// 0.55 and a follower 0.49 instead of 0.69, and the channel hand-off to
// the writer is gone (cluster/DESIGN.md has the runs).
type frameWriter struct {
	conn net.Conn
	// onStop is called once, with the error that stopped the writer;
	// it may call close.
	onStop func(error)

	mu       sync.Mutex
	queued   []byte // frames waiting for the next write
	spare    []byte // the buffer of the last write, reused for queueing
	writing  bool   // a sender is writing, and writes queued before it returns
	stopped  bool   // no frame is written any more
	notified bool   // onStop has been called
}

func newFrameWriter(conn net.Conn, onStop func(error)) *frameWriter {
	return &frameWriter{conn: conn, onStop: onStop}
}

// send writes f, or queues it for the sender writing now; it reports
// false when the writer has stopped. A sender that writes may wait up to
// forwardTimeout for each write on a connection that takes nothing.
func (w *frameWriter) send(f frame) bool {
	var head [frameHeadBytes]byte
	binary.BigEndian.PutUint32(head[:4], f.id)
	binary.BigEndian.PutUint32(head[4:], uint32(len(f.data)))
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return false
	}
	w.queued = append(append(w.queued, head[:]...), f.data...)
	if w.writing {
		w.mu.Unlock()
		return true
	}
	w.writing = true
	w.mu.Unlock()
	runtime.Gosched() // let the rest of a burst queue first
	err := w.writeQueued()
	if err != nil {
		w.stop(err)
	}
	return true
}

// writeQueued writes what is queued, and then what was queued during that
// write, until nothing is left or a write fails.
func (w *frameWriter) writeQueued() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.writing = false }()
	for len(w.queued) > 0 && !w.stopped {
		out := w.queued
		w.queued = w.spare[:0]
		w.mu.Unlock()
		err := w.conn.SetWriteDeadline(time.Now().Add(forwardTimeout))
		if err == nil {
			_, err = w.conn.Write(out)
		}
		w.mu.Lock()
		w.spare = nil
		if cap(out) <= frameWriteBuffer {
			w.spare = out[:0] // a large buffer goes back to the heap
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stop stops the writer with err and calls onStop, once: frames still
// queued are not written.
func (w *frameWriter) stop(err error) {
	w.mu.Lock()
	w.stopped = true
	w.queued = nil
	notify := !w.notified
	w.notified = true
	w.mu.Unlock()
	if notify {
		w.onStop(err)
	}
}

// close stops the writer; frames still queued are not written.
func (w *frameWriter) close() { w.stop(net.ErrClosed) }
