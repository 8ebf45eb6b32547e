package actors

import (
	"bytes"
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
)

const queryTimeout = 5 * time.Second

func newTestRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Shutdown)
	return r
}

// batch builds commands for several accounts with increasing times.
type batch struct {
	at   int64
	cmds []*Command
}

func (b *batch) add(account string, p Principal, payload Payload) *Command {
	if b.at == 0 {
		b.at = t0
	}
	b.at += int64(time.Millisecond)
	c := &Command{Account: account, At: b.at, Principal: p, Payload: payload}
	b.cmds = append(b.cmds, c)
	return c
}

func createAccount(id string) *CreateAccount {
	return &CreateAccount{Plan: PlanBase, OwnerSecretHash: hashOf("os-" + id), PasswordHash: "pw-" + id, FirstSpaceID: "sp-" + id}
}

// applySerially applies cmds with plain Apply, one account state per id:
// what the registry must be equivalent to.
func applySerially(cmds []*Command) ([]Result, map[string]*Account) {
	states := map[string]*Account{}
	results := make([]Result, len(cmds))
	for i, c := range cmds {
		states[c.Account], results[i] = Apply(states[c.Account], c)
		if a := states[c.Account]; a == nil || a.Deleted {
			// The registry holds no missing or deleted accounts.
			delete(states, c.Account)
		}
	}
	return results, states
}

func resultJSON(t *testing.T, r Result) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Status int
		Body   any
		Err    *Error
	}{r.Status, r.Body, r.err})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameResults(t *testing.T, got, want []Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results for %d commands", len(got), len(want))
	}
	for i := range got {
		if g, w := resultJSON(t, got[i]), resultJSON(t, want[i]); g != w {
			t.Fatalf("result %d:\n got  %s\n want %s", i, g, w)
		}
	}
}

func (r *Registry) stateOf(t *testing.T, id string) []byte {
	t.Helper()
	var out []byte
	err := r.Visit(func(a *Account) (*Account, error) {
		if a.ID == id {
			b, err := json.Marshal(a)
			if err != nil {
				return nil, err
			}
			out = b
		}
		return a, nil
	}, queryTimeout)
	if err != nil {
		t.Fatalf("visit: %v", err)
	}
	return out
}

func TestRegistryApplyBatchAcrossAccounts(t *testing.T) {
	reg := newTestRegistry(t)
	wa := Principal{Kind: PrincipalAgent, KeyID: "ka"}
	wb := Principal{Kind: PrincipalAgent, KeyID: "kb"}
	var b batch
	// Interleaved accounts; within each, creation, a key and a card made
	// by that key only work in log order.
	b.add("A", systemP, createAccount("A"))
	b.add("B", systemP, createAccount("B"))
	b.add("A", ownerP, &CreateKey{KeyID: "ka", Capability: LevelWrite, Hash: hashOf("ka")})
	b.add("C", ownerP, &CreateKey{KeyID: "kc", Capability: LevelWrite, Hash: hashOf("kc")}) // unknown account
	b.add("B", ownerP, &CreateKey{KeyID: "kb", Capability: LevelWrite, Hash: hashOf("kb")})
	b.add("A", wa, &CreatePortfolioCard{CardID: "a1", Address: addrs[0]})
	b.add("B", wb, &CreatePortfolioCard{CardID: "b1", Address: addrs[0]}) // same address, other account
	b.add("A", wa, &CreatePortfolioCard{CardID: "a2", Address: addrs[0]}) // duplicate in A
	b.add("A", wa, &UpdatePortfolioCard{CardID: "a1", ExpectedVersion: "v3", CardFields: CardFields{Name: ptr("A one")}})
	b.add("B", wa, &CreatePortfolioCard{CardID: "b2", Address: addrs[1]}) // A's key on B
	b.add("A", ownerP, &RevokeKey{KeyID: "ka"})
	b.add("A", wa, &CreatePortfolioCard{CardID: "a3", Address: addrs[2]}) // revoked earlier in the batch

	want, states := applySerially(b.cmds)
	got := reg.ApplyBatch(b.cmds)
	sameResults(t, got, want)

	// Spot-check the meaning, not only the equivalence.
	codes := make([]Code, len(got))
	for i, r := range got {
		if r.err != nil {
			codes[i] = r.err.Code
		}
	}
	wantCodes := []Code{"", "", "", CodeUnauthorized, "", "", "", CodeDuplicateAddress, "", CodeUnauthorized, "", CodeUnauthorized}
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
	res := reg.Query(context.Background(), Credential{Kind: CredentialAPIKey, AccountID: "B", ID: "kb", Hash: hashOf("kb")}, ListPortfolioQuery{}, queryTimeout)
	if res.err != nil || !slices.Equal(res.Body.(PortfolioListView).IncludedCardIDs, []string{"b1"}) {
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
				b.add(id, ownerP, &CreateKey{KeyID: "k", Capability: LevelWrite, Hash: hashOf(id)})
			default:
				b.add(id, Principal{Kind: PrincipalAgent, KeyID: "k"}, &CreatePortfolioCard{CardID: fmt.Sprintf("c%d", round), Address: addrs[(i+round)%len(addrs)]})
			}
		}
	}
	want, _ := applySerially(b.cmds)
	got := reg.ApplyBatch(b.cmds)
	sameResults(t, got, want)
	for i, r := range got {
		if r.err != nil {
			t.Fatalf("command %d failed: %v", i, r.err)
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
				res := reg.Query(context.Background(), Credential{Kind: CredentialAPIKey, AccountID: id, ID: "k", Hash: hashOf(id)}, MeQuery{}, queryTimeout)
				if res.err != nil {
					t.Errorf("query %s: %v", id, res.err)
					return
				}
			}
		}()
	}
	var more batch
	more.at = b.at
	for i := range accounts {
		id := fmt.Sprintf("acct-%02d", i)
		more.add(id, ownerP, &SetPlan{Plan: PlanExtended})
	}
	for _, r := range reg.ApplyBatch(more.cmds) {
		if r.err != nil {
			t.Fatalf("plan change failed: %v", r.err)
		}
	}
	wg.Wait()
}

