package system_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
)

// The Go client (package client) against the real server: its generated
// part is the served document's, and its procedures do what the spec asks.

// The committed api.gen.go is what oapi-codegen makes of the served
// document: a change to the contract without regenerating fails here.
func TestClientIsGeneratedFromTheServedDocument(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	r := do(t, "GET", s.URL+"/v1/openapi.json", "", nil)
	expect(t, r, http.StatusOK, "")
	doc := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(doc, r.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command("go", "tool", "oapi-codegen", "-generate", "types,client", "-package", "client", doc)
	gen.Dir = ".."
	fresh, err := gen.Output()
	if err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, errOutput(err))
	}
	committed, err := os.ReadFile("../client/api.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("client/api.gen.go differs from what the served document generates: run go generate ./client")
	}
}

func TestClientProcedures(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	e := spSetup(t, s, "base", "")
	agent, err := client.New(s.URL, e.write, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if me, err := agent.Me(ctx); err != nil || me.Capability != "write" {
		t.Fatalf("me: %+v %v", me, err)
	}
	// A read key's write is the spec's FORBIDDEN, as an *APIError.
	reader, _ := client.New(s.URL, e.read, nil)
	if _, err := reader.CreatePortfolioCard(ctx, client.CardCreateRequest{Address: owAddress(930)}); !client.IsCode(err, "FORBIDDEN") {
		t.Fatalf("a read key's create: %v", err)
	}

	card, err := agent.CreatePortfolioCard(ctx, client.CardCreateRequest{Address: owAddress(931)})
	if err != nil {
		t.Fatal(err)
	}
	// STALE_VERSION: the owner renames the card after the agent read it;
	// the client re-reads and writes once more.
	read := card.Version
	bump := func(name string) {
		r := do(t, "GET", s.URL+"/owner/v1/portfolio/cards/"+card.Id, e.acct.OwnerSecret, nil)
		v := r.JSON(t)["card"].(map[string]any)["version"]
		expect(t, do(t, "PATCH", s.URL+"/owner/v1/portfolio/cards/"+card.Id, e.acct.OwnerSecret, map[string]any{"expected_version": v, "name": name}), http.StatusOK, "")
	}
	bump("owner's")
	note := "agent's note"
	updated, err := agent.UpdatePortfolioCard(ctx, card.Id, read, client.CardPatchRequest{Note: &note}, nil)
	if err != nil || updated.Note != note || updated.Name != "owner's" {
		t.Fatalf("a stale write retried once: %+v %v", updated, err)
	}
	// A second conflict (someone writes again between the re-read and the
	// retry) is returned, not retried again.
	var patches atomic.Int32
	racing, _ := client.New(s.URL, e.write, &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPatch && patches.Add(1) == 2 {
			bump("owner's again")
		}
		return (&client.RetryTransport{Key: e.write}).RoundTrip(r)
	})})
	other := "lost"
	if _, err := racing.UpdatePortfolioCard(ctx, card.Id, read, client.CardPatchRequest{Note: &other}, nil); !client.IsCode(err, "STALE_VERSION") || patches.Load() != 2 {
		t.Fatalf("a second conflict: %v after %d PATCHes", err, patches.Load())
	}
	// The apply check: a change that no longer applies is not retried.
	if _, err := agent.UpdatePortfolioCard(ctx, card.Id, read, client.CardPatchRequest{Note: &other}, func(now client.Card) bool { return now.Name == "someone else" }); !client.IsCode(err, "STALE_VERSION") {
		t.Fatalf("a conflict the caller does not want retried: %v", err)
	}

	// Transactions: the History walked by next_offset, in order, once each.
	e.grantCard(t, card.Id, "read")
	seen := map[string]bool{}
	n := 0
	for tx, err := range agent.Transactions(ctx, card.Id, 7) {
		if err != nil {
			t.Fatalf("after %d transactions: %v", n, err)
		}
		if seen[tx.Txid] {
			t.Fatalf("transaction %s twice", tx.Txid)
		}
		seen[tx.Txid] = true
		n++
	}
	r := do(t, "GET", s.URL+"/v1/history/cards/"+card.Id+"/transactions?limit=100", e.write, nil)
	all := r.JSON(t)["transactions"].([]any)
	if n != len(all) || n <= 7 {
		t.Fatalf("walked %d transactions in pages of 7; one page of 100 has %d", n, len(all))
	}

	// Events: the cursor is kept, so each poll brings only what is new.
	poller := agent.NewEvents("")
	first, err := poller.Poll(ctx)
	if err != nil || len(first) == 0 {
		t.Fatalf("first poll: %d events, %v", len(first), err)
	}
	if again, err := poller.Poll(ctx); err != nil || len(again) != 0 {
		t.Fatalf("a poll with nothing new: %d events, %v", len(again), err)
	}
	bump("one more change")
	if next, err := poller.Poll(ctx); err != nil || len(next) != 1 {
		t.Fatalf("after one change: %d events, %v", len(next), err)
	}
}

// 429 is honoured: past the per-IP burst the client waits the server's
// Retry-After and every call succeeds.
func TestClientWaitsOutRateLimits(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--limits", "spec")
	a := s.createAccount(t, "base")
	key := s.createKey(t, a, "read")
	var limited atomic.Int32
	counting := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusTooManyRequests {
			limited.Add(1)
		}
		return resp, err
	})
	agent, _ := client.New(s.URL, key, &http.Client{Transport: &client.RetryTransport{Key: key, Base: counting}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 23 {
		if _, err := agent.Me(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if limited.Load() == 0 {
		t.Fatal("no call was rate limited: the test did not reach the limit")
	}
	t.Logf("23 calls, %d answered 429 and retried after Retry-After", limited.Load())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
