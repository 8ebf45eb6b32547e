package actors

import (
	"strings"
	"testing"
)

func TestListSpacesQuery(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	revision := versionString(ta.a.BookmarkRevision)

	// The first Space starts at none: the keys see no Space, but the
	// revision is still the account's.
	for _, key := range []Principal{w, r} {
		res := ta.mustQuery(ta.keyCred(key), ListSpacesQuery{})
		if got := bodyJSON(t, res.Body); got != `{"spaces":[],"bookmark_revision":"`+revision+`"}` {
			t.Fatalf("list before any grant: %s", got)
		}
	}

	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: testFirstSpaceID, Level: LevelWrite})
	// A second Space at read, stored directly (no Space command exists yet).
	ta.a.Spaces = append(ta.a.Spaces, &Space{ID: "space-2", Version: ta.a.nextVersion(), Type: SpaceAltcoin, Name: "Alts", Grant: LevelRead, Cards: []*Card{}})
	ta.a.Spaces = append(ta.a.Spaces, &Space{ID: "space-3", Version: ta.a.nextVersion(), Type: SpaceSheet, Name: "Hidden", Grant: LevelNone, Cards: []*Card{}})

	want := map[Principal]map[string]Level{
		w: {testFirstSpaceID: LevelWrite, "space-2": LevelRead},
		r: {testFirstSpaceID: LevelRead, "space-2": LevelRead},
	}
	for key, access := range want {
		res := ta.mustQuery(ta.keyCred(key), ListSpacesQuery{})
		list := res.Body.(SpaceListView)
		if len(list.Spaces) != len(access) {
			t.Fatalf("%s lists %d spaces, want %d", key.KeyID, len(list.Spaces), len(access))
		}
		for i, s := range list.Spaces {
			stored := ta.a.Spaces[i]
			if s.ID != stored.ID || s.EffectiveAccess != access[s.ID] || s.Version != versionString(stored.Version) || s.Type != stored.Type || s.Name != stored.Name || s.Grant != nil {
				t.Fatalf("%s sees space %+v", key.KeyID, s)
			}
		}
		body := bodyJSON(t, res.Body)
		if strings.Contains(body, "space-3") || strings.Contains(body, "Hidden") || strings.Contains(body, `"grant"`) {
			t.Fatalf("agent space list reveals too much: %s", body)
		}
	}

	owner := ta.mustQuery(ta.ownerCred(), ListSpacesQuery{}).Body.(SpaceListView)
	if len(owner.Spaces) != 3 {
		t.Fatalf("owner lists %d spaces", len(owner.Spaces))
	}
	for i, s := range owner.Spaces {
		if s.EffectiveAccess != LevelWrite || s.Grant == nil || *s.Grant != ta.a.Spaces[i].Grant {
			t.Fatalf("owner sees space %+v", s)
		}
	}

	// After a downgrade only the first stored Space is listed, for anyone.
	ta.mustOK(ta.owner, &SetPlan{Plan: PlanBase})
	for _, cred := range []Credential{ta.keyCred(w), ta.keyCred(r), ta.ownerCred()} {
		list := ta.mustQuery(cred, ListSpacesQuery{}).Body.(SpaceListView)
		if len(list.Spaces) != 1 || list.Spaces[0].ID != testFirstSpaceID {
			t.Fatalf("after downgrade the list is %+v", list.Spaces)
		}
	}
}
