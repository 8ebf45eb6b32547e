package system_test

import (
	"slices"
	"testing"
)

// TestAReadRightAfterAGrantChangeSeesIt: the agent reads its list and /me
// again and again (so the account answers them from what it rendered
// last, actors.Render), the owner changes a grant, and the very next read
// of each sees the change, hiding a card and showing it again; the other
// key of the account, read in between, sees its own scope, not the first
// key's. Over real HTTP against the real server (issue 30's rule: no
// answer served stale, the hidden rules of grants unchanged).
func TestAReadRightAfterAGrantChangeSeesIt(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)
	e := apSetup(t, s, "base")
	a := apID(apOwnerCreateCard(t, s, e.acct, apAddress("grant-at-once-a"), ""))
	b := apID(apOwnerCreateCard(t, s, e.acct, apAddress("grant-at-once-b"), ""))
	apGrantCard(t, s, e.acct, a, "read")
	apGrantCard(t, s, e.acct, b, "read")
	sees := func(key string, want ...string) {
		t.Helper()
		if l := apList(t, s, key); !slices.Equal(sorted(l.ids), sorted(want)) {
			t.Fatalf("the list shows %v, want %v: %s", l.ids, want, l.raw)
		}
		me := apMe(t, s, key)
		if ids := apStrings(t, me["accessible_card_ids"], "accessible_card_ids"); !slices.Equal(sorted(ids), sorted(want)) {
			t.Fatalf("/me shows %v, want %v", ids, want)
		}
	}
	for range 3 {
		sees(e.read, a, b)
	}
	apGrantCard(t, s, e.acct, a, "none")
	sees(e.read, b)
	sees(e.write, b)
	sees(e.read, b)
	apGrantCard(t, s, e.acct, a, "read")
	sees(e.read, a, b)
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
