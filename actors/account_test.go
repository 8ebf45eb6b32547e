package actors

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestCreateAccountStartsWithAnEmptyBitcoinSpaceAtNone(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	a := ta.a
	if a.ID != testAccountID || a.Plan != PlanBase || a.CreatedAt != t0+int64(1e9) {
		t.Fatalf("account id %q plan %v created %d", a.ID, a.Plan, a.CreatedAt)
	}
	if a.PasswordHash != testPasswordHash || a.OwnerSecretHash != hashOf(testOwnerSecret) || a.OwnerSecretEpoch != 0 {
		t.Fatalf("credentials not stored as given: %+v", a)
	}
	if len(a.Spaces) != 1 {
		t.Fatalf("account has %d spaces, want 1", len(a.Spaces))
	}
	s := a.Spaces[0]
	if s.ID != testFirstSpaceID || s.Type != SpaceBitcoin || s.Grant != LevelNone || len(s.Cards) != 0 || s.Cards == nil {
		t.Fatalf("first space = %+v, want an empty bitcoin space at none", s)
	}
	if s.Name == "" || !isPrintable(s.Name) || charCount(s.Name) > 40 {
		t.Fatalf("first space name %q is not 1 to 40 printable characters", s.Name)
	}
	if s.Version == 0 || a.BookmarkRevision == 0 {
		t.Fatalf("first space version %d, bookmark revision %d: both must be set", s.Version, a.BookmarkRevision)
	}
	if len(a.Portfolio) != 0 || len(a.Keys) != 0 || len(a.Sessions) != 0 || len(a.Audit) != 0 || a.Idempotency.Len() != 0 {
		t.Fatalf("new account is not empty: %+v", a)
	}
	// Empty collections encode as [], not null, so that a restored
	// snapshot is byte-identical to the live state.
	b := ta.snapshot()
	for _, field := range []string{`"keys":[]`, `"sessions":[]`, `"portfolio":[]`, `"cards":[]`} {
		if !bytes.Contains(b, []byte(field)) {
			t.Fatalf("new account JSON lacks %s: %s", field, b)
		}
	}
}

func TestCreateAccountResult(t *testing.T) {
	for _, plan := range []Plan{PlanBase, PlanExtended} {
		c := &Command{Account: "acct-x", At: t0, Principal: systemP, Payload: &CreateAccount{Plan: plan, OwnerSecretHash: hashOf("s"), PasswordHash: "h", FirstSpaceID: "sp"}}
		a, res := Apply(nil, c)
		if res.err != nil || res.Status != 201 {
			t.Fatalf("plan %v: result %+v", plan, res)
		}
		if got := bodyJSON(t, res.Body); got != `{"account_id":"acct-x","plan":"`+plan.String()+`"}` {
			t.Fatalf("plan %v: body %s", plan, got)
		}
		if a.Plan != plan {
			t.Fatalf("stored plan %v, want %v", a.Plan, plan)
		}
	}
}

func TestCreateAccountPlanSetsLimits(t *testing.T) {
	base := newTestAccount(t, PlanBase)
	ext := newTestAccount(t, PlanExtended)
	mb := base.meFor(base.ownerCred())
	me := ext.meFor(ext.ownerCred())
	if mb.Plan != PlanBase || mb.BookmarkSpaces.Limit != 1 || mb.PortfolioCards.Limit != 10 {
		t.Fatalf("base /me = %+v", mb)
	}
	if me.Plan != PlanExtended || me.BookmarkSpaces.Limit != 10 || me.PortfolioCards.Limit != 10 {
		t.Fatalf("extended /me = %+v", me)
	}
}

func TestCreateAccountOnlyBySystem(t *testing.T) {
	for _, p := range []Principal{ownerP, {Kind: PrincipalAgent, KeyID: "k"}, {Kind: PrincipalOwner, SessionID: "s"}, {}} {
		c := &Command{Account: "acct-x", At: t0, Principal: p, Payload: &CreateAccount{OwnerSecretHash: hashOf("s"), PasswordHash: "h", FirstSpaceID: "sp"}}
		a, res := Apply(nil, c)
		if a != nil {
			t.Fatalf("principal %+v created account %+v", p, a)
		}
		wantCode(t, res, CodeUnauthorized)
	}
}

func TestCreateAccountRequiresIDs(t *testing.T) {
	cases := map[string]*Command{
		"no account id":     {Account: "", At: t0, Principal: systemP, Payload: &CreateAccount{PasswordHash: "h", FirstSpaceID: "sp"}},
		"no first space id": {Account: "a", At: t0, Principal: systemP, Payload: &CreateAccount{PasswordHash: "h"}},
		"no password hash":  {Account: "a", At: t0, Principal: systemP, Payload: &CreateAccount{FirstSpaceID: "sp"}},
	}
	for name, c := range cases {
		a, res := Apply(nil, c)
		if a != nil {
			t.Fatalf("%s: created %+v", name, a)
		}
		wantCode(t, res, CodeValidation)
	}
}

