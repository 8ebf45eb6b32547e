package btcdsource

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// relayServer forwards connections to target, counting them. hold stops
// what btcd sends from reaching the source (its requests still reach
// btcd), as a stalled btcd or network would look; cut drops every
// connection, as btcd dropping its clients would look.
type relayServer struct {
	addr     string
	accepted atomic.Int64
	held     atomic.Bool
	mu       sync.Mutex
	conns    []net.Conn
}

func relayTo(t *testing.T, target string) *relayServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	r := &relayServer{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			to, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			r.accepted.Add(1)
			r.mu.Lock()
			r.conns = append(r.conns, c, to)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(to, c); to.Close() }()
			go r.back(c, to)
		}
	}()
	return r
}

// back copies from btcd to the source, waiting while held.
func (r *relayServer) back(c, from net.Conn) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		for r.held.Load() {
			time.Sleep(time.Millisecond)
		}
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (r *relayServer) hold(held bool) { r.held.Store(held) }

func (r *relayServer) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}
