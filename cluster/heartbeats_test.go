package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The wrappers between raft and its transport keep what raft looks for
// beyond raft.Transport: without pre-vote a node rejoining after a
// partition would disturb the cluster's leader, and without Close raft's
// Shutdown would leave the transport's listener open.
var (
	_ raft.WithPreVote = gatedTransport{}
	_ raft.WithClose   = gatedTransport{}
	_ raft.WithPreVote = (*contactTransport)(nil)
	_ raft.WithClose   = (*contactTransport)(nil)
)

func heartbeatRPC() (raft.RPC, chan raft.RPCResponse) {
	answers := make(chan raft.RPCResponse, 1)
	return raft.RPC{Command: &raft.AppendEntriesRequest{}, RespChan: answers}, answers
}

// TestHeartbeatGateWaitsForTheHandlerBeforeClosing: closing the gate
// waits for a heartbeat being handled (which may be about to store the
// leader's term), and a heartbeat after it is answered as raft answers
// one after Shutdown, never reaching raft's handler, so a node may close
// its stores once the gate is closed (hashicorp/raft#717).
func TestHeartbeatGateWaitsForTheHandlerBeforeClosing(t *testing.T) {
	gate := &heartbeatGate{}
	entered, release := make(chan struct{}), make(chan struct{})
	handled := 0
	handler := gate.handler(func(rpc raft.RPC) {
		handled++
		close(entered)
		<-release
		rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
	})
	first, firstAnswer := heartbeatRPC()
	go handler(first)
	<-entered

	closed := make(chan struct{})
	go func() {
		gate.close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("the gate closed while a heartbeat was being handled")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("the gate did not close once the heartbeat had been handled")
	}
	if a := <-firstAnswer; a.Error != nil {
		t.Fatalf("the heartbeat handled before the close was answered %v", a.Error)
	}

	late, lateAnswer := heartbeatRPC()
	handler(late)
	if a := <-lateAnswer; !errors.Is(a.Error, raft.ErrRaftShutdown) {
		t.Fatalf("a heartbeat after the close was answered %v, want %v", a.Error, raft.ErrRaftShutdown)
	}
	if handled != 1 {
		t.Fatalf("raft's handler ran %d times, want once: a heartbeat after the close reached it", handled)
	}
}
