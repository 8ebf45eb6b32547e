package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

func TestRegistryApplyBatchAcrossAccounts(t *testing.T) {
	reg := newTestRegistry(t)
	wa := actors.Principal{Kind: actors.PrincipalAgent, KeyID: "ka"}
	wb := actors.Principal{Kind: actors.PrincipalAgent, KeyID: "kb"}
	var b batch
	// Interleaved accounts; within each, creation, a key and a card made
	// by that key only work in log order.
	b.add("A", systemP, createAccount("A"))
	b.add("B", systemP, createAccount("B"))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "ka", Capability: actors.LevelWrite, Hash: hashOf("ka")})
	b.add("C", ownerP, &actors.CreateKey{KeyID: "kc", Capability: actors.LevelWrite, Hash: hashOf("kc")}) // unknown account
	b.add("B", ownerP, &actors.CreateKey{KeyID: "kb", Capability: actors.LevelWrite, Hash: hashOf("kb")})
	b.add("A", wa, &actors.CreatePortfolioCard{CardID: "a1", Address: addrs[0]})
	b.add("B", wb, &actors.CreatePortfolioCard{CardID: "b1", Address: addrs[0]}) // same address, other account
	b.add("A", wa, &actors.CreatePortfolioCard{CardID: "a2", Address: addrs[0]}) // duplicate in A
	b.add("A", wa, &actors.UpdatePortfolioCard{CardID: "a1", ExpectedVersion: "v3", CardFields: actors.CardFields{Name: ptr("A one")}})
	b.add("B", wa, &actors.CreatePortfolioCard{CardID: "b2", Address: addrs[1]}) // A's key on B
	b.add("A", ownerP, &actors.RevokeKey{KeyID: "ka"})
	b.add("A", wa, &actors.CreatePortfolioCard{CardID: "a3", Address: addrs[2]}) // revoked earlier in the batch

	want, states := applySerially(b.cmds)
	got := reg.ApplyBatch(b.cmds)
	sameResults(t, got, want)

	// Spot-check the meaning, not only the equivalence.
	codes := make([]actors.Code, len(got))
	for i, r := range got {
		if refusal(r) != nil {
			codes[i] = refusal(r).Code
		}
	}
	wantCodes := []actors.Code{"", "", "", actors.CodeUnauthorized, "", "", "", actors.CodeDuplicateAddress, "", actors.CodeUnauthorized, "", actors.CodeUnauthorized}
	if !slices.Equal(codes, wantCodes) {
		t.Fatalf("codes %v, want %v", codes, wantCodes)
	}
	if name := cardOf(t, got[8]).Name; name != "A one" {
		t.Fatalf("in-order patch result %q", name)
	}
	if reg.Len() != 2 {
		t.Fatalf("registry holds %d accounts, want 2 (no account for C)", reg.Len())
	}
	for id, s := range states {
		wantState, _ := json.Marshal(s)
		if got := reg.stateOf(t, id); string(got) != string(wantState) {
			t.Fatalf("account %s state:\n got  %s\n want %s", id, got, wantState)
		}
	}
	// Queries see every command of the batch.
	res := reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "B", ID: "kb", Hash: hashOf("kb")}, actors.ListPortfolioQuery{}, queryTimeout)
	if refusal(res) != nil || !slices.Equal(res.Body.(actors.PortfolioListView).IncludedCardIDs, []string{"b1"}) {
		t.Fatalf("query on B: %+v", res)
	}
}

func TestRegistryApplyBatchManyAccountsInParallel(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	const accounts = 20
	for round := range 4 {
		for i := range accounts {
			id := fmt.Sprintf("acct-%02d", i)
			switch round {
			case 0:
				b.add(id, systemP, createAccount(id))
			case 1:
				b.add(id, ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelWrite, Hash: hashOf(id)})
			default:
				b.add(id, actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k"}, &actors.CreatePortfolioCard{CardID: fmt.Sprintf("c%d", round), Address: addrs[(i+round)%len(addrs)]})
			}
		}
	}
	want, _ := applySerially(b.cmds)
	got := reg.ApplyBatch(b.cmds)
	sameResults(t, got, want)
	for i, r := range got {
		if refusal(r) != nil {
			t.Fatalf("command %d failed: %v", i, refusal(r))
		}
	}
	if reg.Len() != accounts {
		t.Fatalf("%d accounts", reg.Len())
	}

	// Concurrent queries while another batch applies: the race detector
	// checks that actor state is never shared.
	var wg sync.WaitGroup
	for i := range accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("acct-%02d", i)
			for range 20 {
				res := reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialAPIKey, AccountID: id, ID: "k", Hash: hashOf(id)}, actors.MeQuery{}, queryTimeout)
				if refusal(res) != nil {
					t.Errorf("query %s: %v", id, refusal(res))
					return
				}
			}
		}()
	}
	var more batch
	more.at = b.at
	for i := range accounts {
		id := fmt.Sprintf("acct-%02d", i)
		more.add(id, ownerP, &actors.SetPlan{Plan: actors.PlanExtended})
	}
	for _, r := range reg.ApplyBatch(more.cmds) {
		if refusal(r) != nil {
			t.Fatalf("plan change failed: %v", refusal(r))
		}
	}
	wg.Wait()
}