func TestRegistryQuery(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
	reg.ApplyBatch(b.cmds)

	cred := Credential{Kind: CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")}
	res := reg.Query(context.Background(), cred, MeQuery{}, queryTimeout)
	if res.err != nil {
		t.Fatal(res.err)
	}
	if me := res.Body.(MeView); me.AccountID != "A" || me.Capability != LevelRead {
		t.Fatalf("/me %+v", me)
	}
	bad := cred
	bad.Hash = hashOf("wrong")
	wantCode(t, reg.Query(context.Background(), bad, MeQuery{}, queryTimeout), CodeUnauthorized)
	unknown := cred
	unknown.AccountID = "nobody"
	wantCode(t, reg.Query(context.Background(), unknown, MeQuery{}, queryTimeout), CodeUnauthorized)
	// A context deadline shorter than the timeout is honoured; a live
	// account still answers well within it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if res := reg.Query(ctx, cred, AuthQuery{}, time.Hour); res.err != nil {
		t.Fatalf("query with a deadline: %v", res.err)
	}
	// A caller whose deadline has passed gets a prompt retryable error
	// instead of an unbounded wait (protoactor treats a negative timeout
	// as no timeout at all).
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	wantCode(t, reg.Query(expired, cred, AuthQuery{}, queryTimeout), CodeHTTPError)
	wantCode(t, reg.Query(context.Background(), cred, AuthQuery{}, -time.Second), CodeHTTPError)
}

