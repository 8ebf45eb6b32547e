package httpd

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
)

// consistencyStore is a memoryStore that remembers the read consistency
// of every query, by query type (a rendered one's by the query it renders,
// actors.Render).
type consistencyStore struct {
	*memoryStore
	mu   sync.Mutex
	seen map[string][]ReadConsistency
}

func (c *consistencyStore) Query(ctx context.Context, cred actors.Credential, q actors.Query, rc ReadConsistency) (actors.Result, error) {
	c.mu.Lock()
	name := typeName(q)
	if r, rendered := q.(actors.RenderedQuery); rendered {
		name = typeName(r.Unrendered())
	}
	c.seen[name] = append(c.seen[name], rc)
	c.mu.Unlock()
	return c.memoryStore.Query(ctx, cred, q, rc)
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// newConsistencyServer is a server on a consistencyStore with a History
// of csvAddrA and a base-plan account.
func newConsistencyServer(t *testing.T) (*clock, *consistencyStore, *Server, AccountCreated) {
	t.Helper()
	c := newClock()
	store := &consistencyStore{memoryStore: newMemoryStore(t), seen: map[string][]ReadConsistency{}}
	s := New(Config{Store: store, Now: c.now, PasswordCost: bcrypt.MinCost, History: &csvHistory{now: c.now(), addrs: []csvAddr{{address: csvAddrA, confirmed: 2, age: time.Hour, step: time.Hour}}}})
	created, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	return c, store, s, created
}

// The X-Addrwatch-Read-Consistency header reaches the store as an
// argument on every read route that honours it, and only there: without
// the header, and on the reads a write makes, the store is asked for the
// leader's state.
func TestReadConsistencyReachesTheStore(t *testing.T) {
	t.Parallel()
	_, store, s, created := newConsistencyServer(t)
	h := s.PublicHandler()
	send := func(method, path, header string, body []byte) int {
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(path)
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+created.OwnerSecret)
		if header != "" {
			req.Header.Set(ConsistencyHeader, header)
		}
		if body != nil {
			req.Header.SetContentType("application/json")
			req.SetBody(body)
		}
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 1}, nil)
		h(ctx)
		return ctx.Response.StatusCode()
	}
	if status := send("POST", "/owner/v1/portfolio/cards", "", []byte(`{"address":"`+csvAddrA+`"}`)); status != 201 {
		t.Fatalf("add a card: %d", status)
	}
	reset := func() {
		store.mu.Lock()
		store.seen = map[string][]ReadConsistency{}
		store.mu.Unlock()
	}
	last := func(name string) (ReadConsistency, bool) {
		store.mu.Lock()
		defer store.mu.Unlock()
		seen := store.seen[name]
		if len(seen) == 0 {
			return 0, false
		}
		return seen[len(seen)-1], true
	}
	for _, tc := range []struct{ path, query string }{
		{"/owner/v1/portfolio/cards", "actors.ListPortfolioQuery"},
		{"/owner/v1/history", "actors.HistoryCardsQuery"},
		{"/owner/v1/events", "actors.EventsQuery"},
		{"/owner/v1/activity", "actors.ActivityQuery"},
		{"/owner/v1/labels.jsonl", "actors.LabelsQuery"},
	} {
		for header, want := range map[string]ReadConsistency{"": ReadLeader, "linearizable": ReadLinearizable} {
			reset()
			if status := send("GET", tc.path, header, nil); status != 200 {
				t.Fatalf("GET %s: %d", tc.path, status)
			}
			if got, asked := last(tc.query); !asked || got != want {
				t.Errorf("GET %s with header %q: %s asked with %v (asked: %v), want %v", tc.path, header, tc.query, got, asked, want)
			}
		}
	}
}

// A note write asks the account actor once: the note context also
// authenticates the caller (issue 17 merged the two round trips). A read
// key is refused as for any change, with nothing proposed.
func TestNoteWriteAsksTheActorOnce(t *testing.T) {
	t.Parallel()
	c, store, s, created := newConsistencyServer(t)
	o := &ownerTest{t: t, server: s, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}
	card := o.ownerJSON("POST", "/owner/v1/portfolio/cards", map[string]any{"address": csvAddrA}, 201)["card"].(map[string]any)["id"].(string)
	txs := o.ownerJSON("GET", "/owner/v1/history/cards/"+card+"/transactions", nil, 200)["transactions"].([]any)
	txid := txs[0].(map[string]any)["txid"].(string)
	reader, _ := o.key("read", "r")
	s.use.wait()
	store.mu.Lock()
	store.seen = map[string][]ReadConsistency{}
	store.mu.Unlock()
	o.ownerJSON("PUT", "/owner/v1/history/notes/"+txid, map[string]any{"note": "one trip"}, 200)
	store.mu.Lock()
	auth, context := len(store.seen["actors.AuthQuery"]), len(store.seen["actors.NoteContextQuery"])
	store.mu.Unlock()
	if auth != 0 || context != 1 {
		t.Fatalf("a note write asked AuthQuery %d and NoteContextQuery %d times, want 0 and 1", auth, context)
	}
	status, _, m := o.send("192.0.2.1", "PUT", "/v1/history/notes/"+txid, reader, map[string]any{"note": "read key"})
	if status != fasthttp.StatusForbidden || m["code"] != "FORBIDDEN" {
		t.Fatalf("a read key's note: %d %v", status, m)
	}
}
