package httpd

import (
	"fmt"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/activity"
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
		o.server.activity.Flush()
	}
	o.server.activity.Wait()
}

// The attack of issue 28: a write key creates a card, then reads made-up
// IDs for 40 windows. Its create stays in its activity, and the misses are
// one line a window. The test ends 40 windows with Flush; the log's own
// timer may end more (one a second) on a slow machine, each with its line.
func TestAgentCannotEraseItsCreateByReadingUnknownIDs(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	start := time.Now()
	writer, writerID := o.key("write", "writer")
	if status, _, m := o.send("192.0.2.7", "POST", "/v1/portfolio/cards", writer, map[string]any{"address": csvAddrA, "name": "planted"}); status != fasthttp.StatusCreated {
		t.Fatalf("create: %d %v", status, m)
	}
	o.server.activity.Flush()
	o.windows(40, func(w int) {
		for i := range 100 {
			o.send("192.0.2.7", "GET", fmt.Sprintf("/v1/portfolio/cards/made-up-%d-%d", w, i), writer, nil)
		}
	})
	timerWindows := int(time.Since(start)/activity.Window) + 1
	lines := o.ownerActivity("&key_id=" + writerID)
	created, misses := false, 0
	for _, e := range lines {
		created = created || e["op"] == "POST /v1/portfolio/cards" && e["status"] == float64(201)
		if e["op"] == actors.ActivityUnknown {
			misses += int(e["count"].(float64))
		}
	}
	if !created || misses != 4000 || len(lines) > 1+40+timerWindows {
		t.Fatalf("%d lines kept (at most 1 + 40 + %d timer windows); the create kept: %v; misses counted: %d", len(lines), timerWindows, created, misses)
	}
}

// A read key's flood of refused writes to made-up IDs (distinct lines,
// 403) keeps to the key's share: another key's lines stay.
func TestOneKeysFloodLeavesAnotherKeysActivity(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	flooder, flooderID := o.key("read", "flooder")
	quiet, quietID := o.key("read", "quiet")
	for range 3 {
		o.send("192.0.2.8", "GET", "/v1/me", quiet, nil)
	}
	o.server.activity.Flush()
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
