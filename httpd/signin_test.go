package httpd

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

const ownerTestLogin = "Owner.Name+watch@Example.com"

// newLoginTest is newOwnerTest whose account has a login.
func newLoginTest(t testing.TB) *ownerTest {
	t.Helper()
	o := newOwnerTest(t)
	created, err := o.server.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, ownerTestLogin)
	if err != nil {
		t.Fatal(err)
	}
	if created.Login != ownerTestLogin {
		t.Fatalf("created with login %q", created.Login)
	}
	o.account = created
	return o
}

func (o *ownerTest) signInLogin(ip, login, password string) (int, int, []byte) {
	o.t.Helper()
	return o.sendRaw(ip, "POST", "/owner/v1/sessions", "", map[string]string{"login": login, "password": password})
}

// countComparisons counts password comparisons and keeps the hashes
// compared against until the test ends.
func countComparisons(t *testing.T) *[][]byte {
	var hashes [][]byte
	real := comparePassword
	comparePassword = func(hash, password []byte) error {
		hashes = append(hashes, bytes.Clone(hash))
		return real(hash, password)
	}
	t.Cleanup(func() { comparePassword = real })
	return &hashes
}

func TestSignInByLoginIgnoresCaseAndGivesAWorkingSession(t *testing.T) {
	t.Parallel()
	o := newLoginTest(t)
	status, _, body := o.send("203.0.113.30", "POST", "/owner/v1/sessions", "", map[string]string{"login": "owner.name+WATCH@example.COM", "password": o.password})
	o.expect("sign-in by login", status, 0, fasthttp.StatusCreated, 0)
	session, _ := body["session"].(string)
	status, _, account := o.send("203.0.113.30", "GET", "/owner/v1/account", session, nil)
	o.expect("the account with the session", status, 0, fasthttp.StatusOK, 0)
	if account["account_id"] != o.account.AccountID || account["login"] != ownerTestLogin || account["plan"] != "base" {
		t.Fatalf("GET /owner/v1/account = %v", account)
	}
}

// An unknown login and a wrong password answer byte for byte alike, and
// both run one bcrypt comparison at the server's cost: the unknown login
// against the dummy hash.
func TestUnknownLoginAndWrongPasswordAnswerAlikeAfterOneComparison(t *testing.T) {
	o := newLoginTest(t)
	hashes := countComparisons(t)
	wrongStatus, _, wrongBody := o.signInLogin("203.0.113.31", ownerTestLogin, "not the password")
	if len(*hashes) != 1 {
		t.Fatalf("wrong password: %d comparisons", len(*hashes))
	}
	unknownStatus, _, unknownBody := o.signInLogin("203.0.113.32", "nobody@example.com", "not the password")
	if wrongStatus != fasthttp.StatusUnauthorized || unknownStatus != wrongStatus || !bytes.Equal(unknownBody, wrongBody) {
		t.Fatalf("wrong password %d %s, unknown login %d %s", wrongStatus, wrongBody, unknownStatus, unknownBody)
	}
	if len(*hashes) != 2 {
		t.Fatalf("the unknown login ran %d comparisons, want 1", len(*hashes)-1)
	}
	dummy := (*hashes)[1]
	if string(dummy) != o.server.dummyPasswordHash {
		t.Fatal("the unknown login was not compared against the dummy hash")
	}
	if cost, err := bcrypt.Cost(dummy); err != nil || cost != bcrypt.MinCost {
		t.Fatalf("dummy hash cost %d (%v), want the server's %d", cost, err, bcrypt.MinCost)
	}
	if !bytes.Contains(wrongBody, []byte(`"wrong login or password"`)) {
		t.Fatalf("body %s", wrongBody)
	}
}

func TestSignInNeedsExactlyOneOfLoginAndAccountID(t *testing.T) {
	t.Parallel()
	o := newLoginTest(t)
	for _, body := range []map[string]string{
		{"password": o.password},
		{"login": ownerTestLogin, "account_id": o.account.AccountID, "password": o.password},
		{"login": "", "password": o.password},
		{"login": "no spaces allowed", "password": o.password},
		{"login": ownerTestLogin},
	} {
		status, _, got := o.send("203.0.113.33", "POST", "/owner/v1/sessions", "", body)
		if status != fasthttp.StatusUnprocessableEntity || got["code"] != "VALIDATION" {
			t.Fatalf("%v: %d %v", body, status, got)
		}
	}
	status, _, _ := o.send("203.0.113.33", "POST", "/owner/v1/sessions", "", map[string]string{"account_id": o.account.AccountID, "password": o.password})
	o.expect("sign-in by account id", status, 0, fasthttp.StatusCreated, 0)
}

