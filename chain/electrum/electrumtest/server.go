// Package electrumtest is an Electrum server for tests: it speaks the
// Electrum protocol (version 1.4, line-delimited JSON-RPC 2.0 over TCP
// or TLS) over the chain of a real btcd node, the regtest node of
// internal/regtest, which it reads through btcd's RPC. It keeps its own
// index of the node's chain as electrs or ElectrumX do (script hash to
// history), follows new blocks, reorganisations and the mempool, and
// notifies its subscribers of new tips and of changed script hash
// statuses.
//
// It answers as a real server would: the protocol's methods with their
// positional or named parameters, JSON-RPC batches, the standard error
// codes for an unknown method (-32601), bad parameters (-32602), a line
// that is no JSON (-32700), and the Electrum servers' codes for a bad
// request (1) and an error of the node (2). What it leaves out is listed
// in unsupported (methods.go). It is for tests only.
package electrumtest

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
)

// DefaultPoll is how often the server asks btcd what changed, to notify
// its subscribers, when Config.Poll is zero.
const DefaultPoll = 50 * time.Millisecond

// Config is what a Server serves.
type Config struct {
	// RPC is the btcd node's RPC client (regtest.Node.Client()).
	RPC *rpcclient.Client
	// TLS, when set, makes the server speak TLS (electrums:).
	TLS *tls.Config
	// Poll is how often btcd is asked what changed; DefaultPoll when 0.
	Poll time.Duration
}

// Server is a running Electrum server.
type Server struct {
	rpc  *rpcclient.Client
	ln   net.Listener
	tls  bool
	poll time.Duration

	// The index, read under ixMu and changed only by sync, which
	// syncMu keeps to one at a time. tickets and synced let concurrent
	// requests share a sync (fresh).
	ixMu      sync.RWMutex
	ix        *index
	syncMu    sync.Mutex
	tickets   atomic.Uint64
	synced    uint64
	knownPool map[chainhash.Hash]*wire.MsgTx

	mu       sync.Mutex
	sessions map[*session]bool
	requests map[string]int
	closed   bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// Start indexes the node's chain and serves it on a loopback port of
// its own until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.RPC == nil {
		return nil, errors.New("electrumtest: no btcd RPC client")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	s := &Server{
		rpc: cfg.RPC, ln: ln, tls: cfg.TLS != nil, poll: cfg.Poll, ix: newIndex(),
		sessions: map[*session]bool{}, requests: map[string]int{}, stop: make(chan struct{}),
	}
	if err := s.fresh(); err != nil {
		_ = ln.Close()
		return nil, err
	}
	s.wg.Add(2)
	go s.accept()
	go s.follow()
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving and ends every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	err := s.ln.Close()
	s.DropConnections()
	s.wg.Wait()
	return err
}

// DropConnections ends every client's connection, as a server restart
// or a network failure would; the server goes on accepting new ones.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		_ = ss.nc.Close()
	}
}

// Requests is how many requests for method the server has answered.
func (s *Server) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method]
}

// AllRequests is how many requests the server has answered, of all its
// methods together: what a client cost it, as a benchmark counts.
func (s *Server) AllRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.requests {
		n += c
	}
	return n
}

func (s *Server) counted(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[method]++
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		ss := newSession(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.sessions[ss] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			ss.serve()
			s.mu.Lock()
			delete(s.sessions, ss)
			s.mu.Unlock()
		}()
	}
}

// follow syncs with btcd every poll, which notifies subscribers.
func (s *Server) follow() {
	defer s.wg.Done()
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			_ = s.fresh() // a failure is retried at the next tick
		}
	}
}

// notifyAll tells every session what changed for it.
func (s *Server) notifyAll() {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.notifyChanges()
	}
}