func TestRegistryQuery(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
	reg.ApplyBatch(b.cmds)

	cred := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")}
	res := reg.Query(context.Background(), cred, actors.MeQuery{}, queryTimeout)
	if refusal(res) != nil {
		t.Fatal(refusal(res))
	}
	if me := res.Body.(actors.MeView); me.AccountID != "A" || me.Capability != actors.LevelRead {
		t.Fatalf("/me %+v", me)
	}
	bad := cred
	bad.Hash = hashOf("wrong")
	wantCode(t, reg.Query(context.Background(), bad, actors.MeQuery{}, queryTimeout), actors.CodeUnauthorized)
	unknown := cred
	unknown.AccountID = "nobody"
	wantCode(t, reg.Query(context.Background(), unknown, actors.MeQuery{}, queryTimeout), actors.CodeUnauthorized)
	// A context deadline shorter than the timeout is honoured; a live
	// account still answers well within it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if res := reg.Query(ctx, cred, actors.AuthQuery{}, time.Hour); refusal(res) != nil {
		t.Fatalf("query with a deadline: %v", refusal(res))
	}
	// A caller whose deadline has passed gets a prompt retryable error
	// instead of an unbounded wait (protoactor treats a negative timeout
	// as no timeout at all).
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	wantCode(t, reg.Query(expired, cred, actors.AuthQuery{}, queryTimeout), actors.CodeHTTPError)
	wantCode(t, reg.Query(context.Background(), cred, actors.AuthQuery{}, -time.Second), actors.CodeHTTPError)
}

// A query that reaches an account's actor after it stopped (the account
// was deleted between the lookup and the send) is answered from dead
// letters at once, not after the query timeout.
func TestRegistryQueryToAStoppedActorAnswersAtOnce(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
	reg.ApplyBatch(b.cmds)
	pid := reg.pid("A")
	if err := reg.system.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	cred := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")}
	start := time.Now()
	wantCode(t, reg.Query(context.Background(), cred, actors.MeQuery{}, time.Hour), actors.CodeUnauthorized)
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the query waited %v for a stopped actor", waited)
	}
}

