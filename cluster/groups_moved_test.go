package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// TestGroupMovedSaysNotLeaderTheShardedWay: on a sharded node, a request
// that meets a group led elsewhere (a new leader, or a slot that has just
// flipped) or no directory yet is ErrGroupMoved, which the edge tells as
// a retry in a second; every other error passes unchanged.
func TestGroupMovedSaysNotLeaderTheShardedWay(t *testing.T) {
	for _, err := range []error{fmt.Errorf("group 1: %w", ErrNotLeader), ErrNoDirectory} {
		if got := groupMoved(err); got != clustererr.ErrGroupMoved {
			t.Fatalf("%v became %v", err, got)
		}
	}
	if moved := groupMoved(ErrNotLeader); !errors.Is(moved, ErrNotLeader) {
		t.Fatal("a moved group is not also not-the-leader")
	}
	other := actors.Errorf(actors.CodeConflict, "taken")
	if got := groupMoved(other); got != other {
		t.Fatalf("another error became %v", got)
	}
	if groupMoved(nil) != nil {
		t.Fatal("no error became one")
	}
}
