package actors

import (
	"slices"
	"testing"
	"time"
)

func authOK(t *testing.T, a *Account, cred Credential) AuthView {
	t.Helper()
	res := RunQuery(a, cred, AuthQuery{})
	if res.err != nil {
		t.Fatalf("credential %+v rejected: %v", cred, res.err)
	}
	return res.Body.(AuthView)
}

func authFails(t *testing.T, a *Account, cred Credential) {
	t.Helper()
	res := RunQuery(a, cred, AuthQuery{})
	wantCode(t, res, CodeUnauthorized)
	// The message never echoes the presented id.
	if len(cred.ID) >= 4 { // short ids occur in any sentence
		mustNotMention(t, "auth error", res.err.Message, cred.ID)
	}
}

func TestAuthenticateAPIKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	writer := ta.addKey(LevelWrite)
	reader := ta.addKey(LevelRead)

	v := authOK(t, ta.a, ta.keyCred(writer))
	if v.Principal != (Principal{Kind: PrincipalAgent, KeyID: writer.KeyID}) || v.Capability != LevelWrite {
		t.Fatalf("write key authenticates as %+v", v)
	}
	v = authOK(t, ta.a, ta.keyCred(reader))
	if v.Principal != (Principal{Kind: PrincipalAgent, KeyID: reader.KeyID}) || v.Capability != LevelRead {
		t.Fatalf("read key authenticates as %+v", v)
	}

	wrong := ta.keyCred(writer)
	wrong.Hash = hashOf("not the secret")
	authFails(t, ta.a, wrong)

	// Another key's secret under this key's id is wrong too.
	swapped := ta.keyCred(writer)
	swapped.Hash = hashOf(ta.keys[reader.KeyID])
	authFails(t, ta.a, swapped)

	unknown := ta.keyCred(writer)
	unknown.ID = "key-unknown"
	authFails(t, ta.a, unknown)

	ta.mustOK(ta.owner, &RevokeKey{KeyID: writer.KeyID})
	authFails(t, ta.a, ta.keyCred(writer))
	authOK(t, ta.a, ta.keyCred(reader))
}

func TestAuthenticateOwnerSecretAndRotation(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	v := authOK(t, ta.a, ta.ownerCred())
	if v.Principal != (Principal{Kind: PrincipalOwner, SecretEpoch: 0}) || v.Capability != LevelWrite {
		t.Fatalf("owner secret authenticates as %+v", v)
	}
	authFails(t, ta.a, Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: hashOf("wrong")})
	// An API key's secret is not the owner secret.
	agent := ta.addKey(LevelWrite)
	authFails(t, ta.a, Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: hashOf(ta.keys[agent.KeyID])})

	oldOwner := v.Principal
	res := ta.mustOK(oldOwner, &RotateOwnerSecret{NewHash: hashOf("owner-secret-1")})
	if res.Status != 200 {
		t.Fatalf("rotate status %d", res.Status)
	}
	if ta.a.OwnerSecretEpoch != 1 {
		t.Fatalf("epoch %d after one rotation, want 1", ta.a.OwnerSecretEpoch)
	}
	authFails(t, ta.a, ta.ownerCred())
	v = authOK(t, ta.a, Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: hashOf("owner-secret-1")})
	if v.Principal.SecretEpoch != 1 {
		t.Fatalf("new secret authenticates with epoch %d, want 1", v.Principal.SecretEpoch)
	}
	// A command authenticated with the old secret but applied after the
	// rotation fails; one with the new epoch succeeds.
	ta.mustFail(CodeUnauthorized, oldOwner, &CreateKey{KeyID: "k-old", Capability: LevelRead, Hash: hashOf("x")})
	ta.mustOK(v.Principal, &CreateKey{KeyID: "k-new", Capability: LevelRead, Hash: hashOf("y")})

	// A second rotation moves the epoch again and retires the first new secret.
	ta.mustOK(v.Principal, &RotateOwnerSecret{NewHash: hashOf("owner-secret-2")})
	authFails(t, ta.a, Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: hashOf("owner-secret-1")})
	ta.mustFail(CodeUnauthorized, v.Principal, &SetPlan{Plan: PlanExtended})
	if ta.a.OwnerSecretEpoch != 2 {
		t.Fatalf("epoch %d after two rotations", ta.a.OwnerSecretEpoch)
	}
}

