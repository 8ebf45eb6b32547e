package registry

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// loginAccount creates account id with a login.
func loginAccount(id, login string) *actors.CreateAccount {
	p := createAccount(id)
	p.Login = login
	return p
}

func setLogin(id, login string) *actors.SetLogin {
	return &actors.SetLogin{Login: login, ExpectedPasswordHash: "pw-" + id}
}

func wantAccountFor(t *testing.T, reg *Registry, login, want string) {
	t.Helper()
	got, found := reg.AccountForLogin(login)
	if want == "" && found {
		t.Fatalf("login %q names account %s, want none", login, got)
	}
	if want != "" && (!found || got != want) {
		t.Fatalf("login %q names %q (found %v), want %s", login, got, found, want)
	}
}

func TestLoginsAreUniqueAcrossAccountsWithoutRegardToCase(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, loginAccount("A", "Alice@Example.com"))
	b.add("B", systemP, loginAccount("B", "alice@example.COM"))
	b.add("C", systemP, createAccount("C"))
	b.add("C", ownerP, setLogin("C", "ALICE@example.com"))
	b.add("D", systemP, loginAccount("D", "not a login"))
	res := reg.ApplyBatch(b.cmds)
	if refusal(res[0]) != nil {
		t.Fatalf("first account with the login: %v", refusal(res[0]))
	}
	for _, i := range []int{1, 3} {
		err := wantCode(t, res[i], actors.CodeConflict)
		if err.Message != "that login is taken" {
			t.Fatalf("conflict message %q", err.Message)
		}
		mustNotMention(t, "conflict message", err.Message, "A")
	}
	wantCode(t, res[4], actors.CodeValidation)
	if reg.Len() != 2 {
		t.Fatalf("%d accounts, want A and C (a refused creation leaves none)", reg.Len())
	}
	wantAccountFor(t, reg, "aLiCe@eXaMpLe.CoM", "A")
	wantAccountFor(t, reg, "Alice@Example.com", "A")
	wantAccountFor(t, reg, "bob", "")
	wantAccountFor(t, reg, "\u212Aelvin", "")
	var stored actors.Account
	json.Unmarshal(reg.stateOf(t, "A"), &stored)
	if stored.Login != "Alice@Example.com" {
		t.Fatalf("login kept as %q, want it as typed", stored.Login)
	}
}

func TestSetLoginChangesFreesAndKeepsOwnInAnotherCase(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, loginAccount("A", "alice"))
	b.add("B", systemP, createAccount("B"))
	// An account made before logins gets one.
	b.add("B", ownerP, setLogin("B", "bob"))
	// Its own login in another case is no clash.
	b.add("A", ownerP, setLogin("A", "ALICE"))
	// A new login frees the old one, which another account may take.
	b.add("A", ownerP, setLogin("A", "alice2"))
	b.add("B", ownerP, setLogin("B", "Alice"))
	res := reg.ApplyBatch(b.cmds)
	for i, r := range res {
		if refusal(r) != nil {
			t.Fatalf("command %d: %v", i, refusal(r))
		}
	}
	if v := res[3].Body.(actors.LoginView); v.Login != "ALICE" {
		t.Fatalf("login after changing its case %q", v.Login)
	}
	wantAccountFor(t, reg, "alice", "B")
	wantAccountFor(t, reg, "alice2", "A")
	wantAccountFor(t, reg, "bob", "")

	var c batch
	c.at = b.at
	c.add("A", actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k"}, setLogin("A", "eve"))
	c.add("A", ownerP, &actors.SetLogin{Login: "eve", ExpectedPasswordHash: "stale"})
	c.add("A", ownerP, setLogin("A", "e"))
	c.add("A", ownerP, setLogin("A", "alice"))
	res = reg.ApplyBatch(c.cmds)
	wantCode(t, res[0], actors.CodeUnauthorized) // no such key: the credential is checked first
	wantCode(t, res[1], actors.CodeUnauthorized)
	wantCode(t, res[2], actors.CodeValidation)
	wantCode(t, res[3], actors.CodeConflict)
	wantAccountFor(t, reg, "alice2", "A")
	wantAccountFor(t, reg, "eve", "")
}

func TestDeletingAnAccountFreesItsLogin(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, loginAccount("A", "alice"))
	b.add("A", ownerP, &actors.DeleteAccount{})
	b.add("B", systemP, loginAccount("B", "Alice"))
	res := reg.ApplyBatch(b.cmds)
	for i, r := range res {
		if refusal(r) != nil {
			t.Fatalf("command %d: %v", i, refusal(r))
		}
	}
	wantAccountFor(t, reg, "alice", "B")
}

// loginScript contends for a few logins across accounts, with creations,
// changes, deletions and re-creations, and unrelated writes in between.
func loginScript() []*actors.Command {
	var b batch
	accounts := []string{"A", "B", "C", "D"}
	logins := []string{"alice", "Alice", "bob", "BOB", "carol"}
	rng := rand.New(rand.NewPCG(14, 14))
	for _, id := range accounts {
		b.add(id, systemP, loginAccount(id, logins[rng.IntN(len(logins))]))
	}
	for i := range 200 {
		id := accounts[rng.IntN(len(accounts))]
		switch rng.IntN(6) {
		case 0:
			b.add(id, ownerP, &actors.DeleteAccount{})
		case 1:
			b.add(id, systemP, loginAccount(id, logins[rng.IntN(len(logins))]))
		case 2:
			b.add(id, ownerP, &actors.SetPlan{Plan: actors.Plan(rng.IntN(2))})
		case 3:
			b.add(id, ownerP, &actors.CreateKey{KeyID: fmt.Sprint("k", i), Capability: actors.LevelRead, Hash: hashOf(fmt.Sprint(i))})
		default:
			b.add(id, ownerP, setLogin(id, logins[rng.IntN(len(logins))]))
		}
	}
	return b.cmds
}

