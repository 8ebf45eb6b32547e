package registry

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// TestRegistryMovesAccounts: what a slot's move does to a registry. The
// accounts a filter picks are exported, installed whole elsewhere, logins
// included, replacing what was there, and removed from the source.
func TestRegistryMovesAccounts(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	var b batch
	for _, id := range []string{"A", "B", "C"} {
		b.add(id, systemP, createAccount(id))
	}
	b.add("B", ownerP, &actors.SetLogin{Login: "bee@example.com", ExpectedPasswordHash: "pw-B"})
	src.ApplyBatch(b.cmds)
	ids := src.IDs(func(id string) bool { return id != "C" })
	if !slices.Equal(ids, []string{"A", "B"}) {
		t.Fatalf("IDs = %v", ids)
	}
	encoded, err := src.Export(append(ids, "gone"), func(a *actors.Account) ([]byte, error) { return json.Marshal(a) }, queryTimeout)
	if err != nil || len(encoded) != 2 {
		t.Fatalf("Export: %d accounts, %v", len(encoded), err)
	}
	var moved []*actors.Account
	for _, e := range encoded {
		var a actors.Account
		if err := json.Unmarshal(e, &a); err != nil {
			t.Fatal(err)
		}
		moved = append(moved, &a)
	}
	var old batch
	old.add("A", systemP, &actors.CreateAccount{Plan: actors.PlanExtended, OwnerSecretHash: hashOf("other"), PasswordHash: "x", FirstSpaceID: "sp-other"})
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