func TestAuthenticateSession(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	expires := ta.at + int64(time.Hour)
	// A sign-in proposed with a stale password hash fails.
	ta.mustFail(CodeUnauthorized, systemP, &CreateSession{SessionID: "s1", Hash: hashOf("tok1"), ExpiresAt: expires, PasswordHash: "stale"})
	res := ta.mustOK(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("tok1"), ExpiresAt: expires, PasswordHash: testPasswordHash})
	if res.Status != 201 || res.Body.(SessionView).ExpiresAt != formatTime(expires) {
		t.Fatalf("sign-in result %+v", res)
	}
	cred := Credential{Kind: CredentialSession, AccountID: ta.id, ID: "s1", Hash: hashOf("tok1"), Now: expires - 1}
	v := authOK(t, ta.a, cred)
	if v.Principal != (Principal{Kind: PrincipalOwner, SessionID: "s1"}) || v.Capability != LevelWrite {
		t.Fatalf("session authenticates as %+v", v)
	}
	expired := cred
	expired.Now = expires
	authFails(t, ta.a, expired)
	wrong := cred
	wrong.Hash = hashOf("tok2")
	authFails(t, ta.a, wrong)
	unknown := cred
	unknown.ID = "s-unknown"
	authFails(t, ta.a, unknown)

	// At apply the command's time decides: a session that expired between
	// the edge and the log cannot act.
	sess := v.Principal
	ta.mustOK(sess, &SetPlan{Plan: PlanExtended})
	ta.mustFailCmd(CodeUnauthorized, ta.cmdAt(expires, sess, &SetPlan{Plan: PlanBase}))
}

