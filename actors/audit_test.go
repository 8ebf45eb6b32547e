package actors

import (
	"testing"
	"time"
)

func TestCardMutationsRecordPortfolioChanged(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	exp := ta.at + int64(time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "s", Hash: hashOf("s"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	session := Principal{Kind: PrincipalOwner, SessionID: "s"}

	expect := func(who Principal, cardID string, res Result) {
		t.Helper()
		if res.err != nil {
			t.Fatalf("mutation failed: %v", res.err)
		}
		ev := lastEvent(t, ta)
		want := AuditEvent{Seq: ta.a.AuditSeq, At: ta.at, Kind: EventPortfolioChanged, Resource: ResourceRef{Kind: ResourcePortfolioCard, ID: cardID}, Principal: who}
		if ev != want {
			t.Fatalf("event %+v, want %+v", ev, want)
		}
	}
	for _, who := range []Principal{w, ta.owner, session} {
		n := len(ta.a.Audit)
		id := ta.nextCardID()
		res := ta.apply(who, &CreatePortfolioCard{CardID: id, Address: addrs[n%len(addrs)]})
		expect(who, id, res)
		v := cardOf(t, res)
		if who != w {
			ta.setGrant(id, LevelWrite) // records scope_changed
		}
		res = ta.apply(who, &UpdatePortfolioCard{CardID: id, ExpectedVersion: v.Version, CardFields: CardFields{Note: ptr("x")}})
		expect(who, id, res)
		v = cardOf(t, res)
		res = ta.apply(who, &DeletePortfolioCard{CardID: id, ExpectedVersion: v.Version})
		if res.err != nil {
			t.Fatalf("delete failed: %v", res.err)
		}
		// A delete marks the resource removed, with the grant it had.
		want := AuditEvent{Seq: ta.a.AuditSeq, At: ta.at, Kind: EventPortfolioChanged, Resource: ResourceRef{Kind: ResourcePortfolioCard, ID: id}, Principal: who, Removed: true, Granted: LevelWrite}
		if ev := lastEvent(t, ta); ev != want {
			t.Fatalf("delete event %+v, want %+v", ev, want)
		}
	}

	// Events carry only kind, resource, principal and time; their Seqs
	// increase and never repeat.
	for i := 1; i < len(ta.a.Audit); i++ {
		if ta.a.Audit[i].Seq <= ta.a.Audit[i-1].Seq || ta.a.Audit[i].At < ta.a.Audit[i-1].At {
			t.Fatalf("audit not in order at %d: %+v then %+v", i, ta.a.Audit[i-1], ta.a.Audit[i])
		}
	}

	// Failed mutations record nothing (mustFail also checks the state).
	card := ta.createCard(w, addrs[0])
	n := len(ta.a.Audit)
	ta.mustFail(CodeStaleVersion, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: "v0"})
	ta.mustFail(CodeDuplicateAddress, w, &CreatePortfolioCard{CardID: "dup", Address: addrs[0]})
	ta.mustFail(CodeStaleVersion, w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: "v0"})
	if len(ta.a.Audit) != n {
		t.Fatalf("failed mutations recorded events")
	}
	// Key and session management is not a change-feed event.
	ta.addKey(LevelRead)
	ta.mustOK(ta.owner, &RevokeKey{KeyID: w.KeyID})
	if len(ta.a.Audit) != n {
		t.Fatalf("key management recorded events: %+v", ta.a.Audit[n:])
	}
}

func TestAuditIsBoundedByCount(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	// Through the real rules: each grant change records one event.
	total := auditEventsMax + 5
	for i := len(ta.a.Audit); i < total; i++ {
		ta.setGrant(card.ID, Level(i%3))
	}
	if len(ta.a.Audit) != auditEventsMax {
		t.Fatalf("%d events kept, bound is %d", len(ta.a.Audit), auditEventsMax)
	}
	// The newest event is kept and the oldest were dropped.
	if last := lastEvent(t, ta); last.Seq != ta.a.AuditSeq || last.At != ta.at {
		t.Fatalf("newest event %+v not kept", last)
	}
	if first := ta.a.Audit[0]; first.Kind != EventScopeChanged {
		t.Fatalf("oldest kept event %+v should be a grant change; the card creation must be gone", first)
	}
	for i := 1; i < len(ta.a.Audit); i++ {
		if ta.a.Audit[i].Seq != ta.a.Audit[i-1].Seq+1 {
			t.Fatalf("a gap in the kept events at %d", i)
		}
	}
}

func TestAuditIsBoundedByAge(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	start := ta.at
	c1 := ta.createCard(w, addrs[0])
	first := ta.at
	ta.run(ta.cmdAt(start+int64(time.Hour), w, &CreatePortfolioCard{CardID: "card-h", Address: addrs[1]}))
	if len(ta.a.Audit) != 2 {
		t.Fatalf("%d events", len(ta.a.Audit))
	}
	// Exactly auditAgeMax after the first event, the first one goes.
	res := ta.run(ta.cmdAt(first+int64(auditAgeMax), w, &UpdatePortfolioCard{CardID: c1.ID, ExpectedVersion: c1.Version, CardFields: CardFields{Name: ptr("x")}}))
	if res.err != nil {
		t.Fatal(res.err)
	}
	if len(ta.a.Audit) != 2 || ta.a.Audit[0].Resource.ID != "card-h" || ta.a.Audit[1].Resource.ID != c1.ID {
		t.Fatalf("events after a week: %+v", ta.a.Audit)
	}
	// Far later, only the newest event remains.
	v := cardOf(t, res)
	ta.run(ta.cmdAt(first+int64(30*24*time.Hour), w, &UpdatePortfolioCard{CardID: c1.ID, ExpectedVersion: v.Version, CardFields: CardFields{Name: ptr("y")}}))
	if len(ta.a.Audit) != 1 || ta.a.Audit[0].At != ta.at {
		t.Fatalf("events a month later: %+v", ta.a.Audit)
	}
	if auditAgeMax != 7*24*time.Hour {
		t.Fatalf("auditAgeMax %v", auditAgeMax)
	}
}