// A caller that gave up does not get its late answer reused by the next
// query: every query sees its own result.
func TestRegistryQueriesSeeTheirOwnResults(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	for _, id := range []string{"A", "B"} {
		b.add(id, systemP, createAccount(id))
		b.add(id, ownerP, &actors.CreateKey{KeyID: "k" + id, Capability: actors.LevelRead, Hash: hashOf("k" + id)})
	}
	reg.ApplyBatch(b.cmds)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			id := []string{"A", "B"}[i%2]
			cred := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: id, ID: "k" + id, Hash: hashOf("k" + id)}
			for range 200 {
				res := reg.Query(context.Background(), cred, actors.MeQuery{}, queryTimeout)
				if refusal(res) != nil || res.Body.(actors.MeView).AccountID != id {
					t.Errorf("query for %s answered %+v", id, res)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestRegistryVisit(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	for _, id := range []string{"C", "A", "B"} {
		b.add(id, systemP, createAccount(id))
	}
	reg.ApplyBatch(b.cmds)

	var seen []string
	if err := reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		seen = append(seen, a.ID)
		return a, nil
	}, queryTimeout); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"A", "B", "C"}) {
		t.Fatalf("visited %v, want account-ID order", seen)
	}

	// fn may replace the state.
	if err := reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		if a.ID != "B" {
			return a, nil
		}
		next := *a
		next.Plan = actors.PlanExtended
		return &next, nil
	}, queryTimeout); err != nil {
		t.Fatal(err)
	}
	res := reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "B", Hash: hashOf("os-B")}, actors.MeQuery{}, queryTimeout)
	if refusal(res) != nil || res.Body.(actors.MeView).Plan != actors.PlanExtended {
		t.Fatalf("replaced state not used: %+v", res)
	}

	// The first error stops the visit and is returned; the failing
	// account keeps its state.
	boom := errors.New("boom")
	seen = nil
	err := reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		seen = append(seen, a.ID)
		if a.ID == "B" {
			return nil, boom
		}
		return a, nil
	}, queryTimeout)
	if !errors.Is(err, boom) {
		t.Fatalf("visit error %v, want %v", err, boom)
	}
	if !slices.Equal(seen, []string{"A", "B"}) {
		t.Fatalf("visit went on after the error: %v", seen)
	}
	res = reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "B", Hash: hashOf("os-B")}, actors.MeQuery{}, queryTimeout)
	if refusal(res) != nil {
		t.Fatalf("account B lost its state after a failed visit: %v", refusal(res))
	}
	// A panic inside fn is an error, not a crash, and the state survives.
	err = reg.Visit(func(a *actors.Account) (*actors.Account, error) { panic("visit panic") }, queryTimeout)
	if err == nil {
		t.Fatalf("a panicking visit returned no error")
	}
	if reg.Len() != 3 {
		t.Fatalf("%d accounts after a failed visit", reg.Len())
	}
	res = reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A")}, actors.MeQuery{}, queryTimeout)
	if refusal(res) != nil {
		t.Fatalf("account A after a panicking visit: %v", refusal(res))
	}
}

func TestRegistryRestore(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("old", systemP, createAccount("old"))
	reg.ApplyBatch(b.cmds)

	// Build two accounts with plain actors.Apply, as a snapshot would hold them.
	var s batch
	s.add("X", systemP, createAccount("X"))
	s.add("X", ownerP, &actors.CreateKey{KeyID: "kx", Capability: actors.LevelWrite, Hash: hashOf("kx")})
	s.add("Y", systemP, createAccount("Y"))
	_, states := applySerially(s.cmds)
	reg.Restore([]*actors.Account{states["X"], states["Y"]})

	if reg.Len() != 2 {
		t.Fatalf("%d accounts after restore", reg.Len())
	}
	wantCode(t, reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "old", Hash: hashOf("os-old")}, actors.MeQuery{}, queryTimeout), actors.CodeUnauthorized)
	cred := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "X", ID: "kx", Hash: hashOf("kx")}
	if res := reg.Query(context.Background(), cred, actors.AuthQuery{}, queryTimeout); refusal(res) != nil {
		t.Fatalf("restored key: %v", refusal(res))
	}
	// Commands continue on the restored state.
	var next batch
	next.at = s.at
	next.add("X", actors.Principal{Kind: actors.PrincipalAgent, KeyID: "kx"}, &actors.CreatePortfolioCard{CardID: "x1", Address: addrs[0]})
	next.add("old", ownerP, &actors.SetPlan{Plan: actors.PlanExtended})
	res := reg.ApplyBatch(next.cmds)
	if refusal(res[0]) != nil {
		t.Fatalf("create on a restored account: %v", refusal(res[0]))
	}
	wantCode(t, res[1], actors.CodeUnauthorized)
	var ids []string
	reg.Visit(func(a *actors.Account) (*actors.Account, error) { ids = append(ids, a.ID); return a, nil }, queryTimeout)
	if !slices.Equal(ids, []string{"X", "Y"}) {
		t.Fatalf("accounts after restore %v", ids)
	}
	// Restoring nothing empties the registry.
	reg.Restore(nil)
	if reg.Len() != 0 {
		t.Fatalf("%d accounts after restoring nothing", reg.Len())
	}
}