func TestSignOutEndsOnlyThatSessionAndNoKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelWrite)
	reader := ta.addKey(LevelRead)
	exp := ta.at + int64(time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("t1"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	ta.mustOK(systemP, &CreateSession{SessionID: "s2", Hash: hashOf("t2"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	s1 := Principal{Kind: PrincipalOwner, SessionID: "s1"}

	// Sign-out needs a session: neither the owner secret nor a key can do it.
	ta.mustFail(CodeValidation, ta.owner, &DeleteSession{})
	if res := ta.apply(agent, &DeleteSession{}); res.err == nil {
		t.Fatalf("an API key signed out: %+v", res)
	}
	if len(ta.a.Sessions) != 2 {
		t.Fatalf("sessions %d after refused sign-outs", len(ta.a.Sessions))
	}

	res := ta.mustOK(s1, &DeleteSession{})
	if res.Status != 204 {
		t.Fatalf("sign-out status %d", res.Status)
	}
	authFails(t, ta.a, Credential{Kind: CredentialSession, ID: "s1", Hash: hashOf("t1"), Now: ta.at})
	authOK(t, ta.a, Credential{Kind: CredentialSession, ID: "s2", Hash: hashOf("t2"), Now: ta.at})
	authOK(t, ta.a, ta.keyCred(agent))
	authOK(t, ta.a, ta.keyCred(reader))
	authOK(t, ta.a, ta.ownerCred())
	if len(ta.a.Keys) != 2 {
		t.Fatalf("sign-out removed keys: %d left", len(ta.a.Keys))
	}
	// The ended session can no longer act, not even to sign out again.
	ta.mustFail(CodeUnauthorized, s1, &DeleteSession{})
	ta.createCard(agent, addrs[0])
}

func TestSessionsAreBounded(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	far := ta.at + int64(24*time.Hour)
	// One session that expires soon, then sessionsMax long-lived ones.
	ta.mustOK(systemP, &CreateSession{SessionID: "short", Hash: hashOf("short"), ExpiresAt: ta.at + int64(2*time.Second), PasswordHash: testPasswordHash})
	for i := range sessionsMax {
		id := string(rune('a' + i))
		ta.mustOK(systemP, &CreateSession{SessionID: id, Hash: hashOf(id), ExpiresAt: far, PasswordHash: testPasswordHash})
		if i == 1 {
			// "short" expired before "b" was created and is gone.
			if got := sessionIDs(ta.a); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("sessions after expiry %v, want [a b]", got)
			}
		}
	}
	// The expired one went first, so all sessionsMax long ones remain.
	if len(ta.a.Sessions) != sessionsMax || ta.a.session("short") != nil || ta.a.session("a") == nil {
		t.Fatalf("sessions after expiry pruning: %d, short=%v a=%v", len(ta.a.Sessions), ta.a.session("short"), ta.a.session("a"))
	}
	var want []string
	for i := range sessionsMax {
		want = append(want, string(rune('a'+i)))
	}
	if got := sessionIDs(ta.a); !slices.Equal(got, want) {
		t.Fatalf("sessions %v, want %v", got, want)
	}
	// At the bound the oldest live session is dropped.
	ta.mustOK(systemP, &CreateSession{SessionID: "newest", Hash: hashOf("newest"), ExpiresAt: far, PasswordHash: testPasswordHash})
	want = append(want[1:], "newest")
	if got := sessionIDs(ta.a); !slices.Equal(got, want) {
		t.Fatalf("sessions at the bound %v, want %v", got, want)
	}
	authFails(t, ta.a, Credential{Kind: CredentialSession, ID: "a", Hash: hashOf("a"), Now: ta.at})
	authOK(t, ta.a, Credential{Kind: CredentialSession, ID: "b", Hash: hashOf("b"), Now: ta.at})
}

func sessionIDs(a *Account) []string {
	ids := []string{}
	for _, s := range a.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestAuthenticateSystemAndUnknownKinds(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	v := authOK(t, ta.a, Credential{Kind: CredentialSystem})
	if v.Principal != systemP || v.Capability != LevelWrite {
		t.Fatalf("system authenticates as %+v", v)
	}
	authFails(t, ta.a, Credential{})
	authFails(t, ta.a, Credential{Kind: CredentialKind(99)})
	// stillLive refuses a principal of no known kind.
	ta.mustFail(CodeUnauthorized, Principal{}, &SetPlan{Plan: PlanExtended})
	ta.mustFail(CodeUnauthorized, Principal{Kind: PrincipalKind(42)}, &SetPlan{Plan: PlanExtended})
}

// A key that the edge authenticated but that the owner revoked before the
// command reached the log must not act: a revoke that commits first wins.
func TestKeyRevokedBetweenAuthAndApply(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelWrite)
	card := ta.createCard(agent, addrs[0])
	edge := authOK(t, ta.a, ta.keyCred(agent)).Principal

	ta.mustOK(ta.owner, &RevokeKey{KeyID: agent.KeyID})
	ta.mustFail(CodeUnauthorized, edge, &CreatePortfolioCard{CardID: "card-late", Address: addrs[1]})
	ta.mustFail(CodeUnauthorized, edge, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("late")}})
	ta.mustFail(CodeUnauthorized, edge, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version})
	if len(ta.a.Portfolio) != 1 || ta.a.Portfolio[0].Name != "" {
		t.Fatalf("revoked key changed the portfolio: %+v", ta.a.Portfolio)
	}
	// A new key under the same id with a different secret is a different
	// credential: the old secret stays dead.
	ta.mustOK(ta.owner, &CreateKey{KeyID: agent.KeyID, Capability: LevelWrite, Hash: hashOf("fresh")})
	authFails(t, ta.a, ta.keyCred(agent))
}
