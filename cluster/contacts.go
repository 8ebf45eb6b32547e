package cluster

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// A leader must know which of its peers are up before it changes the
// membership (membership.go). raft keeps that knowledge to itself: its
// observations report a failed heartbeat and a resumed one, but not a
// successful one, so a peer that died before this leader's first
// heartbeat to it, or whose connection hangs until the RPC times out
// (10 s), looks up. So the node watches the answers itself: the leader
// sends every peer an AppendEntries (a heartbeat, if nothing else) about
// every 50-100 ms, and a peer that answered within upWindow is up.

// upWindow is how recently a peer must have answered the leader to count
// as up: two of raftConfig's heartbeat timeouts, so that a peer busy for
// a moment is not taken for dead, while one that stopped a second ago is.
const upWindow = time.Second

// peerContacts remembers when each peer last answered this node's
// AppendEntries, and the last log index it reported in that answer (a
// heartbeat's answer carries it too). Only a leader sends them, so it
// knows nothing on a follower, and a new leader learns its peers within
// one heartbeat.
type peerContacts struct {
	mu      sync.Mutex
	last    map[raft.ServerID]time.Time
	lastLog map[raft.ServerID]uint64
}

func newPeerContacts() *peerContacts {
	return &peerContacts{last: map[raft.ServerID]time.Time{}, lastLog: map[raft.ServerID]uint64{}}
}

func (c *peerContacts) answered(id raft.ServerID, lastLog uint64) {
	now := time.Now()
	c.mu.Lock()
	c.last[id] = now
	c.lastLog[id] = lastLog
	c.mu.Unlock()
}

// progress returns the last log index id reported in an answer within
// upWindow, and false when it has not answered that recently.
func (c *peerContacts) progress(id raft.ServerID) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, seen := c.last[id]
	if !seen || time.Since(last) > upWindow {
		return 0, false
	}
	return c.lastLog[id], true
}

// up reports whether id answered within upWindow.
func (c *peerContacts) up(id raft.ServerID) bool {
	c.mu.Lock()
	last, seen := c.last[id]
	c.mu.Unlock()
	return seen && time.Since(last) <= upWindow
}

// watch wraps t so that every answered AppendEntries is noted. Everything
// else, the optional interfaces raft looks for included (pre-vote,
// Close), is t's own.
func (c *peerContacts) watch(t gatedTransport) raft.Transport {
	return &contactTransport{gatedTransport: t, contacts: c}
}

type contactTransport struct {
	gatedTransport
	contacts *peerContacts
}

func (t *contactTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil {
		t.contacts.answered(id, resp.LastLog)
	}
	return err
}
