package actors

import "testing"

func panelOf(t *testing.T, ta *testAccount) AccessPanelView {
	t.Helper()
	return ta.mustQuery(ta.ownerCred(), AccessPanelQuery{}).Body.(AccessPanelView)
}

// The panel's promise of what an agent sees is the Agent API's own
// effective_access: the key capability is a ceiling on the grant.
func TestAccessPanelShowsWhatEachKeySees(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	r := ta.addKey(LevelRead)
	w := ta.addKey(LevelWrite)
	none := ta.createCard(ta.owner, addrs[0])
	read := ta.createCard(ta.owner, addrs[1])
	write := ta.createCard(ta.owner, addrs[2])
	ta.setGrant(read.ID, LevelRead)
	ta.setGrant(write.ID, LevelWrite)

	v := panelOf(t, ta)
	if len(v.Keys) != 2 || v.Keys[0].KeyID != r.KeyID || v.Keys[1].KeyID != w.KeyID {
		t.Fatalf("keys %+v", v.Keys)
	}
	want := map[string][3]Level{ // grant, read key, write key
		none.ID:  {LevelNone, LevelNone, LevelNone},
		read.ID:  {LevelRead, LevelRead, LevelRead},
		write.ID: {LevelWrite, LevelRead, LevelWrite},
	}
	if len(v.Cards) != 3 {
		t.Fatalf("cards %+v", v.Cards)
	}
	for _, c := range v.Cards {
		got := [3]Level{c.Grant, c.ReadKeySees, c.WriteKeySees}
		if got != want[c.ID] || c.Detail == "" {
			t.Errorf("card %s: grant/read/write %v, want %v (detail %q)", c.ID, got, want[c.ID], c.Detail)
		}
		// Each promise matches what the key really gets.
		for _, k := range []struct {
			p    Principal
			sees Level
		}{{r, c.ReadKeySees}, {w, c.WriteKeySees}} {
			res := ta.query(ta.keyCred(k.p), GetPortfolioCardQuery{CardID: c.ID})
			switch {
			case k.sees == LevelNone && res.err == nil:
				t.Errorf("card %s: the panel says none, the key reads it", c.ID)
			case k.sees != LevelNone && (res.err != nil || cardOf(t, res).EffectiveAccess != k.sees):
				t.Errorf("card %s: the panel says %v, the key gets %+v", c.ID, k.sees, res)
			}
		}
	}
	if agent := ta.query(ta.keyCred(w), AccessPanelQuery{}); agent.err == nil || agent.err.Code != CodeForbidden {
		t.Fatalf("an API key read the access panel: %+v", agent)
	}
}

// A Space past the plan's count is listed, marked hidden, and no key sees
// it whatever its grant.
func TestAccessPanelMarksSpacesHiddenByThePlan(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: testFirstSpaceID, Level: LevelWrite})
	second := ta.nextSpaceID()
	ta.mustOK(ta.owner, &CreateSpace{SpaceID: second, ExpectedBookmarkRevision: ta.revision(), Name: "Second", Type: SpaceAltcoin})
	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: second, Level: LevelWrite})
	ta.mustOK(ta.owner, &SetPlan{Plan: PlanBase})

	v := panelOf(t, ta)
	if len(v.Spaces) != 2 {
		t.Fatalf("spaces %+v", v.Spaces)
	}
	first, hidden := v.Spaces[0], v.Spaces[1]
	if first.HiddenByPlan || first.WriteKeySees != LevelWrite || first.ReadKeySees != LevelRead {
		t.Errorf("first space %+v", first)
	}
	if !hidden.HiddenByPlan || hidden.Grant != LevelWrite || hidden.WriteKeySees != LevelNone || hidden.Detail != string(SpaceAltcoin) {
		t.Errorf("space past the plan %+v", hidden)
	}
}

// Changing a Space's type clears its grant and says so until the owner
// grants it again.
func TestSpaceTypeChangeMarksTheGrantCleared(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: testFirstSpaceID, Level: LevelRead})
	if panelOf(t, ta).Spaces[0].GrantCleared {
		t.Fatalf("a fresh grant is marked cleared")
	}
	// A rename alone keeps the grant.
	ta.mustOK(ta.owner, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("Renamed")})
	if s := panelOf(t, ta).Spaces[0]; s.GrantCleared || s.Grant != LevelRead {
		t.Fatalf("after a rename %+v", s)
	}
	sheet := SpaceSheet
	ta.mustOK(ta.owner, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Type: &sheet})
	if s := panelOf(t, ta).Spaces[0]; !s.GrantCleared || s.Grant != LevelNone || s.Detail != string(SpaceSheet) {
		t.Fatalf("after a type change %+v", s)
	}
	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: testFirstSpaceID, Level: LevelNone})
	if s := panelOf(t, ta).Spaces[0]; s.GrantCleared {
		t.Fatalf("granting again (even none) leaves the mark: %+v", s)
	}
}
