package actors

import "testing"

func TestLiveQueryListsChangesAfterTheCursorWithTheirResources(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	start := ta.mustQuery(ta.ownerCred(), LiveQuery{}).Body.(LiveView)
	card := ta.createCard(ta.owner, addrs[0])
	ta.setGrant(card.ID, LevelWrite)
	ta.mustOK(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Note: ptr("agent")}})
	v := ta.mustQuery(ta.ownerCred(), LiveQuery{AfterSeq: start.Cursor}).Body.(LiveView)
	if v.Gap || v.Cursor != ta.a.AuditSeq || len(v.Changes) != 3 {
		t.Fatalf("changes after the cursor: %+v", v)
	}
	last := v.Changes[2]
	if last.Kind != EventPortfolioChanged || last.Resource != (ResourceRef{Kind: ResourcePortfolioCard, ID: card.ID}) || !last.ByAgent || last.KeyID != w.KeyID {
		t.Fatalf("the agent's change: %+v", last)
	}
	if v.Changes[0].ByAgent || v.Changes[0].KeyID != "" {
		t.Fatalf("the owner's change: %+v", v.Changes[0])
	}
	// Nothing new: no changes, the same cursor.
	if again := ta.mustQuery(ta.ownerCred(), LiveQuery{AfterSeq: v.Cursor}).Body.(LiveView); again.Gap || len(again.Changes) != 0 || again.Cursor != v.Cursor {
		t.Fatalf("asked again: %+v", again)
	}
	// A key cannot read it, and a cursor from the future is refused.
	if res := ta.query(ta.keyCred(w), LiveQuery{}); res.err == nil || res.err.Code != CodeForbidden {
		t.Fatalf("a key asked: %+v", res)
	}
	if res := ta.query(ta.ownerCred(), LiveQuery{AfterSeq: v.Cursor + 1}); res.err == nil || res.err.Code != CodeValidation {
		t.Fatalf("a future cursor: %+v", res)
	}
}

func TestLiveQuerySaysWhenChangesWereLeftOut(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	card := ta.createCard(ta.owner, addrs[0])
	// More changes than one answer lists.
	for i := 0; i < liveChangesMax+5; i++ {
		card = cardOf(t, ta.mustOK(ta.owner, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Note: ptr(string(rune('a' + i%26)))}}))
	}
	v := ta.mustQuery(ta.ownerCred(), LiveQuery{AfterSeq: 1}).Body.(LiveView)
	if !v.Gap || len(v.Changes) != liveChangesMax || v.Cursor != ta.a.AuditSeq {
		t.Fatalf("a long run of changes: gap %v, %d changes, cursor %d of %d", v.Gap, len(v.Changes), v.Cursor, ta.a.AuditSeq)
	}
	// A cursor whose next changes the bounded log already dropped.
	ta.a.Audit = ta.a.Audit[10:]
	if v := ta.mustQuery(ta.ownerCred(), LiveQuery{AfterSeq: 2}).Body.(LiveView); !v.Gap {
		t.Fatalf("a cursor before the oldest kept change: %+v", v)
	}
	if v := ta.mustQuery(ta.ownerCred(), LiveQuery{AfterSeq: ta.a.Audit[0].Seq - 1}).Body.(LiveView); v.Gap {
		t.Fatalf("a cursor just before the oldest kept change is whole, but says gap")
	}
}
