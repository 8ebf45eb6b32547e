package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
)

// The node directory: which public and admin addresses each node serves,
// and the cluster's forwarding secret. raft knows only raft addresses, so
// each node announces its own through the log when it becomes leader; the
// directory is replicated like everything else and carried in snapshots,
// so every node can find the current leader's listeners.

// NodeAddrs are the listeners a node serves.
type NodeAddrs struct {
	HTTP  string `json:"http"`
	Admin string `json:"admin"`
}

// clusterMeta is the directory's replicated content.
type clusterMeta struct {
	// Secret authenticates requests one node forwards to another, so that a
	// forwarded request is not limited twice and cannot be forged from
	// outside. It is set once, by the first leader.
	Secret string               `json:"secret"`
	Nodes  map[string]NodeAddrs `json:"nodes"`
}

// announcement is the body of a directory log entry.
type announcement struct {
	NodeID string    `json:"node_id"`
	Addrs  NodeAddrs `json:"addrs"`
	Secret string    `json:"secret"` // proposed; kept only if none is set yet
}

type directory struct {
	mu   sync.RWMutex
	meta clusterMeta
}

func (d *directory) apply(body []byte) error {
	var a announcement
	if err := json.Unmarshal(body, &a); err != nil || a.NodeID == "" {
		return fmt.Errorf("cluster: directory entry does not decode: %v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.meta.Nodes == nil {
		d.meta.Nodes = map[string]NodeAddrs{}
	}
	d.meta.Nodes[a.NodeID] = a.Addrs
	if d.meta.Secret == "" {
		d.meta.Secret = a.Secret
	}
	return nil
}

func (d *directory) lookup(id string) (NodeAddrs, string) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.meta.Nodes[id], d.meta.Secret
}

func (d *directory) encode() ([]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return json.Marshal(d.meta)
}

func (d *directory) restore(b []byte) error {
	meta := clusterMeta{Nodes: map[string]NodeAddrs{}}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &meta); err != nil {
			return fmt.Errorf("cluster: directory in snapshot does not decode: %w", err)
		}
	}
	d.mu.Lock()
	d.meta = clusterMeta{Secret: meta.Secret, Nodes: maps.Clone(meta.Nodes)}
	d.mu.Unlock()
	return nil
}

func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("cluster: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}
