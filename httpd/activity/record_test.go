package activity

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// gatedStore refuses RecordKeyActivity before the log, as a node does
// while a voter runs an older release, and keeps what it was asked.
type gatedStore struct {
	mu    sync.Mutex
	kinds []actors.Kind
	last  *actors.RecordActivity
}

func (g *gatedStore) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	g.mu.Lock()
	g.kinds = append(g.kinds, cmd.Payload.Kind())
	if p, isOld := cmd.Payload.(*actors.RecordActivity); isOld {
		g.last = p
	}
	g.mu.Unlock()
	if cmd.Payload.Kind() == actors.KindRecordKeyActivity {
		return actors.Result{}, &clustererr.VersionError{Want: uint32(actors.KindRecordKeyActivity.FeatureVersion()), Behind: []string{"node-2 (version 2)"}}
	}
	return actors.Result{Status: 200}, nil
}

// During a rolling upgrade the lines go as RecordActivity, with the
// changes' overflow line folded into the one that kind takes.
func TestActivityFallsBackToTheOlderKindDuringAnUpgrade(t *testing.T) {
	store := &gatedStore{}
	l := New(store, time.Now, nil)
	for i := range actors.ActivityFlushMax {
		l.Count(Line{Account: "a1", KeyID: "k1", Op: "GET /v1/me", Status: 200, Resource: actors.ResourceRef{Kind: actors.ResourceSpace, ID: fmt.Sprint(i)}}, 0)
	}
	l.Count(Line{Account: "a1", KeyID: "k1", Op: "GET /v1/me", Status: 200}, 0)
	l.Count(Line{Account: "a1", KeyID: "k1", Op: "POST /v1/portfolio/cards", Status: 201}, 0)
	l.Count(Line{Account: "a1", KeyID: "k1", Op: "POST /v1/portfolio/cards", Status: 201, Resource: actors.ResourceRef{ID: "x"}}, 0)
	l.Flush()
	l.Wait()
	if len(store.kinds) != 2 || store.kinds[0] != actors.KindRecordKeyActivity || store.kinds[1] != actors.KindRecordActivity {
		t.Fatalf("proposed %v", store.kinds)
	}
	others := 0
	for _, e := range store.last.Entries {
		if e.Op == actors.ActivityOtherChanges {
			t.Fatalf("the older kind got an %q line", e.Op)
		}
		if e.Op == actors.ActivityOther {
			others++
			if e.Count != 3 {
				t.Fatalf("the overflow line counts %d requests, want 3", e.Count)
			}
		}
	}
	if others != 1 || len(store.last.Entries) != actors.ActivityFlushMax+1 {
		t.Fatalf("%d entries, %d overflow lines", len(store.last.Entries), others)
	}
}
