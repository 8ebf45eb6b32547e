package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// raft handles a heartbeat on the transport's connection goroutine, not
// on its own, so Shutdown does not wait for one (hashicorp/raft#717). A
// heartbeat that passed raft's check for a shutdown just before one can
// go on after Shutdown has returned and, the node's state being Shutdown
// rather than Follower, store the leader's term: if the node has closed
// its stores by then, raft panics ("failed to save current term:
// closed"), taking down every group of the node in the middle of a clean
// stop. Under load on two cores, one run of the sharded tests in about
// twenty did, stopping a node of a sharded cluster. So each group runs
// raft's heartbeat handler behind a heartbeatGate, which it closes after
// Shutdown and before its stores.

// heartbeatGate lets heartbeats reach raft until it is closed.
type heartbeatGate struct {
	mu     sync.RWMutex
	closed bool
}

// handler is fn behind the gate: once the gate is closed a heartbeat is
// answered with raft.ErrRaftShutdown, as raft answers one after Shutdown,
// and fn never runs.
func (g *heartbeatGate) handler(fn func(raft.RPC)) func(raft.RPC) {
	return func(rpc raft.RPC) {
		g.mu.RLock()
		defer g.mu.RUnlock()
		if g.closed {
			rpc.Respond(nil, raft.ErrRaftShutdown)
			return
		}
		fn(rpc)
	}
}

// close turns away every later heartbeat and returns once the ones
// being handled have returned.
func (g *heartbeatGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// gatedTransport is a transport whose heartbeat handler runs behind
// heartbeats. Everything else, the optional interfaces raft looks for
// included (pre-vote, Close), is the NetworkTransport's own.
type gatedTransport struct {
	*raft.NetworkTransport
	heartbeats *heartbeatGate
}

func (t gatedTransport) SetHeartbeatHandler(fn func(raft.RPC)) {
	t.NetworkTransport.SetHeartbeatHandler(t.heartbeats.handler(fn))
}
