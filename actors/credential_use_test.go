package actors

import (
	"bytes"
	"testing"
	"time"
)

// mustTouch applies a touch that must succeed and change nothing but what
// restore puts back: versions, revisions, audit, idempotency records and
// the Sheet budget stay as they were.
func (ta *testAccount) mustTouch(c *Command, restore func()) {
	ta.t.Helper()
	before := ta.snapshot()
	res := ta.run(c)
	if res.err != nil || res.Status != 204 {
		ta.t.Fatalf("%T: result %+v, want 204", c.Payload, res)
	}
	restore()
	if after := ta.snapshot(); !bytes.Equal(before, after) {
		ta.t.Fatalf("%T changed more than the use it records:\nbefore %s\nafter  %s", c.Payload, before, after)
	}
}

func (ta *testAccount) listedKey(id string) KeyView {
	ta.t.Helper()
	for _, k := range ta.mustQuery(ta.ownerCred(), ListKeysQuery{}).Body.(KeyListView).Keys {
		if k.KeyID == id {
			return k
		}
	}
	ta.t.Fatalf("key %s not listed", id)
	return KeyView{}
}

func TestTouchKeyRecordsLastUseAndNothingElse(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelRead)
	other := ta.addKey(LevelWrite)
	if got := bodyJSON(t, ta.listedKey(agent.KeyID)); !bytes.Contains([]byte(got), []byte(`"last_used_at":null`)) {
		t.Fatalf("an unused key must list last_used_at null: %s", got)
	}

	used := ta.at + int64(time.Minute)
	ta.mustTouch(ta.cmdAt(used, agent, &TouchKey{KeyID: agent.KeyID}), func() { ta.a.key(agent.KeyID).LastUsedAt = 0 })
	ta.a.key(agent.KeyID).LastUsedAt = used // put back what mustTouch compared without
	if got := ta.listedKey(agent.KeyID).LastUsedAt; got == nil || *got != formatTime(used) {
		t.Fatalf("last_used_at %v, want %s", got, formatTime(used))
	}
	if got := ta.listedKey(other.KeyID).LastUsedAt; got != nil {
		t.Fatalf("the other key's last_used_at moved: %s", *got)
	}

	// A touch that commits after a later one does not move the time back.
	ta.mustTouch(ta.cmdAt(used-int64(time.Second), agent, &TouchKey{KeyID: agent.KeyID}), func() {})
	if got := ta.a.key(agent.KeyID).LastUsedAt; got != used {
		t.Fatalf("an older touch moved last use to %d, want %d", got, used)
	}

	// Only a key's own use is recorded on it.
	ta.mustFail(CodeForbidden, other, &TouchKey{KeyID: agent.KeyID})
	ta.mustFail(CodeForbidden, ta.owner, &TouchKey{KeyID: agent.KeyID})

	// A touch for a key revoked meanwhile changes nothing.
	ta.mustOK(ta.owner, &RevokeKey{KeyID: agent.KeyID})
	ta.mustFail(CodeUnauthorized, agent, &TouchKey{KeyID: agent.KeyID})
}

