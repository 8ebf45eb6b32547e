package forward

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedConn is a net.Conn whose writes are recorded, and whose first
// write waits until the test opens the gate.
type gatedConn struct {
	net.Conn // nil: only Write and SetWriteDeadline are called
	gate     chan struct{}
	entered  chan struct{} // closed when the first write has begun
	fail     error         // every write fails with it when set

	mu     sync.Mutex
	writes [][]byte
}

func newGatedConn() *gatedConn {
	return &gatedConn{gate: make(chan struct{}), entered: make(chan struct{})}
}

func (c *gatedConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	first := len(c.writes) == 0
	c.writes = append(c.writes, bytes.Clone(b))
	c.mu.Unlock()
	if first {
		close(c.entered)
		<-c.gate
	}
	if c.fail != nil {
		return 0, c.fail
	}
	return len(b), nil
}

func (c *gatedConn) SetWriteDeadline(time.Time) error { return nil }

func (c *gatedConn) written() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// readAllFrames reads back every frame in b.
func readAllFrames(t *testing.T, b []byte) map[uint32]string {
	t.Helper()
	frames := map[uint32]string{}
	br := bufio.NewReader(bytes.NewReader(b))
	for br.Buffered() > 0 || len(frames) == 0 {
		f, err := readFrame(br)
		if err != nil {
			t.Fatalf("the bytes written do not read back as frames: %v", err)
		}
		if _, dup := frames[f.id]; dup {
			t.Fatalf("frame %d written twice", f.id)
		}
		frames[f.id] = string(f.data)
		if _, err := br.Peek(1); err != nil {
			break
		}
	}
	return frames
}

// TestFrameWriterSendsFramesQueuedDuringAWriteInOneWrite holds the first
// write on the connection while other senders queue, and checks that
// those frames then go out together, in a second write, and that every
// frame reads back whole.
func TestFrameWriterSendsFramesQueuedDuringAWriteInOneWrite(t *testing.T) {
	conn := newGatedConn()
	w := newFrameWriter(conn, func(error) { t.Error("the writer stopped") })
	first := make(chan bool)
	go func() { first <- w.send(frame{id: 1, data: []byte("first")}) }()
	<-conn.entered
	const queued = 20
	for i := range queued {
		// The write under way is held, so these only queue, and return.
		if !w.send(frame{id: uint32(2 + i), data: fmt.Appendf(nil, "frame %d", 2+i)}) {
			t.Fatalf("send %d refused", 2+i)
		}
	}
	if n := len(conn.written()); n != 1 {
		t.Fatalf("%d writes while the first was held, want 1", n)
	}
	close(conn.gate)
	if !<-first {
		t.Fatal("the first send was refused")
	}
	writes := conn.written()
	if len(writes) != 2 {
		t.Fatalf("%d writes, want 2 (the first frame, then the %d queued meanwhile together)", len(writes), queued)
	}
	frames := readAllFrames(t, bytes.Join(writes, nil))
	if len(frames) != queued+1 || frames[1] != "first" || frames[queued+1] != fmt.Sprintf("frame %d", queued+1) {
		t.Fatalf("read back %d frames (%q ... %q), want %d", len(frames), frames[1], frames[queued+1], queued+1)
	}
}

// TestFrameWriterManySenders sends from many goroutines at once over a
// real connection and checks that the reader gets every frame once,
// whole.
func TestFrameWriterManySenders(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	w := newFrameWriter(client, func(err error) { t.Errorf("the writer stopped: %v", err) })
	const senders, each = 16, 50
	got := make(chan map[uint32]string)
	go func() {
		frames := map[uint32]string{}
		br := bufio.NewReader(server)
		for len(frames) < senders*each {
			f, err := readFrame(br)
			if err != nil {
				t.Errorf("read: %v", err)
				break
			}
			frames[f.id] = string(f.data)
		}
		got <- frames
	}()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				id := uint32(s*each + i)
				if !w.send(frame{id: id, data: bytes.Repeat([]byte{byte('a' + s)}, 1+i*37)}) {
					t.Errorf("send %d refused", id)
				}
			}
		})
	}
	wg.Wait()
	frames := <-got
	if len(frames) != senders*each {
		t.Fatalf("read %d frames, want %d", len(frames), senders*each)
	}
	for id, data := range frames {
		s, i := int(id)/each, int(id)%each
		if data != string(bytes.Repeat([]byte{byte('a' + s)}, 1+i*37)) {
			t.Fatalf("frame %d holds another frame's bytes", id)
		}
	}
}

// TestFrameWriterStopsOnAFailedWrite checks that a failed write stops the
// writer, calls onStop once with the error (onStop may close the writer,
// as a follower's does), and refuses later frames.
func TestFrameWriterStopsOnAFailedWrite(t *testing.T) {
	conn := newGatedConn()
	conn.fail = errors.New("connection reset")
	close(conn.gate)
	var stops atomic.Int32
	var w *frameWriter
	w = newFrameWriter(conn, func(err error) {
		stops.Add(1)
		if !errors.Is(err, conn.fail) {
			t.Errorf("onStop(%v), want the write's error", err)
		}
		w.close()
	})
	w.send(frame{id: 1, data: []byte("lost")})
	if stops.Load() != 1 {
		t.Fatalf("onStop called %d times, want 1", stops.Load())
	}
	if w.send(frame{id: 2, data: []byte("after")}) {
		t.Fatal("a stopped writer took a frame")
	}
	w.close()
	if stops.Load() != 1 || len(conn.written()) != 1 {
		t.Fatalf("onStop called %d times and %d writes, want 1 and 1", stops.Load(), len(conn.written()))
	}
}

// TestFrameWriterCloseDropsQueuedFrames checks that frames queued behind
// a write under way are not written once the writer is closed.
func TestFrameWriterCloseDropsQueuedFrames(t *testing.T) {
	conn := newGatedConn()
	w := newFrameWriter(conn, func(error) {})
	done := make(chan struct{})
	go func() { w.send(frame{id: 1, data: []byte("under way")}); close(done) }()
	<-conn.entered
	w.send(frame{id: 2, data: []byte("queued")})
	w.close()
	close(conn.gate)
	<-done
	if n := len(conn.written()); n != 1 {
		t.Fatalf("%d writes, want only the one under way when the writer closed", n)
	}
}

// TestFrameWriterBurstSharesOneWrite readies many senders at once, as the
// answers of one raft entry are, on one P so that the order they run in
// is the scheduler's: the first to run yields before it writes, so the
// others queue their frames and go out with its own. Usually that is one
// write; the scheduler looks at the queue the yield went to every 61st
// turn, so it can be two. Without the yield each sender here would write
// alone: 30 writes.
func TestFrameWriterBurstSharesOneWrite(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	conn := newGatedConn()
	close(conn.gate)
	w := newFrameWriter(conn, func(err error) { t.Errorf("the writer stopped: %v", err) })
	const burst = 30
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			<-start
			w.send(frame{id: uint32(i), data: fmt.Appendf(nil, "answer %d", i)})
		})
	}
	time.Sleep(10 * time.Millisecond) // every sender waits on start
	close(start)
	wg.Wait()
	writes := conn.written()
	if len(writes) > 2 {
		t.Fatalf("a burst of %d frames took %d writes, want 1 or 2", burst, len(writes))
	}
	if frames := readAllFrames(t, bytes.Join(writes, nil)); len(frames) != burst {
		t.Fatalf("read back %d frames, want %d", len(frames), burst)
	}
}
