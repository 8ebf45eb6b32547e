package actors

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// Real Bitcoin mainnet addresses, one of each kind, all distinct after
// canonicalization. TestAddressFixturesAreValid proves each one passes
// chain.ValidateBitcoinAddress, so no test relies on an address the
// validator rejects.
var addrs = []string{
	"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
	"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
	"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
	"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
	"3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6",
	"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	"1Q1pE5vPGEEMqRcVRMbtBK842Y6Pzo6nK9",
	"1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX",
	"12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG",
	"3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC",
	"bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3",
	"bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr",
}

func TestAddressFixturesAreValid(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range addrs {
		canonical, err := chain.ValidateBitcoinAddress(a)
		if err != nil {
			t.Fatalf("fixture %s is not a valid mainnet address: %v", a, err)
		}
		if canonical != a {
			t.Fatalf("fixture %s is not canonical (canonical form %s)", a, canonical)
		}
		if seen[canonical] {
			t.Fatalf("fixture %s is listed twice", a)
		}
		seen[canonical] = true
	}
}

// t0 is the time of the first command of every test account.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()

const (
	testAccountID    = "acct-1"
	testFirstSpaceID = "space-1"
	testPasswordHash = "$argon2id$test-password-hash"
	testOwnerSecret  = "owner-secret-0"
)

var (
	systemP = Principal{Kind: PrincipalSystem}
	ownerP  = Principal{Kind: PrincipalOwner}
)

func hashOf(secret string) Hash { return sha256.Sum256([]byte(secret)) }

func ptr[T any](v T) *T { return &v }

// testAccount drives one account through Apply, the way the actor does,
// with a clock that moves forward one second per command.
type testAccount struct {
	t     *testing.T
	id    string
	a     *Account
	at    int64
	seq   int // for generated IDs
	keys  map[string]string
	owner Principal
}

// newTestAccount creates an account with the given plan through the
// system principal and returns its driver.
func newTestAccount(t *testing.T, plan Plan) *testAccount {
	t.Helper()
	ta := &testAccount{t: t, id: testAccountID, at: t0, keys: map[string]string{}, owner: ownerP}
	c := ta.cmd(systemP, &CreateAccount{Plan: plan, OwnerSecretHash: hashOf(testOwnerSecret), PasswordHash: testPasswordHash, FirstSpaceID: testFirstSpaceID})
	a, res := Apply(nil, c)
	if res.err != nil {
		t.Fatalf("create account: %v", res.err)
	}
	ta.a = a
	return ta
}

// cmd builds a command for this account with the next time.
func (ta *testAccount) cmd(p Principal, payload Payload) *Command {
	ta.at += int64(time.Second)
	return &Command{Account: ta.id, At: ta.at, Principal: p, Payload: payload}
}

// cmdAt is cmd at an explicit time (which becomes the account's clock).
func (ta *testAccount) cmdAt(at int64, p Principal, payload Payload) *Command {
	ta.at = at
	return &Command{Account: ta.id, At: at, Principal: p, Payload: payload}
}

func (ta *testAccount) run(c *Command) Result {
	ta.t.Helper()
	next, res := Apply(ta.a, c)
	if next == nil {
		ta.t.Fatalf("Apply returned a nil account for %T", c.Payload)
	}
	ta.a = next
	return res
}

func (ta *testAccount) apply(p Principal, payload Payload) Result {
	ta.t.Helper()
	return ta.run(ta.cmd(p, payload))
}

// mustOK applies a command that must succeed.
func (ta *testAccount) mustOK(p Principal, payload Payload) Result {
	ta.t.Helper()
	res := ta.apply(p, payload)
	if res.err != nil {
		ta.t.Fatalf("%T by %+v: unexpected error %v", payload, p, res.err)
	}
	return res
}

// mustFail applies a command that must fail with code and leave the
// account exactly as it was.
func (ta *testAccount) mustFail(code Code, p Principal, payload Payload) *Error {
	ta.t.Helper()
	return ta.mustFailCmd(code, ta.cmd(p, payload))
}

func (ta *testAccount) mustFailCmd(code Code, c *Command) *Error {
	ta.t.Helper()
	before := ta.snapshot()
	res := ta.run(c)
	if res.err == nil {
		ta.t.Fatalf("%T by %+v: succeeded with status %d, want %s", c.Payload, c.Principal, res.Status, code)
	}
	if res.err.Code != code {
		ta.t.Fatalf("%T by %+v: error %v, want code %s", c.Payload, c.Principal, res.err, code)
	}
	if res.Status != 0 || res.Body != nil {
		ta.t.Fatalf("%T: failed result carries status %d body %v", c.Payload, res.Status, res.Body)
	}
	if after := ta.snapshot(); !bytes.Equal(before, after) {
		ta.t.Fatalf("%T failed with %s but changed the account:\nbefore %s\nafter  %s", c.Payload, code, before, after)
	}
	return res.err
}