func TestRegistryDeleteAccountRemovesIt(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("B", systemP, createAccount("B"))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelWrite, Hash: hashOf("k")})
	reg.ApplyBatch(b.cmds)

	var d batch
	d.at = b.at
	d.add("A", actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k"}, &actors.DeleteAccount{}) // refused
	res := reg.ApplyBatch(d.cmds)
	wantCode(t, res[0], actors.CodeForbidden)
	if reg.Len() != 2 {
		t.Fatalf("a refused delete removed the account")
	}

	d = batch{at: d.at}
	d.add("A", ownerP, &actors.DeleteAccount{})
	d.add("A", ownerP, &actors.SetPlan{Plan: actors.PlanExtended}) // after the delete, same batch
	res = reg.ApplyBatch(d.cmds)
	if refusal(res[0]) != nil || res[0].Status != 204 {
		t.Fatalf("delete %+v", res[0])
	}
	wantCode(t, res[1], actors.CodeUnauthorized)
	if reg.Len() != 1 {
		t.Fatalf("%d accounts after delete", reg.Len())
	}
	for _, cred := range []actors.Credential{
		{Kind: actors.CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")},
		{Kind: actors.CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A")},
	} {
		wantCode(t, reg.Query(context.Background(), cred, actors.AuthQuery{}, queryTimeout), actors.CodeUnauthorized)
	}
	d = batch{at: d.at}
	d.add("A", ownerP, &actors.SetPlan{Plan: actors.PlanExtended})
	wantCode(t, reg.ApplyBatch(d.cmds)[0], actors.CodeUnauthorized)
	if res := reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "B", Hash: hashOf("os-B")}, actors.AuthQuery{}, queryTimeout); refusal(res) != nil {
		t.Fatalf("B affected by A's deletion: %v", refusal(res))
	}
}

// Raft hands the FSM batches whose boundaries differ from node to node,
// so the outcome of a log must not depend on how it is cut into batches.
func TestRegistryResultsDoNotDependOnBatchBoundaries(t *testing.T) {
	scenarios := map[string]func(b *batch){
		"command before create in one batch": func(b *batch) {
			b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
			b.add("A", systemP, createAccount("A"))
			b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
		},
		"delete then create again": func(b *batch) {
			b.add("A", systemP, createAccount("A"))
			b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
			b.add("A", ownerP, &actors.DeleteAccount{})
			b.add("A", systemP, createAccount("A"))
			b.add("A", ownerP, &actors.CreateKey{KeyID: "k2", Capability: actors.LevelRead, Hash: hashOf("k2")})
		},
		"failed create then create": func(b *batch) {
			b.add("A", ownerP, createAccount("A")) // not the system: refused
			b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
			b.add("A", systemP, createAccount("A"))
		},
		"create twice": func(b *batch) {
			b.add("A", systemP, createAccount("A"))
			b.add("A", systemP, createAccount("A"))
		},
	}
	for name, build := range scenarios {
		t.Run(name, func(t *testing.T) {
			var b batch
			build(&b)
			whole := newTestRegistry(t)
			gotWhole := whole.ApplyBatch(b.cmds)
			single := newTestRegistry(t)
			var gotSingle []actors.Result
			for _, c := range b.cmds {
				gotSingle = append(gotSingle, single.ApplyBatch([]*actors.Command{c})...)
			}
			sameResults(t, gotWhole, gotSingle)
			if whole.Len() != single.Len() {
				t.Fatalf("one batch leaves %d accounts, single commands %d", whole.Len(), single.Len())
			}
			if w, s := whole.stateOf(t, "A"), single.stateOf(t, "A"); string(w) != string(s) {
				t.Fatalf("states differ:\n one batch %s\n singles   %s", w, s)
			}
		})
	}
}

// A failed account creation leaves no account behind.
func TestRegistryFailedCreateLeavesNoAccount(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", ownerP, createAccount("A"))
	b.add("B", systemP, &actors.CreateAccount{PasswordHash: "pw"}) // no first space id
	for _, r := range reg.ApplyBatch(b.cmds) {
		if refusal(r) == nil {
			t.Fatalf("a bad create succeeded")
		}
	}
	if reg.Len() != 0 {
		t.Fatalf("failed creates left %d accounts", reg.Len())
	}
	visited := 0
	if err := reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		visited++
		if a == nil {
			return nil, errors.New("visit got a nil account")
		}
		return a, nil
	}, queryTimeout); err != nil {
		t.Fatal(err)
	}
	if visited != 0 {
		t.Fatalf("visited %d accounts", visited)
	}
}

