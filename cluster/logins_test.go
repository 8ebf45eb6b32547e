package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// inOtherGroups returns two account IDs in different groups of g.
func inOtherGroups(t *testing.T, g *Groups) (string, string) {
	t.Helper()
	first := "login-a"
	ga, _ := g.GroupOf(first)
	for i := 0; ; i++ {
		id := fmt.Sprintf("login-b%d", i)
		if gb, _ := g.GroupOf(id); gb != ga {
			return first, id
		}
	}
}

func withLogin(account, login string) *actors.Command {
	cmd := createAccount(account)
	cmd.Payload.(*actors.CreateAccount).Login = login
	return cmd
}

func setLogin(account, login string) *actors.Command {
	return &actors.Command{Account: account, At: t0 + 1, Principal: ownerPrincipal,
		Payload: &actors.SetLogin{Login: login, ExpectedPasswordHash: "$argon2id$v=19$m=65536,t=3,p=4$" + account}}
}

func wantCode(t *testing.T, res answer, code actors.Code) {
	t.Helper()
	if res.refusal == nil || res.refusal.Code != code {
		t.Fatalf("result %+v, want %s", res, code)
	}
}

// TestShardedLoginsAreUniqueAcrossGroups: a login names one account in the
// whole cluster, whichever groups the accounts are in and whichever node
// leads the meta group: a second account cannot take it, on creation or
// by a change; a changed login and a deleted account's login are free
// again; a command that fails gives back the login it reserved.
func TestShardedLoginsAreUniqueAcrossGroups(t *testing.T) {
	c := startSharded(t, 2)
	c.spreadLeaders()
	a, b := inOtherGroups(t, c.members[0].groups)

	mustSucceed(t, c.propose(withLogin(a, "Shared.Owner")), 201)
	wantCode(t, c.propose(withLogin(b, "shared.owner")), actors.CodeConflict)
	mustSucceed(t, c.propose(createAccount(b)), 201)
	wantCode(t, c.propose(setLogin(b, "SHARED.owner")), actors.CodeConflict)
	c.eventually("sign-in by login finds a", func() error {
		for _, m := range c.running() {
			if id, found := m.groups.AccountForLogin("shared.OWNER"); !found || id != a {
				return fmt.Errorf("%s: %q %v", m.id, id, found)
			}
		}
		return nil
	})

	// a changes its login: the old one is free for b.
	mustSucceed(t, c.propose(setLogin(a, "other.owner")), 200)
	mustSucceed(t, c.propose(setLogin(b, "shared.owner")), 200)
	wantCode(t, c.propose(setLogin(b, "other.owner")), actors.CodeConflict)

	// A create that fails (the account exists) gives its login back.
	wantCode(t, c.propose(withLogin(a, "spare.login")), actors.CodeConflict)
	mustSucceed(t, c.propose(setLogin(b, "spare.login")), 200)

	// A deleted account's login is free.
	mustSucceed(t, c.propose(&actors.Command{Account: a, At: t0 + 2, Principal: ownerPrincipal, Payload: &actors.DeleteAccount{}}), 204)
	third := "login-c"
	mustSucceed(t, c.propose(withLogin(third, "other.owner")), 201)

	var rpcs int64
	for _, m := range c.running() {
		rpcs += m.groups.metaRPCs.Load()
	}
	if rpcs == 0 {
		t.Error("no reservation went through another node's meta leader: the test did not reach the node-to-node path")
	}
}

// TestShardedStaleLoginReservationIsTakenOver: a reservation whose
// account never got the login (its command was lost) stops blocking the
// login once it is old.
func TestShardedStaleLoginReservationIsTakenOver(t *testing.T) {
	c := startSharded(t, 2)
	meta := c.metaLeader()
	ctx := context.Background()
	fresh := metaCommand{Op: "reserve_login", Login: "fresh.login", Account: "lost-1", At: time.Now().UnixNano()}
	old := metaCommand{Op: "reserve_login", Login: "old.login", Account: "lost-2", At: time.Now().Add(-2 * loginReservationTTL).UnixNano()}
	for _, cmd := range []metaCommand{fresh, old} {
		if _, err := meta.groups.proposeMeta(ctx, cmd); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, c.propose(withLogin("taker-1", "fresh.login")), actors.CodeConflict)
	mustSucceed(t, c.propose(withLogin("taker-2", "old.login")), 201)
	if held, _ := meta.groups.meta.fsm.logins.holder("old.login"); held.Account != "taker-2" {
		t.Fatalf("old.login is held by %q", held.Account)
	}
}
