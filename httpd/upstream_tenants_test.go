package httpd

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// Issue 28, the attack as it was reproduced: the block explorer fails on
// one account's address (as esplora does for an address with too long a
// history), that account views its History three times, and another
// account writes a note. On main the views opened the one breaker and the
// note write answered 503 for 5 s; the write must go through.
func TestOneAccountsFailingAddressLeavesAnotherAccountsNoteWrites(t *testing.T) {
	t.Parallel()
	clk := newClock()
	sim := chain.NewSim(clk.now)
	up := chain.NewHandlerClient(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, csvAddrC) {
			http.Error(w, "Too many history entries", http.StatusInternalServerError)
			return
		}
		sim.ServeHTTP(w, r)
	}), chain.ClientOptions{Retries: -1})
	s := New(Config{Store: newMemoryStore(t), Now: clk.now, PasswordCost: bcrypt.MinCost,
		History: chain.NewHistoryCache(up, time.Minute, clk.now, 100)})
	o := &ownerTest{t: t, server: s, clock: clk, handler: s.PublicHandler(), password: ownerTestPassword}
	attacker, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	victim, err := s.CreateAccount(context.Background(), actors.PlanExtended, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	const ip = "198.51.100.7"
	newCard := func(owner, address string) string {
		status, _, m := o.send(ip, "POST", "/owner/v1/portfolio/cards", owner, map[string]string{"address": address})
		if status != http.StatusCreated {
			t.Fatalf("card %s: %d %v", address, status, m)
		}
		return m["card"].(map[string]any)["id"].(string)
	}
	failing := newCard(attacker.OwnerSecret, csvAddrC)
	newCard(victim.OwnerSecret, csvAddrB)
	txs, err := up.ChainTxs(context.Background(), csvAddrB, "")
	if err != nil || len(txs) == 0 {
		t.Fatalf("the victim's address has no history: %v", err)
	}
	for range 3 {
		status, _, m := o.send(ip, "GET", "/owner/v1/history/cards/"+failing+"/transactions", attacker.OwnerSecret, nil)
		if status != http.StatusOK || m["history_degraded"] != true {
			t.Fatalf("the failing address's History: %d %v", status, m)
		}
	}
	status, retry, m := o.send(ip, "PUT", "/owner/v1/history/notes/"+txs[0].TxID, victim.OwnerSecret, map[string]string{"note": "rent"})
	if status != http.StatusOK {
		t.Fatalf("the other account's note write: %d (Retry-After %d) %v", status, retry, m)
	}
}

// Every 503 the server gives says when to come back: each producer of a
// 503 in httpd, written as the server writes it, has a Retry-After of at
// least a second, and the one whose cause knows its time gives that time.
func TestEvery503SaysWhenToRetry(t *testing.T) {
	t.Parallel()
	open := &chain.UpstreamError{Op: "tx", Err: chain.ErrCircuitOpen, RetryAfter: 3200 * time.Millisecond}
	producers := []struct {
		name  string
		err   error
		retry int // 0: any of at least 1
	}{
		{"no leader", specError(clustererr.ErrNotLeader), 0},
		{"outcome unknown", specError(clustererr.ErrOutcomeUnknown), 0},
		{"a store failure", specError(errors.New("raft: shutdown")), 0},
		{"not an actors.Error", errors.New("anything"), 0},
		{"password hashing busy", errHashingBusy, hashBusyRetrySeconds},
		{"the breaker is open", upstreamUnavailable(open), 4},
		{"the upstream is down", upstreamUnavailable(&chain.UpstreamError{Op: "tx", Status: 502}), 1},
		{"the upstream asks for time", upstreamUnavailable(&chain.UpstreamError{Op: "tx", Status: 503, RetryAfter: 30 * time.Second}), 30},
		{"a feature version some voter lacks", actors.Errorf(actors.CodeHTTPError, "the cluster is being upgraded"), 0},
	}
	for _, p := range producers {
		ctx := limitedReq("/v1/me", "192.0.2.1", "")
		writeError(ctx, p.err)
		got := string(ctx.Response.Header.Peek("Retry-After"))
		if ctx.Response.StatusCode() != http.StatusServiceUnavailable || got == "" || got == "0" {
			t.Errorf("%s: status %d Retry-After %q", p.name, ctx.Response.StatusCode(), got)
			continue
		}
		if p.retry != 0 && got != strconv.Itoa(p.retry) {
			t.Errorf("%s: Retry-After %s, want %d", p.name, got, p.retry)
		}
	}
	// A 503 that is not written by writeError (a page of the site, an
	// answer relayed from the leader) gets one at the listener.
	page := sayWhenToRetry(func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(http.StatusServiceUnavailable) })
	ctx := limitedReq("/", "192.0.2.1", "")
	page(ctx)
	if got := string(ctx.Response.Header.Peek("Retry-After")); got != "1" {
		t.Errorf("a site page's 503: Retry-After %q", got)
	}
}