func TestCreateAccountTwiceConflicts(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	ta.createCard(ta.owner, addrs[0])
	before := ta.snapshot()
	original := ta.a
	c := ta.cmd(systemP, &CreateAccount{Plan: PlanExtended, OwnerSecretHash: hashOf("other"), PasswordHash: "other", FirstSpaceID: "space-9"})
	a, res := Apply(ta.a, c)
	wantCode(t, res, CodeConflict)
	if a != original {
		t.Fatalf("a conflicting create replaced the account")
	}
	if !bytes.Equal(before, ta.snapshot()) {
		t.Fatalf("a conflicting create changed the account")
	}
}

func TestCommandToMissingAccountIsUnauthorized(t *testing.T) {
	for _, p := range []Payload{&CreateKey{KeyID: "k", Capability: LevelRead}, &DeleteAccount{}, &CreatePortfolioCard{CardID: "c", Address: addrs[0]}} {
		a, res := Apply(nil, &Command{Account: "nobody", At: t0, Principal: systemP, Payload: p})
		if a != nil {
			t.Fatalf("%T on a missing account returned %+v", p, a)
		}
		wantCode(t, res, CodeUnauthorized)
	}
	wantCode(t, RunQuery(nil, Credential{Kind: CredentialSystem}, MeQuery{}), CodeUnauthorized)
}

func TestDeleteAccountMakesEveryCredentialFail(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelWrite)
	reader := ta.addKey(LevelRead)
	card := ta.createCard(agent, addrs[0])
	ta.mustOK(systemP, &CreateSession{SessionID: "sess-1", Hash: hashOf("sess-secret"), ExpiresAt: ta.at + int64(1e15), PasswordHash: testPasswordHash})
	session := Credential{Kind: CredentialSession, AccountID: ta.id, ID: "sess-1", Hash: hashOf("sess-secret")}

	// An API key cannot delete the account.
	ta.mustFail(CodeForbidden, agent, &DeleteAccount{})

	seqBefore := ta.a.Seq
	res := ta.mustOK(ta.owner, &DeleteAccount{})
	if res.Status != 204 || res.Body != nil {
		t.Fatalf("delete account result %+v, want 204 with no body", res)
	}
	if !ta.a.Deleted || len(ta.a.Keys) != 0 || len(ta.a.Sessions) != 0 || len(ta.a.Portfolio) != 0 || len(ta.a.Spaces) != 0 {
		t.Fatalf("deleted account still holds data: %+v", ta.a)
	}
	if ta.a.PasswordHash != "" || ta.a.OwnerSecretHash != (Hash{}) {
		t.Fatalf("deleted account keeps credential hashes")
	}
	if ta.a.Seq <= seqBefore {
		t.Fatalf("Seq went from %d to %d on delete", seqBefore, ta.a.Seq)
	}
	creds := map[string]Credential{
		"write key":    ta.keyCred(agent),
		"read key":     ta.keyCred(reader),
		"owner secret": ta.ownerCred(),
		"session":      session,
		"system":       {Kind: CredentialSystem, AccountID: ta.id},
		// A zero hash must not match the cleared owner secret hash.
		"zero owner secret": {Kind: CredentialOwnerSecret, AccountID: ta.id},
	}
	for name, cred := range creds {
		if res := ta.query(cred, AuthQuery{}); res.err == nil || res.err.Code != CodeUnauthorized {
			t.Fatalf("%s after account deletion: %+v, want UNAUTHORIZED", name, res)
		}
	}
	// Commands already proposed under any principal fail at apply.
	for _, p := range []Principal{agent, reader, ta.owner, {Kind: PrincipalOwner, SessionID: "sess-1"}, systemP} {
		ta.mustFail(CodeUnauthorized, p, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("x")}})
	}
	ta.mustFail(CodeUnauthorized, ta.owner, &CreateKey{KeyID: "key-new", Capability: LevelWrite, Hash: hashOf("new")})
	ta.mustFail(CodeUnauthorized, ta.owner, &DeleteAccount{})
}

func TestAccountJSONRoundTrip(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	agent := ta.addKey(LevelWrite)
	card := ta.createCard(agent, addrs[1])
	ta.mustOK(agent, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("n"), Note: ptr("line1\nline2"), ColorKey: ptr("teal")}})
	c := ta.cmd(agent, &CreatePortfolioCard{CardID: "card-idem", Address: addrs[2]})
	c.Idempotency = &IdempotencyRequest{Token: "token-0123456789abcdef", Method: "POST", Path: "/v1/portfolio/cards", BodyHash: hashOf("{}")}
	if res := ta.run(c); res.err != nil {
		t.Fatal(res.err)
	}
	ta.mustOK(systemP, &CreateSession{SessionID: "s", Hash: hashOf("s"), ExpiresAt: ta.at + 1e12, PasswordHash: testPasswordHash})
	b := ta.snapshot()
	var back Account
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	b2, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("account does not survive a JSON round trip:\n%s\n%s", b, b2)
	}
	// The restored account authenticates exactly like the original.
	if res := RunQuery(&back, ta.keyCred(agent), AuthQuery{}); res.err != nil {
		t.Fatalf("restored account rejects the key: %v", res.err)
	}
}