func TestRegistryRecoversFromAPanickingRule(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	// A nil SetPlan: its rule panics on the nil pointer, as a rule with a
	// bug would (a payload's rule is unexported, so this package cannot
	// write a payload of its own that panics).
	b.add("A", ownerP, (*actors.SetPlan)(nil))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
	res := reg.ApplyBatch(b.cmds)
	if refusal(res[0]) != nil || refusal(res[2]) != nil {
		t.Fatalf("results around the panic: %+v %+v", res[0], res[2])
	}
	wantCode(t, res[1], actors.CodeInternal)
	// The actor kept its state rather than restarting empty.
	if r := reg.Query(context.Background(), actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")}, actors.AuthQuery{}, queryTimeout); refusal(r) != nil {
		t.Fatalf("state lost after a panic: %v", refusal(r))
	}
}

// A nil query panics when the actor runs it, as a query with a bug would.
func TestRegistryRecoversFromAPanickingQuery(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	reg.ApplyBatch(b.cmds)
	cred := actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A")}
	wantCode(t, reg.Query(context.Background(), cred, nil, queryTimeout), actors.CodeInternal)
	if res := reg.Query(context.Background(), cred, actors.MeQuery{}, queryTimeout); refusal(res) != nil || res.Body.(actors.MeView).AccountID != "A" {
		t.Fatalf("account after a panicking query: %+v", res)
	}
}

func TestRegistryVisitAllGivesEachAccountItsPlaceInIDOrder(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	const n = 777
	for i := range n {
		b.add(fmt.Sprintf("acct-%04d", n-1-i), systemP, createAccount(fmt.Sprintf("acct-%04d", n-1-i)))
	}
	reg.ApplyBatch(b.cmds)
	ids := make([]string, n)
	visited, err := reg.VisitAll(func(i int, a *actors.Account) error {
		ids[i] = a.ID // distinct places: no lock, and the race detector agrees
		return nil
	}, queryTimeout)
	if err != nil || visited != n {
		t.Fatalf("visited %d, %v", visited, err)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("acct-%04d", i) {
			t.Fatalf("place %d holds %q", i, id)
		}
	}
	boom := errors.New("boom")
	if _, err := reg.VisitAll(func(i int, a *actors.Account) error {
		if i == 500 {
			return boom
		}
		return nil
	}, queryTimeout); !errors.Is(err, boom) {
		t.Fatalf("an error of fn: %v", err)
	}
	if _, err := reg.VisitAll(func(int, *actors.Account) error { panic("visit panic") }, queryTimeout); err == nil || !strings.Contains(err.Error(), "visit panic") {
		t.Fatalf("a panic of fn: %v", err)
	}
}

// TestRegistriesShareASystem: the groups of a sharded node keep their
// accounts in registries of one actor system. Each sees only its own
// accounts, and shutting one down stops its accounts and leaves the
// other's running.
func TestRegistriesShareASystem(t *testing.T) {
	sys := NewSystem(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer sys.Shutdown()
	r1, r2 := sys.NewRegistry(slog.Default()), sys.NewRegistry(slog.Default())
	for id, r := range map[string]*Registry{"A": r1, "B": r2} {
		var b batch
		b.add(id, systemP, createAccount(id))
		b.add(id, ownerP, &actors.CreateKey{KeyID: "k", Capability: actors.LevelRead, Hash: hashOf("k")})
		r.ApplyBatch(b.cmds)
	}
	cred := func(id string) actors.Credential {
		return actors.Credential{Kind: actors.CredentialAPIKey, AccountID: id, ID: "k", Hash: hashOf("k")}
	}
	if res := r1.Query(context.Background(), cred("A"), actors.MeQuery{}, queryTimeout); refusal(res) != nil {
		t.Fatalf("A in its registry: %v", refusal(res))
	}
	wantCode(t, r1.Query(context.Background(), cred("B"), actors.MeQuery{}, queryTimeout), actors.CodeUnauthorized)
	pidA := r1.pid("A")
	r1.Shutdown()
	if r1.Len() != 0 {
		t.Fatalf("%d accounts left after Shutdown", r1.Len())
	}
	if err := sys.system.Root.RequestFuture(pidA, &visitMsg{fn: func(a *actors.Account) (*actors.Account, error) { return a, nil }}, time.Second).Wait(); err == nil {
		t.Error("A's actor still answers after its registry shut down")
	}
	if res := r2.Query(context.Background(), cred("B"), actors.MeQuery{}, queryTimeout); refusal(res) != nil {
		t.Fatalf("B after the other registry shut down: %v", refusal(res))
	}
}