// A query that reaches an account's actor after it stopped (the account
// was deleted between the lookup and the send) is answered from dead
// letters at once, not after the query timeout.
func TestRegistryQueryToAStoppedActorAnswersAtOnce(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
	reg.ApplyBatch(b.cmds)
	pid := reg.pid("A")
	if err := reg.system.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	cred := Credential{Kind: CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")}
	start := time.Now()
	wantCode(t, reg.Query(context.Background(), cred, MeQuery{}, time.Hour), CodeUnauthorized)
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
		b.add(id, ownerP, &CreateKey{KeyID: "k" + id, Capability: LevelRead, Hash: hashOf("k" + id)})
	}
	reg.ApplyBatch(b.cmds)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			id := []string{"A", "B"}[i%2]
			cred := Credential{Kind: CredentialAPIKey, AccountID: id, ID: "k" + id, Hash: hashOf("k" + id)}
			for range 200 {
				res := reg.Query(context.Background(), cred, MeQuery{}, queryTimeout)
				if res.err != nil || res.Body.(MeView).AccountID != id {
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
	if err := reg.Visit(func(a *Account) (*Account, error) {
		seen = append(seen, a.ID)
		return a, nil
	}, queryTimeout); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"A", "B", "C"}) {
		t.Fatalf("visited %v, want account-ID order", seen)
	}

	// fn may replace the state.
	if err := reg.Visit(func(a *Account) (*Account, error) {
		if a.ID != "B" {
			return a, nil
		}
		next := *a
		next.Plan = PlanExtended
		return &next, nil
	}, queryTimeout); err != nil {
		t.Fatal(err)
	}
	res := reg.Query(context.Background(), Credential{Kind: CredentialOwnerSecret, AccountID: "B", Hash: hashOf("os-B")}, MeQuery{}, queryTimeout)
	if res.err != nil || res.Body.(MeView).Plan != PlanExtended {
		t.Fatalf("replaced state not used: %+v", res)
	}

	// The first error stops the visit and is returned; the failing
	// account keeps its state.
	boom := errors.New("boom")
	seen = nil
	err := reg.Visit(func(a *Account) (*Account, error) {
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
	res = reg.Query(context.Background(), Credential{Kind: CredentialOwnerSecret, AccountID: "B", Hash: hashOf("os-B")}, MeQuery{}, queryTimeout)
	if res.err != nil {
		t.Fatalf("account B lost its state after a failed visit: %v", res.err)
	}
	// A panic inside fn is an error, not a crash, and the state survives.
	err = reg.Visit(func(a *Account) (*Account, error) { panic("visit panic") }, queryTimeout)
	if err == nil {
		t.Fatalf("a panicking visit returned no error")
	}
	if reg.Len() != 3 {
		t.Fatalf("%d accounts after a failed visit", reg.Len())
	}
	res = reg.Query(context.Background(), Credential{Kind: CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A")}, MeQuery{}, queryTimeout)
	if res.err != nil {
		t.Fatalf("account A after a panicking visit: %v", res.err)
	}
}

func TestRegistryRestore(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("old", systemP, createAccount("old"))
	reg.ApplyBatch(b.cmds)

	// Build two accounts with plain Apply, as a snapshot would hold them.
	var s batch
	s.add("X", systemP, createAccount("X"))
	s.add("X", ownerP, &CreateKey{KeyID: "kx", Capability: LevelWrite, Hash: hashOf("kx")})
	s.add("Y", systemP, createAccount("Y"))
	_, states := applySerially(s.cmds)
	reg.Restore([]*Account{states["X"], states["Y"]})

	if reg.Len() != 2 {
		t.Fatalf("%d accounts after restore", reg.Len())
	}
	wantCode(t, reg.Query(context.Background(), Credential{Kind: CredentialOwnerSecret, AccountID: "old", Hash: hashOf("os-old")}, MeQuery{}, queryTimeout), CodeUnauthorized)
	cred := Credential{Kind: CredentialAPIKey, AccountID: "X", ID: "kx", Hash: hashOf("kx")}
	if res := reg.Query(context.Background(), cred, AuthQuery{}, queryTimeout); res.err != nil {
		t.Fatalf("restored key: %v", res.err)
	}
	// Commands continue on the restored state.
	var next batch
	next.at = s.at
	next.add("X", Principal{Kind: PrincipalAgent, KeyID: "kx"}, &CreatePortfolioCard{CardID: "x1", Address: addrs[0]})
	next.add("old", ownerP, &SetPlan{Plan: PlanExtended})
	res := reg.ApplyBatch(next.cmds)
	if res[0].err != nil {
		t.Fatalf("create on a restored account: %v", res[0].err)
	}
	wantCode(t, res[1], CodeUnauthorized)
	var ids []string
	reg.Visit(func(a *Account) (*Account, error) { ids = append(ids, a.ID); return a, nil }, queryTimeout)
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
	b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelWrite, Hash: hashOf("k")})
	reg.ApplyBatch(b.cmds)

	var d batch
	d.at = b.at
	d.add("A", Principal{Kind: PrincipalAgent, KeyID: "k"}, &DeleteAccount{}) // refused
	res := reg.ApplyBatch(d.cmds)
	wantCode(t, res[0], CodeForbidden)
	if reg.Len() != 2 {
		t.Fatalf("a refused delete removed the account")
	}

	d = batch{at: d.at}
	d.add("A", ownerP, &DeleteAccount{})
	d.add("A", ownerP, &SetPlan{Plan: PlanExtended}) // after the delete, same batch
	res = reg.ApplyBatch(d.cmds)
	if res[0].err != nil || res[0].Status != 204 {
		t.Fatalf("delete %+v", res[0])
	}
	wantCode(t, res[1], CodeUnauthorized)
	if reg.Len() != 1 {
		t.Fatalf("%d accounts after delete", reg.Len())
	}
	for _, cred := range []Credential{
		{Kind: CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")},
		{Kind: CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A")},
	} {
		wantCode(t, reg.Query(context.Background(), cred, AuthQuery{}, queryTimeout), CodeUnauthorized)
	}
	d = batch{at: d.at}
	d.add("A", ownerP, &SetPlan{Plan: PlanExtended})
	wantCode(t, reg.ApplyBatch(d.cmds)[0], CodeUnauthorized)
	if res := reg.Query(context.Background(), Credential{Kind: CredentialOwnerSecret, AccountID: "B", Hash: hashOf("os-B")}, AuthQuery{}, queryTimeout); res.err != nil {
		t.Fatalf("B affected by A's deletion: %v", res.err)
	}
}

// Raft hands the FSM batches whose boundaries differ from node to node,
// so the outcome of a log must not depend on how it is cut into batches.
func TestRegistryResultsDoNotDependOnBatchBoundaries(t *testing.T) {
	scenarios := map[string]func(b *batch){
		"command before create in one batch": func(b *batch) {
			b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
			b.add("A", systemP, createAccount("A"))
			b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
		},
		"delete then create again": func(b *batch) {
			b.add("A", systemP, createAccount("A"))
			b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
			b.add("A", ownerP, &DeleteAccount{})
			b.add("A", systemP, createAccount("A"))
			b.add("A", ownerP, &CreateKey{KeyID: "k2", Capability: LevelRead, Hash: hashOf("k2")})
		},
		"failed create then create": func(b *batch) {
			b.add("A", ownerP, createAccount("A")) // not the system: refused
			b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
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
			var gotSingle []Result
			for _, c := range b.cmds {
				gotSingle = append(gotSingle, single.ApplyBatch([]*Command{c})...)
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
	b.add("B", systemP, &CreateAccount{PasswordHash: "pw"}) // no first space id
	for _, r := range reg.ApplyBatch(b.cmds) {
		if r.err == nil {
			t.Fatalf("a bad create succeeded")
		}
	}
	if reg.Len() != 0 {
		t.Fatalf("failed creates left %d accounts", reg.Len())
	}
	visited := 0
	if err := reg.Visit(func(a *Account) (*Account, error) {
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

type panicPayload struct{}

func (panicPayload) Kind() Kind { return Kind(250) }
func (panicPayload) apply(*Account, *Command, Level) Result {
	panic("rule bug")
}

func TestRegistryRecoversFromAPanickingRule(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, panicPayload{})
	b.add("A", ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
	res := reg.ApplyBatch(b.cmds)
	if res[0].err != nil || res[2].err != nil {
		t.Fatalf("results around the panic: %+v %+v", res[0], res[2])
	}
	wantCode(t, res[1], CodeInternal)
	// The actor kept its state rather than restarting empty.
	if r := reg.Query(context.Background(), Credential{Kind: CredentialAPIKey, AccountID: "A", ID: "k", Hash: hashOf("k")}, AuthQuery{}, queryTimeout); r.err != nil {
		t.Fatalf("state lost after a panic: %v", r.err)
	}
}

func TestSafeApplyRecoversAndKeepsState(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	var reported string
	old := panicHook
	panicHook = func(msg string) { reported = msg }
	defer func() { panicHook = old }()
	next, res := safeApply(ta.a, ta.cmd(ownerP, panicPayload{}))
	if next != ta.a {
		t.Fatalf("safeApply replaced the account after a panic")
	}
	wantCode(t, res, CodeInternal)
	if reported != "rule bug" {
		t.Fatalf("panic hook got %q", reported)
	}
	// Without a panic safeApply is Apply.
	next, res = safeApply(ta.a, ta.cmd(ownerP, &SetPlan{Plan: PlanExtended}))
	if res.err != nil || next.Plan != PlanExtended {
		t.Fatalf("safeApply %+v", res)
	}
}

type panicQuery struct{}

func (panicQuery) run(*Account, Principal, Level, int64) Result { panic("query bug") }

func TestRegistryRecoversFromAPanickingQuery(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	reg.ApplyBatch(b.cmds)
	cred := Credential{Kind: CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A")}
	wantCode(t, reg.Query(context.Background(), cred, panicQuery{}, queryTimeout), CodeInternal)
	if res := reg.Query(context.Background(), cred, MeQuery{}, queryTimeout); res.err != nil || res.Body.(MeView).AccountID != "A" {
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
	visited, err := reg.VisitAll(func(i int, a *Account) error {
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
	if _, err := reg.VisitAll(func(i int, a *Account) error {
		if i == 500 {
			return boom
		}
		return nil
	}, queryTimeout); !errors.Is(err, boom) {
		t.Fatalf("an error of fn: %v", err)
	}
	if _, err := reg.VisitAll(func(int, *Account) error { panic("visit panic") }, queryTimeout); err == nil || !strings.Contains(err.Error(), "visit panic") {
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
		b.add(id, ownerP, &CreateKey{KeyID: "k", Capability: LevelRead, Hash: hashOf("k")})
		r.ApplyBatch(b.cmds)
	}
	cred := func(id string) Credential {
		return Credential{Kind: CredentialAPIKey, AccountID: id, ID: "k", Hash: hashOf("k")}
	}
	if res := r1.Query(context.Background(), cred("A"), MeQuery{}, queryTimeout); res.err != nil {
		t.Fatalf("A in its registry: %v", res.err)
	}
	wantCode(t, r1.Query(context.Background(), cred("B"), MeQuery{}, queryTimeout), CodeUnauthorized)
	pidA := r1.pid("A")
	r1.Shutdown()
	if r1.Len() != 0 {
		t.Fatalf("%d accounts left after Shutdown", r1.Len())
	}
	if err := sys.system.Root.RequestFuture(pidA, &visitMsg{fn: func(a *Account) (*Account, error) { return a, nil }}, time.Second).Wait(); err == nil {
		t.Error("A's actor still answers after its registry shut down")
	}
	if res := r2.Query(context.Background(), cred("B"), MeQuery{}, queryTimeout); res.err != nil {
		t.Fatalf("B after the other registry shut down: %v", res.err)
	}
}

// TestRegistryMovesAccounts: what a slot's move does to a registry. The
// accounts a filter picks are exported, installed whole elsewhere, logins
// included, replacing what was there, and removed from the source.
func TestRegistryMovesAccounts(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	var b batch
	for _, id := range []string{"A", "B", "C"} {
		b.add(id, systemP, createAccount(id))
	}
	b.add("B", ownerP, &SetLogin{Login: "bee@example.com", ExpectedPasswordHash: "pw-B"})
	src.ApplyBatch(b.cmds)
	ids := src.IDs(func(id string) bool { return id != "C" })
	if !slices.Equal(ids, []string{"A", "B"}) {
		t.Fatalf("IDs = %v", ids)
	}
	encoded, err := src.Export(append(ids, "gone"), func(a *Account) ([]byte, error) { return json.Marshal(a) }, queryTimeout)
	if err != nil || len(encoded) != 2 {
		t.Fatalf("Export: %d accounts, %v", len(encoded), err)
	}
	var moved []*Account
	for _, e := range encoded {
		var a Account
		if err := json.Unmarshal(e, &a); err != nil {
			t.Fatal(err)
		}
		moved = append(moved, &a)
	}
	var old batch
	old.add("A", systemP, &CreateAccount{Plan: PlanExtended, OwnerSecretHash: hashOf("other"), PasswordHash: "x", FirstSpaceID: "sp-other"})
	dst.ApplyBatch(old.cmds)
	dst.Install(moved)
	if dst.Len() != 2 || dst.stateOf(t, "A") == nil {
		t.Fatalf("%d accounts installed", dst.Len())
	}
	if !bytes.Equal(dst.stateOf(t, "A"), src.stateOf(t, "A")) || !bytes.Equal(dst.stateOf(t, "B"), src.stateOf(t, "B")) {
		t.Fatal("an installed account differs from its source")
	}
	if id, found := dst.AccountForLogin("BEE@example.com"); !found || id != "B" {
		t.Fatalf("the installed login: %q %v", id, found)
	}
	src.Remove(ids)
	if src.Len() != 1 {
		t.Fatalf("%d accounts left after Remove, want 1", src.Len())
	}
	if _, found := src.AccountForLogin("bee@example.com"); found {
		t.Fatal("a removed account's login still names it")
	}
}
