package actors

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCreateKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	res := ta.mustOK(ta.owner, &CreateKey{KeyID: "key-a", Name: "my agent", Capability: LevelRead, Hash: hashOf("sa")})
	if res.Status != 201 {
		t.Fatalf("status %d", res.Status)
	}
	v := res.Body.(KeyView)
	if v.KeyID != "key-a" || v.Capability != LevelRead || v.Name != "my agent" || v.CreatedAt != formatTime(ta.at) {
		t.Fatalf("key view %+v", v)
	}
	if _, err := time.Parse(time.RFC3339Nano, v.CreatedAt); err != nil {
		t.Fatalf("created_at %q is not RFC 3339: %v", v.CreatedAt, err)
	}
	got := bodyJSON(t, v)
	if got != fmt.Sprintf(`{"key_id":"key-a","capability":"read","name":"my agent","created_at":%q,"last_used_at":null}`, v.CreatedAt) {
		t.Fatalf("key view JSON %s", got)
	}
	k := ta.a.key("key-a")
	if k == nil || k.Hash != hashOf("sa") || k.Capability != LevelRead || k.CreatedAt != ta.at {
		t.Fatalf("stored key %+v", k)
	}
	// The system (operator tooling, --demo) may create keys as well.
	ta.mustOK(systemP, &CreateKey{KeyID: "key-b", Capability: LevelWrite, Hash: hashOf("sb")})
}

func TestCreateKeyCapability(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	ta.mustOK(ta.owner, &CreateKey{KeyID: "r", Capability: LevelRead, Hash: hashOf("r")})
	ta.mustOK(ta.owner, &CreateKey{KeyID: "w", Capability: LevelWrite, Hash: hashOf("w")})
	for _, c := range []Level{LevelNone, Level(3), Level(255)} {
		ta.mustFail(CodeValidation, ta.owner, &CreateKey{KeyID: "bad", Capability: c, Hash: hashOf("x")})
	}
}

func TestCreateKeyName(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	valid := []string{"", "a", strings.Repeat("n", keyNameCharsMax), strings.Repeat("é", keyNameCharsMax), "bot 1 — prod"}
	for i, name := range valid {
		ta.mustOK(ta.owner, &CreateKey{KeyID: fmt.Sprintf("ok-%d", i), Name: name, Capability: LevelRead, Hash: hashOf(name)})
	}
	invalid := []string{
		strings.Repeat("n", keyNameCharsMax+1),
		strings.Repeat("é", keyNameCharsMax+1),
		"line\nbreak", "tab\there", "nul\x00", "bell\a", "del\x7f",
		"zero\u200bwidth", // an invisible format character
		"bad\xffutf8",
	}
	for i, name := range invalid {
		ta.mustFail(CodeValidation, ta.owner, &CreateKey{KeyID: fmt.Sprintf("bad-%d", i), Name: name, Capability: LevelRead, Hash: hashOf("x")})
	}
	if err := ValidateKeyInput("ok", LevelWrite); err != nil {
		t.Fatalf("ValidateKeyInput rejects a good key: %v", err)
	}
}

func TestCreateKeyIDMustBeFresh(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	ta.mustOK(ta.owner, &CreateKey{KeyID: "key-a", Capability: LevelRead, Hash: hashOf("a")})
	ta.mustFail(CodeConflict, ta.owner, &CreateKey{KeyID: "key-a", Capability: LevelWrite, Hash: hashOf("b")})
	ta.mustFail(CodeConflict, ta.owner, &CreateKey{KeyID: "", Capability: LevelWrite, Hash: hashOf("b")})
}

func TestKeysMax(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	for i := range keysMax {
		ta.mustOK(ta.owner, &CreateKey{KeyID: fmt.Sprintf("k%d", i), Capability: LevelRead, Hash: hashOf(fmt.Sprint(i))})
	}
	ta.mustFail(CodeConflict, ta.owner, &CreateKey{KeyID: "one-too-many", Capability: LevelRead, Hash: hashOf("x")})
	ta.mustOK(ta.owner, &RevokeKey{KeyID: "k7"})
	ta.mustOK(ta.owner, &CreateKey{KeyID: "replacement", Capability: LevelRead, Hash: hashOf("x")})
	if len(ta.a.Keys) != keysMax {
		t.Fatalf("%d keys, want %d", len(ta.a.Keys), keysMax)
	}
}

func TestRevokeKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	a := ta.addKey(LevelWrite)
	b := ta.addKey(LevelWrite)
	c := ta.addKey(LevelRead)
	// A key cannot revoke itself or another key.
	ta.mustFail(CodeForbidden, a, &RevokeKey{KeyID: b.KeyID})
	ta.mustFail(CodeForbidden, a, &RevokeKey{KeyID: a.KeyID})
	ta.mustFail(CodeNotFound, ta.owner, &RevokeKey{KeyID: "key-unknown"})

	res := ta.mustOK(ta.owner, &RevokeKey{KeyID: b.KeyID})
	if res.Status != 204 {
		t.Fatalf("revoke status %d", res.Status)
	}
	if ta.a.key(b.KeyID) != nil {
		t.Fatalf("revoked key still stored")
	}
	// Revoking twice is NOT_FOUND; the others keep working in their order.
	ta.mustFail(CodeNotFound, ta.owner, &RevokeKey{KeyID: b.KeyID})
	keys := ta.mustQuery(ta.ownerCred(), ListKeysQuery{}).Body.(KeyListView).Keys
	if len(keys) != 2 || keys[0].KeyID != a.KeyID || keys[1].KeyID != c.KeyID {
		t.Fatalf("keys after revoke: %+v", keys)
	}
	authOK(t, ta.a, ta.keyCred(a))
	authOK(t, ta.a, ta.keyCred(c))
}

func TestListKeysShowsNoSecrets(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	empty := ta.mustQuery(ta.ownerCred(), ListKeysQuery{})
	if got := bodyJSON(t, empty.Body); got != `{"keys":[]}` {
		t.Fatalf("empty key list %s", got)
	}
	r := ta.addKey(LevelRead)
	w := ta.addKey(LevelWrite)
	res := ta.mustQuery(ta.ownerCred(), ListKeysQuery{})
	keys := res.Body.(KeyListView).Keys
	if len(keys) != 2 || keys[0].KeyID != r.KeyID || keys[0].Capability != LevelRead || keys[1].KeyID != w.KeyID || keys[1].Capability != LevelWrite {
		t.Fatalf("key list %+v", keys)
	}
	body := bodyJSON(t, res.Body)
	for _, secret := range ta.keys {
		h := hashOf(secret)
		mustNotMention(t, "key list", body, secret, hex.EncodeToString(h[:]), "hash")
	}
	// Agents cannot list keys, whatever their capability.
	wantCode(t, ta.query(ta.keyCred(w), ListKeysQuery{}), CodeForbidden)
	wantCode(t, ta.query(ta.keyCred(r), ListKeysQuery{}), CodeForbidden)
	// A session owner can.
	ta.mustOK(systemP, &CreateSession{SessionID: "s", Hash: hashOf("s"), ExpiresAt: ta.at + 1e12, PasswordHash: testPasswordHash})
	ta.mustQuery(Credential{Kind: CredentialSession, ID: "s", Hash: hashOf("s")}, ListKeysQuery{})
}

