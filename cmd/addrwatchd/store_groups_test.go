package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/httpd"
)

// TestGroupMovedSaysWhenToRetry: on a sharded node, a request that meets
// a group led elsewhere (a new leader, or a slot that has just flipped)
// is a 503 with Retry-After, not a bare "no leader".
func TestGroupMovedSaysWhenToRetry(t *testing.T) {
	err := groupMoved(translate(fmt.Errorf("group 1: %w", cluster.ErrNotLeader)))
	var e *actors.Error
	if !errors.As(err, &e) || e.Code != actors.CodeHTTPError || e.RetryAfter != 1 {
		t.Fatalf("not the leader became %v", err)
	}
	if status := httpd.StatusOf(e.Code); status != 503 {
		t.Fatalf("status %d", status)
	}
	other := actors.Errorf(actors.CodeConflict, "taken")
	if got := groupMoved(other); got != other {
		t.Fatalf("another error became %v", got)
	}
	if groupMoved(nil) != nil {
		t.Fatal("no error became one")
	}
}