func TestTouchSessionExtendsUpToTheCap(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	start := ta.at
	idle, lifetime := int64(30*time.Minute), int64(24*time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("t1"), ExpiresAt: start + idle, ExpiresAtMax: start + lifetime, PasswordHash: testPasswordHash})
	ta.mustOK(systemP, &CreateSession{SessionID: "s2", Hash: hashOf("t2"), ExpiresAt: start + idle, ExpiresAtMax: start + lifetime, PasswordHash: testPasswordHash})
	s1, s2 := Principal{Kind: PrincipalOwner, SessionID: "s1"}, Principal{Kind: PrincipalOwner, SessionID: "s2"}
	session := func() *Session { return ta.a.session("s1") }

	// Used 10 minutes in, the session lives on to 10 minutes + idle.
	at := start + int64(10*time.Minute)
	ta.mustTouch(ta.cmdAt(at, s1, &TouchSession{SessionID: "s1", ExpiresAt: at + idle}), func() { session().ExpiresAt = start + idle })
	session().ExpiresAt = at + idle
	cred := Credential{Kind: CredentialSession, AccountID: ta.id, ID: "s1", Hash: hashOf("t1"), Now: start + idle + 1}
	authOK(t, ta.a, cred) // past the first idle window, still signed in
	if got := ta.mustQuery(cred, CredentialUseQuery{}).Body.(CredentialUseView); got.SessionExpiresAt != at+idle || got.SessionExpiresAtMax != start+lifetime {
		t.Fatalf("CredentialUseQuery %+v", got)
	}

	// An earlier end never shortens it.
	ta.mustTouch(ta.cmdAt(at+1, s1, &TouchSession{SessionID: "s1", ExpiresAt: at}), func() {})
	if got := session().ExpiresAt; got != at+idle {
		t.Fatalf("shortened to %d", got)
	}

	// Never past the cap: used just before each end, the session lives
	// on to its cap and no further, however late the asked end.
	for session().ExpiresAt < start+lifetime {
		next := session().ExpiresAt - 1
		if res := ta.run(ta.cmdAt(next, s1, &TouchSession{SessionID: "s1", ExpiresAt: next + 3*idle})); res.err != nil {
			t.Fatalf("touch at %s: %v", formatTime(next), res.err)
		}
	}
	if got := session().ExpiresAt; got != start+lifetime {
		t.Fatalf("extended to %s, want the cap %s", formatTime(got), formatTime(start+lifetime))
	}
	authFails(t, ta.a, Credential{Kind: CredentialSession, AccountID: ta.id, ID: "s1", Hash: hashOf("t1"), Now: start + lifetime})

	// Only a session's own use extends it.
	ta.mustFailCmd(CodeForbidden, ta.cmdAt(start+int64(time.Minute), s2, &TouchSession{SessionID: "s1", ExpiresAt: start + lifetime}))
	ta.mustFailCmd(CodeForbidden, ta.cmdAt(start+int64(time.Minute), ta.owner, &TouchSession{SessionID: "s2", ExpiresAt: start + lifetime}))

	// An ended session is never revived: s2 was left idle.
	ta.mustFailCmd(CodeUnauthorized, ta.cmdAt(start+idle, s2, &TouchSession{SessionID: "s2", ExpiresAt: start + 2*idle}))
	// An unknown session (signed out, dropped) changes nothing.
	ta.mustFailCmd(CodeUnauthorized, ta.cmdAt(start+idle-1, Principal{Kind: PrincipalOwner, SessionID: "s-gone"}, &TouchSession{SessionID: "s-gone", ExpiresAt: start + 2*idle}))
}

// A session from before idle expiry (no ExpiresAtMax, as in every old log
// entry) keeps the end it was created with.
func TestTouchSessionKeepsAnOldSessionsEnd(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	end := ta.at + int64(24*time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "old", Hash: hashOf("t"), ExpiresAt: end, PasswordHash: testPasswordHash})
	old := Principal{Kind: PrincipalOwner, SessionID: "old"}
	ta.mustTouch(ta.cmd(old, &TouchSession{SessionID: "old", ExpiresAt: end + int64(time.Hour)}), func() {})
	if got := ta.a.session("old").ExpiresAt; got != end {
		t.Fatalf("an old session moved to %d, want %d", got, end)
	}
}

func TestCredentialUseQuery(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelWrite)
	if got := ta.mustQuery(ta.keyCred(agent), CredentialUseQuery{}).Body.(CredentialUseView); got != (CredentialUseView{}) {
		t.Fatalf("an unused key: %+v", got)
	}
	ta.mustOK(agent, &TouchKey{KeyID: agent.KeyID})
	if got := ta.mustQuery(ta.keyCred(agent), CredentialUseQuery{}).Body.(CredentialUseView); got.KeyLastUsedAt != ta.at {
		t.Fatalf("a used key: %+v, want last use %d", got, ta.at)
	}
	// The owner secret has nothing recorded; a wrong key is refused.
	if got := ta.mustQuery(ta.ownerCred(), CredentialUseQuery{}).Body.(CredentialUseView); got != (CredentialUseView{}) {
		t.Fatalf("the owner secret: %+v", got)
	}
	wrong := ta.keyCred(agent)
	wrong.Hash = hashOf("not the key")
	wantCode(t, ta.query(wrong, CredentialUseQuery{}), CodeUnauthorized)
}
