package cluster

import (
	"encoding/json"
	"fmt"
)

// Before nodes proved themselves to each other with mutual TLS, a new
// leader announced its public and admin listeners, with a forwarding secret,
// through the log (entries of persistence's cluster format), and the node
// directory built from them rode along in every snapshot as its cluster
// metadata. Nothing needs either any more: a follower forwards to the
// leader's raft address, which raft knows, and trust comes from the node
// connection. Old entries and snapshots are still accepted, so that old
// data dirs start, and what they carry, the secret included, is dropped.

// legacyAnnouncement is what is checked of an old directory entry: one
// that does not decode still stops the node, like any entry that does not.
type legacyAnnouncement struct {
	NodeID string `json:"node_id"`
}

func checkLegacyAnnouncement(body []byte) error {
	var a legacyAnnouncement
	if err := json.Unmarshal(body, &a); err != nil || a.NodeID == "" {
		return fmt.Errorf("cluster: directory entry does not decode: %v", err)
	}
	return nil
}