// A ChangePassword without NewOwnerSecretHash is what every entry written
// before the field existed looks like: it must keep the owner secret, as
// it did when it was written.
func TestPasswordChangeRevokesEveryKeyAndOtherSessions(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	exp := ta.at + int64(time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("t1"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	ta.mustOK(systemP, &CreateSession{SessionID: "s2", Hash: hashOf("t2"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	s1 := Principal{Kind: PrincipalOwner, SessionID: "s1"}

	ta.mustFail(CodeForbidden, w, &ChangePassword{ExpectedPasswordHash: testPasswordHash, NewPasswordHash: "new"})
	// A concurrent change (wrong expected hash) fails and revokes nothing.
	ta.mustFail(CodeUnauthorized, s1, &ChangePassword{ExpectedPasswordHash: "stale", NewPasswordHash: "new"})

	res := ta.mustOK(s1, &ChangePassword{ExpectedPasswordHash: testPasswordHash, NewPasswordHash: "new-hash"})
	if res.Status != 204 {
		t.Fatalf("status %d", res.Status)
	}
	if ta.a.PasswordHash != "new-hash" {
		t.Fatalf("password hash %q", ta.a.PasswordHash)
	}
	authFails(t, ta.a, ta.keyCred(w))
	authFails(t, ta.a, ta.keyCred(r))
	ta.mustFail(CodeUnauthorized, w, &CreatePortfolioCard{CardID: "c", Address: addrs[0]})
	// The session that changed the password stays; the other one ends.
	authOK(t, ta.a, Credential{Kind: CredentialSession, ID: "s1", Hash: hashOf("t1"), Now: ta.at})
	authFails(t, ta.a, Credential{Kind: CredentialSession, ID: "s2", Hash: hashOf("t2"), Now: ta.at})
	authOK(t, ta.a, ta.ownerCred())
	// Sign-in checks the new hash.
	ta.mustFail(CodeUnauthorized, systemP, &CreateSession{SessionID: "s3", Hash: hashOf("t3"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	ta.mustOK(systemP, &CreateSession{SessionID: "s3", Hash: hashOf("t3"), ExpiresAt: exp, PasswordHash: "new-hash"})
	if got := ta.mustQuery(ta.ownerCred(), PasswordHashQuery{}).Body; got != "new-hash" {
		t.Fatalf("PasswordHashQuery = %v", got)
	}

	// Changing it with the owner secret ends every session.
	ta.mustOK(ta.owner, &ChangePassword{ExpectedPasswordHash: "new-hash", NewPasswordHash: "newer"})
	if len(ta.a.Sessions) != 0 {
		t.Fatalf("%d sessions survive a password change by the owner secret", len(ta.a.Sessions))
	}
	// New keys work again after the change.
	w2 := ta.addKey(LevelWrite)
	authOK(t, ta.a, ta.keyCred(w2))
	if ta.a.OwnerSecretEpoch != 0 {
		t.Fatalf("an entry without a new owner secret moved the owner secret epoch to %d", ta.a.OwnerSecretEpoch)
	}
}

// With NewOwnerSecretHash a password change also replaces the owner
// secret: the old one stops working at once, and a command authenticated
// with it but applied after the change fails.
func TestPasswordChangeReplacesTheOwnerSecret(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	exp := ta.at + int64(time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("t1"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	ta.mustOK(systemP, &CreateSession{SessionID: "s2", Hash: hashOf("t2"), ExpiresAt: exp, PasswordHash: testPasswordHash})
	s1 := Principal{Kind: PrincipalOwner, SessionID: "s1"}
	newSecret := hashOf("owner-secret-after-password-change")

	// A stale expected hash fails and replaces nothing.
	ta.mustFail(CodeUnauthorized, s1, &ChangePassword{ExpectedPasswordHash: "stale", NewPasswordHash: "new", NewOwnerSecretHash: &newSecret})
	authOK(t, ta.a, ta.ownerCred())

	res := ta.mustOK(s1, &ChangePassword{ExpectedPasswordHash: testPasswordHash, NewPasswordHash: "new-hash", NewOwnerSecretHash: &newSecret})
	if res.Status != 200 {
		t.Fatalf("status %d, want 200 (the edge adds the new owner secret)", res.Status)
	}
	authFails(t, ta.a, ta.ownerCred())
	v := authOK(t, ta.a, Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: newSecret})
	if v.Principal.SecretEpoch != 1 {
		t.Fatalf("new owner secret has epoch %d, want 1", v.Principal.SecretEpoch)
	}
	ta.mustFail(CodeUnauthorized, ta.owner, &SetPlan{Plan: PlanExtended})
	authFails(t, ta.a, ta.keyCred(w))
	authOK(t, ta.a, Credential{Kind: CredentialSession, ID: "s1", Hash: hashOf("t1"), Now: ta.at})
	authFails(t, ta.a, Credential{Kind: CredentialSession, ID: "s2", Hash: hashOf("t2"), Now: ta.at})
	if ta.a.PasswordHash != "new-hash" {
		t.Fatalf("password hash %q", ta.a.PasswordHash)
	}
}

func TestRotateOwnerSecretRevokesEveryKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	ta.mustFail(CodeForbidden, w, &RotateOwnerSecret{NewHash: hashOf("x")})
	ta.mustOK(ta.owner, &RotateOwnerSecret{NewHash: hashOf("next")})
	if len(ta.a.Keys) != 0 {
		t.Fatalf("%d keys survive rotation", len(ta.a.Keys))
	}
	authFails(t, ta.a, ta.keyCred(w))
	authFails(t, ta.a, ta.keyCred(r))
	ta.mustFail(CodeUnauthorized, r, &CreatePortfolioCard{CardID: "c", Address: addrs[0]})
	wantCode(t, ta.query(ta.keyCred(r), MeQuery{}), CodeUnauthorized)
}

// A rotation carries the password hash the edge checked the current
// password against: a password change that committed first makes it fail
// and revoke nothing. An entry without it (written before rotation needed
// the password) rotates as it did.
func TestRotateOwnerSecretChecksThePassword(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	ta.mustFail(CodeUnauthorized, ta.owner, &RotateOwnerSecret{NewHash: hashOf("next"), ExpectedPasswordHash: "changed since"})
	authOK(t, ta.a, ta.ownerCred())
	authOK(t, ta.a, ta.keyCred(w))

	ta.mustOK(ta.owner, &RotateOwnerSecret{NewHash: hashOf("next"), ExpectedPasswordHash: testPasswordHash})
	authFails(t, ta.a, ta.ownerCred())
	authFails(t, ta.a, ta.keyCred(w))
	next := Principal{Kind: PrincipalOwner, SecretEpoch: 1}
	ta.mustOK(next, &RotateOwnerSecret{NewHash: hashOf("unchecked")})
	authOK(t, ta.a, Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: hashOf("unchecked")})
}

func TestPasswordHashQueryIsOwnerOnly(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	if got := ta.mustQuery(ta.ownerCred(), PasswordHashQuery{}).Body; got != testPasswordHash {
		t.Fatalf("owner gets %v", got)
	}
	if got := ta.mustQuery(Credential{Kind: CredentialSystem}, PasswordHashQuery{}).Body; got != testPasswordHash {
		t.Fatalf("system gets %v", got)
	}
	res := ta.query(ta.keyCred(w), PasswordHashQuery{})
	wantCode(t, res, CodeForbidden)
	mustNotMention(t, "error", res.err.Message, testPasswordHash)
}

// Every owner command is refused to an API key, whatever its capability,
// and changes nothing.
func TestAgentsCannotManageTheAccount(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	payloads := []Payload{
		&CreateKey{KeyID: "k", Capability: LevelWrite, Hash: hashOf("k")},
		&RevokeKey{KeyID: w.KeyID},
		&CreateSession{SessionID: "s", Hash: hashOf("s"), ExpiresAt: ta.at + 1e12, PasswordHash: testPasswordHash},
		&SetGrant{Resource: ResourcePortfolioCard, ID: card.ID, Level: LevelNone},
		&SetGrant{Resource: ResourceSpace, ID: testFirstSpaceID, Level: LevelWrite},
		&SetPlan{Plan: PlanExtended},
		&ChangePassword{ExpectedPasswordHash: testPasswordHash, NewPasswordHash: "x"},
		&RotateOwnerSecret{NewHash: hashOf("x")},
		&DeleteAccount{},
	}
	for _, p := range payloads {
		ta.mustFail(CodeForbidden, w, p)
	}
	if res := ta.mustQuery(ta.keyCred(w), MeQuery{}); res.Body.(MeView).Capability != LevelWrite {
		t.Fatalf("the key stopped working")
	}
}