// snapshot is the account's JSON encoding, the form snapshots persist.
func (ta *testAccount) snapshot() []byte {
	ta.t.Helper()
	b, err := json.Marshal(ta.a)
	if err != nil {
		ta.t.Fatalf("marshal account: %v", err)
	}
	return b
}

// addKey creates an API key through the owner and returns the principal the
// edge would put in its commands.
func (ta *testAccount) addKey(capability Level) Principal {
	ta.t.Helper()
	ta.seq++
	id := fmt.Sprintf("key-%d", ta.seq)
	secret := "secret-of-" + id
	ta.mustOK(ta.owner, &CreateKey{KeyID: id, Name: "agent " + id, Capability: capability, Hash: hashOf(secret)})
	ta.keys[id] = secret
	return Principal{Kind: PrincipalAgent, KeyID: id}
}

// keyCred is the credential the edge builds from the key's bearer secret.
func (ta *testAccount) keyCred(p Principal) Credential {
	return Credential{Kind: CredentialAPIKey, AccountID: ta.id, ID: p.KeyID, Hash: hashOf(ta.keys[p.KeyID]), Now: ta.at}
}

func (ta *testAccount) ownerCred() Credential {
	return Credential{Kind: CredentialOwnerSecret, AccountID: ta.id, Hash: hashOf(testOwnerSecret), Now: ta.at}
}

func (ta *testAccount) nextCardID() string {
	ta.seq++
	return fmt.Sprintf("card-%d", ta.seq)
}

// createCard creates an Account card that must succeed and returns its view.
func (ta *testAccount) createCard(p Principal, address string) CardView {
	ta.t.Helper()
	res := ta.mustOK(p, &CreatePortfolioCard{CardID: ta.nextCardID(), Address: address})
	if res.Status != 201 {
		ta.t.Fatalf("create card: status %d, want 201", res.Status)
	}
	return cardOf(ta.t, res)
}

// setGrant sets the agent grant on an Account card as the owner.
func (ta *testAccount) setGrant(cardID string, level Level) {
	ta.t.Helper()
	ta.mustOK(ta.owner, &SetGrant{Resource: ResourcePortfolioCard, ID: cardID, Level: level})
}

func (ta *testAccount) query(cred Credential, q Query) Result {
	cred.Now = ta.at
	return RunQuery(ta.a, cred, q)
}

func (ta *testAccount) mustQuery(cred Credential, q Query) Result {
	ta.t.Helper()
	res := ta.query(cred, q)
	if res.err != nil {
		ta.t.Fatalf("%T: unexpected error %v", q, res.err)
	}
	return res
}

// cardOf extracts the card of a single-card result, whether it is the
// typed body of a fresh result or the raw JSON of a replay.
func cardOf(t *testing.T, res Result) CardView {
	t.Helper()
	switch b := res.Body.(type) {
	case CardEnvelope:
		return b.Card
	case json.RawMessage:
		var env CardEnvelope
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("decode card envelope: %v", err)
		}
		return env.Card
	}
	t.Fatalf("result body is %T, want a card envelope", res.Body)
	return CardView{}
}

func bodyJSON(t *testing.T, body any) string {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("marshal body: %v", err)
	}
	return string(b)
}

func wantCode(t *testing.T, res Result, code Code) *Error {
	t.Helper()
	if res.err == nil {
		t.Fatalf("succeeded with status %d body %s, want %s", res.Status, bodyJSON(t, res.Body), code)
	}
	if res.err.Code != code {
		t.Fatalf("error %v, want code %s", res.err, code)
	}
	return res.err
}

func (ta *testAccount) portfolioIDs() []string {
	ids := []string{}
	for _, c := range ta.a.Portfolio {
		ids = append(ids, c.ID)
	}
	return ids
}

func (ta *testAccount) card(id string) *Card {
	_, c := ta.a.portfolioCard(id)
	return c
}

func (ta *testAccount) listFor(cred Credential) PortfolioListView {
	ta.t.Helper()
	return ta.mustQuery(cred, ListPortfolioQuery{}).Body.(PortfolioListView)
}

func (ta *testAccount) meFor(cred Credential) MeView {
	ta.t.Helper()
	return ta.mustQuery(cred, MeQuery{}).Body.(MeView)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func mustNotMention(t *testing.T, what string, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Fatalf("%s %q reveals %q", what, text, s)
		}
	}
}

// each is f of every item, in order.
func each[T, V any](items []T, f func(T) V) []V {
	out := make([]V, len(items))
	for i, item := range items {
		out[i] = f(item)
	}
	return out
}
