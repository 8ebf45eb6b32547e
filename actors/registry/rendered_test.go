package registry

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// A rendered read is kept only until the account applies anything: a read
// that starts after a grant change is acknowledged sees the change at
// once, in both directions, and the key's scope decides what it sees,
// not what an earlier read by another principal rendered (issue 30's
// rule: no answer served stale).
func TestARenderedReadSeesAGrantChangeAtOnce(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "k1", Capability: actors.LevelRead, Hash: hashOf("k1")})
	b.add("A", ownerP, &actors.CreatePortfolioCard{CardID: "c1", Address: addrs[0]})
	b.add("A", ownerP, &actors.CreatePortfolioCard{CardID: "c2", Address: addrs[1]})
	b.add("A", ownerP, &actors.SetGrant{Resource: actors.ResourcePortfolioCard, ID: "c1", Level: actors.LevelRead})
	b.add("A", ownerP, &actors.SetGrant{Resource: actors.ResourcePortfolioCard, ID: "c2", Level: actors.LevelRead})
	for _, r := range reg.ApplyBatch(b.cmds) {
		if refusal(r) != nil {
			t.Fatalf("setup refused: %v", refusal(r))
		}
	}
	key := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "A", ID: "k1", Hash: hashOf("k1"), Now: b.at}
	owner := actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "A", Hash: hashOf("os-A"), Now: b.at}
	included := func(cred actors.Credential) []string {
		t.Helper()
		res := reg.Query(context.Background(), cred, actors.Render(actors.ListPortfolioQuery{}), time.Second)
		if refusal(res) != nil {
			t.Fatalf("list: %v", refusal(res))
		}
		body, rendered := res.Body.(actors.Rendered)
		if !rendered {
			t.Fatalf("the list came back as %T, not rendered", res.Body)
		}
		var v struct {
			IncludedCardIDs []string `json:"included_card_ids"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("rendered list %q: %v", body, err)
		}
		return v.IncludedCardIDs
	}
	grant := func(card string, level actors.Level) {
		t.Helper()
		c := b.add("A", ownerP, &actors.SetGrant{Resource: actors.ResourcePortfolioCard, ID: card, Level: level})
		if r := reg.ApplyBatch([]*actors.Command{c})[0]; refusal(r) != nil {
			t.Fatalf("grant: %v", refusal(r))
		}
	}

	for range 2 { // the second read is the kept one
		if got := included(key); !slices.Equal(got, []string{"c1", "c2"}) {
			t.Fatalf("before any change the key sees %v, want both cards", got)
		}
	}
	grant("c1", actors.LevelNone)
	if got := included(key); !slices.Equal(got, []string{"c2"}) {
		t.Errorf("right after c1's grant went to none the key sees %v, want [c2]", got)
	}
	if got := included(owner); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Errorf("the owner sees %v after the key's kept read, want both cards", got)
	}
	if got := included(key); !slices.Equal(got, []string{"c2"}) {
		t.Errorf("the key sees %v after the owner's read, want [c2]", got)
	}
	grant("c1", actors.LevelRead)
	if got := included(key); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Errorf("right after c1's grant came back the key sees %v, want both cards", got)
	}
}

// A read the account has kept an answer to is answered without the
// account's actor: with the actor stopped, the kept read is still
// answered, and anything else is not (a message to a stopped actor is
// refused). An apply forgets what was kept, so the same read goes to the
// actor again.
func TestAKeptReadIsAnsweredWithoutTheActor(t *testing.T) {
	reg := newTestRegistry(t)
	var b batch
	b.add("A", systemP, createAccount("A"))
	b.add("A", ownerP, &actors.CreateKey{KeyID: "k1", Capability: actors.LevelRead, Hash: hashOf("k1")})
	for _, r := range reg.ApplyBatch(b.cmds) {
		if refusal(r) != nil {
			t.Fatalf("setup refused: %v", refusal(r))
		}
	}
	key := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "A", ID: "k1", Hash: hashOf("k1"), Now: b.at}
	me := actors.Render(actors.MeQuery{})
	read := func(cred actors.Credential) *actors.Error {
		return refusal(reg.Query(context.Background(), cred, me, time.Second))
	}
	if err := read(key); err != nil {
		t.Fatalf("me: %v", err)
	}
	c := b.add("A", ownerP, &actors.CreatePortfolioCard{CardID: "c1", Address: addrs[0]})
	if r := reg.ApplyBatch([]*actors.Command{c})[0]; refusal(r) != nil {
		t.Fatalf("apply: %v", refusal(r))
	}
	if _, kept := reg.account("A").rendered.Kept(key, me.(actors.RenderedQuery)); kept {
		t.Error("the read before an apply is still kept after it")
	}
	if err := read(key); err != nil {
		t.Fatalf("me: %v", err)
	}

	if err := reg.system.Root.StopFuture(reg.account("A").pid).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := read(key); err != nil {
		t.Errorf("the kept read, with the account's actor stopped: %v", err)
	}
	wrong := key
	wrong.Hash = hashOf("not k1")
	if err := read(wrong); err == nil || err.Code != actors.CodeUnauthorized {
		t.Errorf("another secret under k1's ID: %v, want unauthorized", err)
	}
	if err := refusal(reg.Query(context.Background(), key, actors.MeQuery{}, time.Second)); err == nil {
		t.Error("an unrendered read was answered with the account's actor stopped")
	}
}
