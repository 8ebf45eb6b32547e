package httpd

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// ownerActivity reads every kept line of the account through the owner
// API, newest first.
func (o *ownerTest) ownerActivity(query string) []map[string]any {
	o.t.Helper()
	var lines []map[string]any
	for before := ""; ; {
		m := o.ownerJSON("GET", "/owner/v1/activity?limit=100"+query+before, nil, fasthttp.StatusOK)
		for _, e := range m["entries"].([]any) {
			lines = append(lines, e.(map[string]any))
		}
		next, more := m["next_before"].(float64)
		if !more {
			return lines
		}
		before = fmt.Sprintf("&before=%d", uint64(next))
	}
}

// windows sends each of n windows' requests, then ends the window as the
// flusher would.
func (o *ownerTest) windows(n int, requests func(window int)) {
	for w := range n {
		requests(w)
		o.server.activity.flush()
	}
	o.server.activity.wait()
}

// The attack of issue 28: a write key creates a card, then reads made-up
// IDs for 40 windows. Its create stays in its activity, and the misses are
// one line a window.
func TestAgentCannotEraseItsCreateByReadingUnknownIDs(t *testing.T) {
	o := newOwnerTest(t)
	writer, writerID := o.key("write", "writer")
	if status, _, m := o.send("192.0.2.7", "POST", "/v1/portfolio/cards", writer, map[string]any{"address": csvAddrA, "name": "planted"}); status != fasthttp.StatusCreated {
		t.Fatalf("create: %d %v", status, m)
	}
	o.server.activity.flush()
	o.windows(40, func(w int) {
		for i := range 100 {
			o.send("192.0.2.7", "GET", fmt.Sprintf("/v1/portfolio/cards/made-up-%d-%d", w, i), writer, nil)
		}
	})
	lines := o.ownerActivity("&key_id=" + writerID)
	created, misses := false, 0
	for _, e := range lines {
		created = created || e["op"] == "POST /v1/portfolio/cards" && e["status"] == float64(201)
		if e["op"] == actors.ActivityUnknown {
			misses += int(e["count"].(float64))
		}
	}
	if !created || misses != 4000 || len(lines) > 41+1 {
		t.Fatalf("%d lines kept; the create kept: %v; misses counted: %d", len(lines), created, misses)
	}
}

// A read key's flood of refused writes to made-up IDs (distinct lines,
// 403) keeps to the key's share: another key's lines stay.
func TestOneKeysFloodLeavesAnotherKeysActivity(t *testing.T) {
	o := newOwnerTest(t)
	flooder, flooderID := o.key("read", "flooder")
	quiet, quietID := o.key("read", "quiet")
	for range 3 {
		o.send("192.0.2.8", "GET", "/v1/me", quiet, nil)
	}
	o.server.activity.flush()
	o.windows(40, func(w int) {
		for i := range 100 {
			o.send("192.0.2.7", "PATCH", fmt.Sprintf("/v1/portfolio/cards/made-up-%d-%d", w, i), flooder, map[string]any{"expected_version": "v1", "name": "x"})
		}
	})
	if lines := o.ownerActivity("&key_id=" + quietID); len(lines) != 1 || lines[0]["count"] != float64(3) {
		t.Fatalf("the quiet key's lines after the flood: %v", lines)
	}
	if n := len(o.ownerActivity("&key_id=" + flooderID)); n != 500 {
		t.Fatalf("the flooding key holds %d lines, want its share of 500", n)
	}
}

// gatedStore refuses RecordKeyActivity before the log, as a node does
// while a voter runs an older release, and keeps what it was asked.
type gatedStore struct {
	Store
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
	return g.Store.Propose(ctx, cmd)
}

// During a rolling upgrade the lines go as RecordActivity, with the
// changes' overflow line folded into the one that kind takes.
func TestActivityFallsBackToTheOlderKindDuringAnUpgrade(t *testing.T) {
	store := &gatedStore{Store: newMemoryStore(t)}
	c := newClock()
	l := newActivityLog(store, c.now, nil)
	for i := range actors.ActivityFlushMax {
		l.add(activityLine{account: "a1", keyID: "k1", op: "GET /v1/me", status: 200, resource: actors.ResourceRef{Kind: actors.ResourceSpace, ID: fmt.Sprint(i)}}, 0)
	}
	l.add(activityLine{account: "a1", keyID: "k1", op: "GET /v1/me", status: 200}, 0)
	l.add(activityLine{account: "a1", keyID: "k1", op: "POST /v1/portfolio/cards", status: 201}, 0)
	l.add(activityLine{account: "a1", keyID: "k1", op: "POST /v1/portfolio/cards", status: 201, resource: actors.ResourceRef{ID: "x"}}, 0)
	l.flush()
	l.wait()
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