// Many clients guessing one login, in any case, are held to the login's
// back-off, capped at 2 s; an unknown login backs off exactly alike, so
// the back-off does not tell which logins exist. The owner gets in once
// the cap has passed.
func TestSignInBacksOffPerLoginAlikeForKnownAndUnknownAndIsCapped(t *testing.T) {
	t.Parallel()
	o := newLoginTest(t)
	client := 0
	next := func() string { client++; return fmt.Sprintf("192.0.2.%d", client) }
	cases := []string{ownerTestLogin, "OWNER.NAME+WATCH@EXAMPLE.COM", "owner.name+watch@example.com"}
	for _, login := range []string{ownerTestLogin, "nobody@example.com"} {
		for i := range edge.LoginBackoff.Free + 1 {
			status, retry, _ := o.signInLogin(next(), cases[i%len(cases)], "wrong password")
			if login != ownerTestLogin {
				status, retry, _ = o.signInLogin(next(), login, "wrong password")
			}
			o.expect(fmt.Sprintf("%s: wrong password %d", login, i+1), status, retry, fasthttp.StatusUnauthorized, 0)
		}
		status, retry, _ := o.signInLogin(next(), login, "wrong password")
		o.expect(login+": in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)
		for range 10 {
			o.clock.advance(edge.LoginBackoff.Max)
			status, retry, _ = o.signInLogin(next(), login, "wrong password")
			o.expect(login+": admitted", status, retry, fasthttp.StatusUnauthorized, 0)
			status, retry, _ = o.signInLogin(next(), login, "wrong password")
			if status != fasthttp.StatusTooManyRequests || retry < 1 || retry > 2 {
				t.Fatalf("%s: status %d Retry-After %d, want 429 with at most 2", login, status, retry)
			}
		}
		// The login's back-off is not the account's: the owner secret and
		// a sign-in by account id go on.
		status, retry, _ = o.send(next(), "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
		o.expect("owner secret during the attack", status, retry, fasthttp.StatusOK, 0)
	}
	o.clock.advance(edge.LoginBackoff.Max)
	status, retry, _ := o.signInLogin(next(), ownerTestLogin, o.password)
	o.expect("the owner after at most the cap", status, retry, fasthttp.StatusCreated, 0)
}

func TestCreateAccountRefusesATakenLoginInAnyCase(t *testing.T) {
	t.Parallel()
	o := newLoginTest(t)
	_, failure := o.server.CreateAccount(context.Background(), actors.PlanBase, "another password", "OWNER.name+watch@example.com")
	err := typedErr(failure)
	if err == nil || err.Code != actors.CodeConflict || err.Message != "that login is taken" {
		t.Fatalf("second account with the login: %v", err)
	}
	_, failure = o.server.CreateAccount(context.Background(), actors.PlanBase, "another password", "bad login!")
	err = typedErr(failure)
	if err == nil || err.Code != actors.CodeValidation {
		t.Fatalf("bad login: %v", err)
	}
}

func TestSetLoginNeedsTheCurrentPasswordAndReplacesTheOldLogin(t *testing.T) {
	t.Parallel()
	o := newLoginTest(t)
	const ip = "203.0.113.40"
	_, _, body := o.send(ip, "POST", "/owner/v1/sessions", "", map[string]string{"login": ownerTestLogin, "password": o.password})
	session := body["session"].(string)
	other, err := o.server.CreateAccount(context.Background(), actors.PlanBase, "other password", "taken")
	if err != nil {
		t.Fatal(err)
	}

	put := func(bearer string, req map[string]any) (int, map[string]any) {
		status, _, got := o.send(ip, "PUT", "/owner/v1/login", bearer, req)
		return status, got
	}
	status, got := put(session, map[string]any{"login": "new-name"})
	if status != fasthttp.StatusUnprocessableEntity {
		t.Fatalf("without the password: %d %v", status, got)
	}
	status, got = put(session, map[string]any{"login": "new-name", "current_password": "wrong password"})
	if status != fasthttp.StatusUnauthorized {
		t.Fatalf("wrong password: %d %v", status, got)
	}
	status, got = put(session, map[string]any{"login": "TAKEN", "current_password": o.password})
	if status != fasthttp.StatusConflict || got["code"] != "CONFLICT" || got["error"] != "that login is taken" {
		t.Fatalf("taken login: %d %v", status, got)
	}
	status, got = put(session, map[string]any{"login": "x", "current_password": o.password})
	if status != fasthttp.StatusUnprocessableEntity {
		t.Fatalf("short login: %d %v", status, got)
	}
	status, got = put(session, map[string]any{"login": "New-Name", "current_password": o.password})
	if status != fasthttp.StatusOK || got["login"] != "New-Name" {
		t.Fatalf("change: %d %v", status, got)
	}
	status, _, _ = o.signInLogin(ip, ownerTestLogin, o.password)
	o.expect("the old login", status, 0, fasthttp.StatusUnauthorized, 0)
	status, _, _ = o.signInLogin(ip, "new-name", o.password)
	o.expect("the new login", status, 0, fasthttp.StatusCreated, 0)
	// An account made without a login gets one; the freed login is free.
	status, got = put(other.OwnerSecret, map[string]any{"login": ownerTestLogin, "current_password": "other password"})
	if status != fasthttp.StatusOK {
		t.Fatalf("another account takes the freed login: %d %v", status, got)
	}
}
