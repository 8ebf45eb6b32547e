package system_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// lgCreate creates an account with a login through the admin API.
func lgCreate(t testing.TB, s *server, login string) response {
	t.Helper()
	return do(t, "POST", s.AdminURL+"/admin/v1/accounts", s.AdminToken, map[string]any{"plan": "base", "password": "correct horse battery", "login": login})
}

// lgSignIn posts a sign-in by login, from the client ip (through the
// trusted proxy header) unless ip is empty.
func lgSignIn(t testing.TB, s *server, login, password, ip string) response {
	t.Helper()
	var from []string
	if ip != "" {
		from = olFrom(ip)
	}
	return do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"login": login, "password": password}, from...)
}

// A login end to end: created with the account, unique without regard to
// case, signed in with, changed (the old one stops working), and given to
// an account made without one.
func TestLoginSignInAndChangeEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--trusted-proxies", "127.0.0.0/8")
	const password = "correct horse battery"
	r := lgCreate(t, s, "Alice.Example+watch@Example.org")
	expect(t, r, http.StatusCreated, "")
	created := r.JSON(t)
	if created["login"] != "Alice.Example+watch@Example.org" {
		t.Fatalf("created %s", r.Body)
	}
	accountID := created["account_id"].(string)

	r = lgCreate(t, s, "alice.example+WATCH@example.ORG")
	owExpectError(t, r, http.StatusConflict, "CONFLICT", "that login is taken")
	if bytes.Contains(r.Body, []byte(accountID)) {
		t.Fatalf("the conflict names the account: %s", r.Body)
	}
	expect(t, lgCreate(t, s, "no spaces please"), http.StatusUnprocessableEntity, "VALIDATION")

	r = lgSignIn(t, s, "ALICE.example+watch@example.org", password, "198.51.100.1")
	expect(t, r, http.StatusCreated, "")
	session := owString(t, r.JSON(t), "session")
	r = do(t, "GET", s.URL+"/owner/v1/account", session, nil)
	expect(t, r, http.StatusOK, "")
	if m := r.JSON(t); m["account_id"] != accountID || m["login"] != "Alice.Example+watch@Example.org" || m["plan"] != "base" {
		t.Fatalf("GET /owner/v1/account: %s", r.Body)
	}

	// A wrong password and an unknown login answer alike.
	wrong := lgSignIn(t, s, "alice.example+watch@example.org", "not the password", "198.51.100.2")
	unknown := lgSignIn(t, s, "nobody@example.org", "not the password", "198.51.100.3")
	owExpectError(t, wrong, http.StatusUnauthorized, "UNAUTHORIZED", "wrong login or password")
	if unknown.Status != wrong.Status || !bytes.Equal(unknown.Body, wrong.Body) {
		t.Fatalf("wrong password %d %s, unknown login %d %s", wrong.Status, wrong.Body, unknown.Status, unknown.Body)
	}
	both := do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"login": "nobody", "account_id": accountID, "password": password})
	expect(t, both, http.StatusUnprocessableEntity, "VALIDATION")

	// Changing the login needs the current password.
	r = do(t, "PUT", s.URL+"/owner/v1/login", session, map[string]any{"login": "alice", "current_password": "not the password"}, olFrom("198.51.100.4")...)
	expect(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
	r = do(t, "PUT", s.URL+"/owner/v1/login", session, map[string]any{"login": "alice", "current_password": password}, olFrom("198.51.100.4")...)
	expect(t, r, http.StatusOK, "")
	if r.JSON(t)["login"] != "alice" {
		t.Fatalf("PUT /owner/v1/login: %s", r.Body)
	}
	owExpectError(t, lgSignIn(t, s, "Alice.Example+watch@Example.org", password, "198.51.100.5"), http.StatusUnauthorized, "UNAUTHORIZED", "wrong login or password")
	expect(t, lgSignIn(t, s, "ALICE", password, "198.51.100.5"), http.StatusCreated, "")

	// An account made without a login gets one; a taken one is refused.
	old := s.createAccount(t, "base")
	r = do(t, "PUT", s.URL+"/owner/v1/login", old.OwnerSecret, map[string]any{"login": "Alice", "current_password": old.Password}, olFrom("198.51.100.6")...)
	owExpectError(t, r, http.StatusConflict, "CONFLICT", "that login is taken")
	r = do(t, "PUT", s.URL+"/owner/v1/login", old.OwnerSecret, map[string]any{"login": "alice.example+watch@example.org", "current_password": old.Password}, olFrom("198.51.100.6")...)
	expect(t, r, http.StatusOK, "")
	expect(t, lgSignIn(t, s, "Alice.Example+Watch@Example.org", old.Password, "198.51.100.7"), http.StatusCreated, "")
}

// Wrong passwords for one login from many clients back off on the login,
// in any case, with 429 and Retry-After; an unknown login backs off alike.
func TestLoginSignInBacksOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--trusted-proxies", "127.0.0.0/8")
	expect(t, lgCreate(t, s, "bob"), http.StatusCreated, "")
	for _, login := range []string{"bob", "nobody"} {
		for i := range olFreeFailures + 1 {
			variant := login
			if i%2 == 1 {
				variant = fmt.Sprintf("%s%s", string(login[0]-'a'+'A'), login[1:])
			}
			r := lgSignIn(t, s, variant, "not the password", fmt.Sprintf("203.0.113.%d", i+1))
			owExpectError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "wrong login or password")
		}
		r := lgSignIn(t, s, "BOB", "not the password", "192.0.2.99")
		if login == "nobody" {
			r = lgSignIn(t, s, "NOBODY", "not the password", "192.0.2.99")
		}
		if wait := olRetryAfter(t, r); wait > 2 {
			t.Fatalf("%s: Retry-After %d, past the login's 2 s cap", login, wait)
		}
	}
}

// On a cluster a sign-in by login works through any node (a follower
// forwards it), and the login index is replicated state: after the leader
// dies, the new leader knows the changed login and has forgotten the old.
func TestLoginOnAClusterSurvivesFailover(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	const password = "correct horse battery"
	r := lgCreate(t, followers[0], "Carol")
	expect(t, r, http.StatusCreated, "")
	owner := owString(t, r.JSON(t), "owner_secret")
	for _, s := range nodes {
		expect(t, lgSignIn(t, s, "carol", password, ""), http.StatusCreated, "")
	}
	r = do(t, "PUT", followers[1].URL+"/owner/v1/login", owner, map[string]any{"login": "Carol2", "current_password": password})
	expect(t, r, http.StatusOK, "")

	leader.kill()
	// The first sign-in after the kill waits for the new leader.
	deadline := time.Now().Add(15 * time.Second)
	for {
		r = lgSignIn(t, followers[0], "CAROL2", password, "")
		if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	expect(t, r, http.StatusCreated, "")
	owExpectError(t, lgSignIn(t, followers[1], "carol", password, ""), http.StatusUnauthorized, "UNAUTHORIZED", "wrong login or password")
	owExpectError(t, lgCreate(t, followers[1], "carol2"), http.StatusConflict, "CONFLICT", "that login is taken")
}