// Raft may hand each replica the same log in different batches: the
// registries must end with the same results, states and login index.
func TestLoginUniquenessDoesNotDependOnBatchBoundaries(t *testing.T) {
	type outcome struct {
		results []string
		states  map[string]string
		index   map[string]string
	}
	run := func(t *testing.T, split func(n int) []int) outcome {
		reg := newTestRegistry(t)
		cmds := loginScript()
		var results []actors.Result
		cuts := split(len(cmds))
		for i := 0; i+1 < len(cuts); i++ {
			results = append(results, reg.ApplyBatch(cmds[cuts[i]:cuts[i+1]])...)
		}
		o := outcome{states: map[string]string{}, index: map[string]string{}}
		for _, r := range results {
			o.results = append(o.results, resultJSON(t, r))
		}
		for _, id := range []string{"A", "B", "C", "D"} {
			o.states[id] = string(reg.stateOf(t, id))
		}
		for _, login := range []string{"alice", "bob", "carol"} {
			o.index[login], _ = reg.AccountForLogin(login)
		}
		return o
	}
	whole := run(t, func(n int) []int { return []int{0, n} })
	singles := run(t, func(n int) []int {
		cuts := []int{}
		for i := range n + 1 {
			cuts = append(cuts, i)
		}
		return cuts
	})
	rng := rand.New(rand.NewPCG(1, 2))
	random := run(t, func(n int) []int {
		cuts := []int{0}
		for cuts[len(cuts)-1] < n {
			cuts = append(cuts, min(n, cuts[len(cuts)-1]+1+rng.IntN(20)))
		}
		return cuts
	})
	conflicts := 0
	for _, r := range singles.results {
		if strings.Contains(r, "that login is taken") {
			conflicts++
		}
	}
	if conflicts == 0 {
		t.Fatal("the script never contends for a login: it tests nothing")
	}
	for name, o := range map[string]outcome{"one batch": whole, "random batches": random} {
		if !slices.Equal(o.results, singles.results) {
			t.Errorf("%s: results differ from single commands", name)
		}
		for id, s := range singles.states {
			if o.states[id] != s {
				t.Errorf("%s: account %s differs:\n %s\n %s", name, id, o.states[id], s)
			}
		}
		for login, id := range singles.index {
			if o.index[login] != id {
				t.Errorf("%s: login %s names %q, single commands %q", name, login, o.index[login], id)
			}
		}
	}
}

// The index is rebuilt from the accounts' logins on restore, so a replica
// that starts from a snapshot refuses what the one that applied the log
// refuses.
func TestLoginIndexSurvivesASnapshotRoundTrip(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, loginAccount("A", "Alice"))
	b.add("B", systemP, createAccount("B"))
	b.add("B", ownerP, setLogin("B", "bob"))
	reg.ApplyBatch(b.cmds)

	var snapshot [][]byte
	reg.Visit(func(a *actors.Account) (*actors.Account, error) {
		enc, err := json.Marshal(a)
		snapshot = append(snapshot, enc)
		return a, err
	}, queryTimeout)
	var accounts []*actors.Account
	for _, enc := range snapshot {
		var a actors.Account
		if err := json.Unmarshal(enc, &a); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, &a)
	}
	restored := newTestRegistry(t)
	restored.Restore(accounts)
	wantAccountFor(t, restored, "alice", "A")
	wantAccountFor(t, restored, "BOB", "B")

	var c batch
	c.at = b.at
	c.add("C", systemP, loginAccount("C", "ALICE"))
	c.add("B", ownerP, setLogin("B", "Bob"))
	for _, r := range []*Registry{reg, restored} {
		cmds := copyCommands(c.cmds)
		res := r.ApplyBatch(cmds)
		wantCode(t, res[0], actors.CodeConflict)
		if refusal(res[1]) != nil {
			t.Fatalf("own login in another case after restore: %v", refusal(res[1]))
		}
	}
	if a, b := reg.stateOf(t, "B"), restored.stateOf(t, "B"); string(a) != string(b) {
		t.Fatalf("states differ after the same commands:\n %s\n %s", a, b)
	}
	// Restoring replaces the index too.
	restored.Restore(nil)
	wantAccountFor(t, restored, "alice", "")
}

// copyCommands copies commands so that two registries never share the
// payload the registry marks.
func copyCommands(cmds []*actors.Command) []*actors.Command {
	out := make([]*actors.Command, len(cmds))
	for i, c := range cmds {
		cc := *c
		switch p := c.Payload.(type) {
		case *actors.CreateAccount:
			pc := *p
			cc.Payload = &pc
		case *actors.SetLogin:
			pc := *p
			cc.Payload = &pc
		}
		out[i] = &cc
	}
	return out
}

// Should a snapshot ever hold two accounts with one login, the first (in
// snapshot order) keeps it on every replica, and later commands do not
// move it.
func TestRestoreWithAClashingLoginKeepsTheFirst(t *testing.T) {
	reg := newTestRegistry(t)
	var s batch
	s.add("A", systemP, loginAccount("A", "alice"))
	s.add("B", systemP, loginAccount("B", "ALICE"))
	_, states := applySerially(s.cmds) // plain actors.Apply has no index
	reg.Restore([]*actors.Account{states["A"], states["B"]})
	wantAccountFor(t, reg, "alice", "A")
	var c batch
	c.at = s.at
	c.add("B", ownerP, &actors.SetPlan{Plan: actors.PlanExtended})
	reg.ApplyBatch(c.cmds)
	wantAccountFor(t, reg, "alice", "A")
}
