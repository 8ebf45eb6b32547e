package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// chainEventJSON is one chain event as the API answers it.
func chainEventJSON(id string) string {
	return fmt.Sprintf(`{"id":%q,"at":"2026-01-02T03:04:05Z","kind":"tx_seen","card_id":"c1","address":"bc1qexample","txid":"%064d","amount_sat":5000}`, id, 1)
}

// The chain activity poller follows the spec's procedure: no since on the
// first poll, the next page at once while has_more is true, the new
// next_since kept after every page (an empty one too: it moves past
// events the key cannot see), a stop at a page that is empty (even one
// that says more, which would otherwise loop), and on an error the
// events and cursor of the pages read before it.
func TestChainActivityPollerFollowsTheCursor(t *testing.T) {
	pages := map[string]string{
		"":   `{"events":[` + chainEventJSON("e1") + `,` + chainEventJSON("e2") + `],"next_since":"c1","has_more":true}`,
		"c1": `{"events":[` + chainEventJSON("e3") + `],"next_since":"c2","has_more":false}`,
		"c2": `{"events":[],"next_since":"c3","has_more":false}`,
		"c3": `{"events":[],"next_since":"c4","has_more":true}`,
		"c4": `{"events":[` + chainEventJSON("e4") + `],"next_since":"c5","has_more":true}`,
	}
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET /v1/history/activity": func(r fakeRequest) (int, string) {
			if page, known := pages[r.Query.Get("since")]; known {
				return 200, page
			}
			return fakeError(422, "VALIDATION")
		},
	})
	ctx := context.Background()
	p := a.NewChainActivity("")
	ids := func(events []ChainEvent) []string {
		var out []string
		for _, e := range events {
			out = append(out, e.Id)
		}
		return out
	}
	events, err := p.Poll(ctx)
	if err != nil || !slices.Equal(ids(events), []string{"e1", "e2", "e3"}) || p.Cursor() != "c2" {
		t.Fatalf("first poll: %v, %v, cursor %q", ids(events), err, p.Cursor())
	}
	if events[0].AmountSat != 5000 || events[0].Kind != "tx_seen" {
		t.Errorf("the first event %+v", events[0])
	}
	if events, err := p.Poll(ctx); err != nil || len(events) != 0 || p.Cursor() != "c3" {
		t.Fatalf("a poll with nothing new: %v, %v, cursor %q (the cursor moves on)", ids(events), err, p.Cursor())
	}
	if events, err := p.Poll(ctx); err != nil || len(events) != 0 || p.Cursor() != "c4" {
		t.Fatalf("an empty page that says more: %v, %v, cursor %q", ids(events), err, p.Cursor())
	}
	events, err = p.Poll(ctx)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "VALIDATION" || !slices.Equal(ids(events), []string{"e4"}) || p.Cursor() != "c5" {
		t.Fatalf("a poll failing on its second page: %v, %v, cursor %q", ids(events), err, p.Cursor())
	}
	var sent []string
	for _, r := range f.sent("GET /v1/history/activity") {
		if !r.Query.Has("since") {
			sent = append(sent, "none")
			continue
		}
		sent = append(sent, r.Query.Get("since"))
	}
	if want := []string{"none", "c1", "c2", "c3", "c4", "c5"}; !slices.Equal(sent, want) {
		t.Errorf("since sent %v, want %v", sent, want)
	}

	// A saved cursor starts a new poller where the last one stopped.
	if events, err := a.NewChainActivity("c1").Poll(ctx); err != nil || !slices.Equal(ids(events), []string{"e3"}) {
		t.Errorf("from a saved cursor: %v, %v", ids(events), err)
	}
}
