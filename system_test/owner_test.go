package system_test

import (
	"bytes"
	"fmt"
	"github.com/addrwatch/addrwatch/internal/testaddr"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Helpers shared by owner_test.go, admin_test.go, durability_test.go and
// cli_test.go carry an "ow" prefix so they cannot clash with other files.

// owUnauthorizedMsg is the product's wording of a refused credential.
const owUnauthorizedMsg = "missing or invalid credentials"

// owAddress returns the i-th of a deterministic series of distinct, valid
// mainnet P2PKH addresses.
func owAddress(i int) string {
	return testaddr.P2PKH(fmt.Sprintf("addrwatch-system-test-%d", i))
}

// owFields returns the sorted field names of a JSON object.
func owFields(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// owExpectFields fails unless m has exactly the fields want.
func owExpectFields(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := owFields(m); !slices.Equal(got, want) {
		t.Fatalf("%s has fields %v, want exactly %v: %v", what, got, want, m)
	}
}

// owString returns m[field] and fails unless it is a non-empty string.
func owString(t testing.TB, m map[string]any, field string) string {
	t.Helper()
	v, isString := m[field].(string)
	if !isString || v == "" {
		t.Fatalf("field %q is %#v, want a non-empty string; body %v", field, m[field], m)
	}
	return v
}

// owObject returns m[field] as an object.
func owObject(t testing.TB, m map[string]any, field string) map[string]any {
	t.Helper()
	v, isObject := m[field].(map[string]any)
	if !isObject {
		t.Fatalf("field %q is %#v, want an object; body %v", field, m[field], m)
	}
	return v
}

// owStrings returns m[field] as a list of strings (an empty list is fine,
// null is not).
func owStrings(t testing.TB, m map[string]any, field string) []string {
	t.Helper()
	raw, isList := m[field].([]any)
	if !isList {
		t.Fatalf("field %q is %#v, want a list; body %v", field, m[field], m)
	}
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		s, isString := v.(string)
		if !isString {
			t.Fatalf("field %q holds %#v, want strings", field, v)
		}
		out = append(out, s)
	}
	return out
}

// owNumber returns m[field] as an integer.
func owNumber(t testing.TB, m map[string]any, field string) int {
	t.Helper()
	v, isNumber := m[field].(float64)
	if !isNumber {
		t.Fatalf("field %q is %#v, want a number; body %v", field, m[field], m)
	}
	return int(v)
}

// owExpectError checks an error answer: status, code and (when msg is not
// empty) the exact message, and that the body has only code and error.
func owExpectError(t testing.TB, r response, status int, code, msg string) {
	t.Helper()
	expect(t, r, status, code)
	m := r.JSON(t)
	owExpectFields(t, "error body", m, "code", "error")
	if msg != "" && m["error"] != msg {
		t.Fatalf("error message %q, want %q", m["error"], msg)
	}
}

// owExpectUnauthorized checks the exact 401 body of a refused credential.
func owExpectUnauthorized(t testing.TB, r response) {
	t.Helper()
	owExpectError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", owUnauthorizedMsg)
}

// owExpectNoContent checks a 204 with an empty body.
func owExpectNoContent(t testing.TB, r response) {
	t.Helper()
	expect(t, r, http.StatusNoContent, "")
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
}

// owSignIn posts a sign-in.
func owSignIn(t testing.TB, s *server, accountID, password string) response {
	t.Helper()
	return do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"account_id": accountID, "password": password})
}

// owSession signs in and returns the session token.
func owSession(t testing.TB, s *server, a account) string {
	t.Helper()
	r := owSignIn(t, s, a.ID, a.Password)
	expect(t, r, http.StatusCreated, "")
	return owString(t, r.JSON(t), "session")
}

// owKey creates a key with bearer (owner secret or session) and returns its
// id and the full key.
func owKey(t testing.TB, s *server, bearer, capability, name string) (keyID, key string) {
	t.Helper()
	r := do(t, "POST", s.URL+"/owner/v1/keys", bearer, map[string]any{"capability": capability, "name": name})
	expect(t, r, http.StatusCreated, "")
	m := r.JSON(t)
	return owString(t, m, "key_id"), owString(t, m, "key")
}

// owMe returns the agent's /v1/me.
func owMe(t testing.TB, s *server, key string) map[string]any {
	t.Helper()
	r := do(t, "GET", s.URL+"/v1/me", key, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// owOwnerCard creates an Account card as the owner and returns it.
func owOwnerCard(t testing.TB, s *server, bearer, address, name string) map[string]any {
	t.Helper()
	r := do(t, "POST", s.URL+"/owner/v1/portfolio/cards", bearer, map[string]any{"address": address, "name": name})
	expect(t, r, http.StatusCreated, "")
	return owObject(t, r.JSON(t), "card")
}

// owAgentCard creates an Account card with an API key and returns it.
func owAgentCard(t testing.TB, s *server, key, address, name string) map[string]any {
	t.Helper()
	r := do(t, "POST", s.URL+"/v1/portfolio/cards", key, map[string]any{"address": address, "name": name})
	expect(t, r, http.StatusCreated, "")
	return owObject(t, r.JSON(t), "card")
}

// owKeyIDs lists the key ids GET /owner/v1/keys returns.
func owKeyIDs(t testing.TB, s *server, bearer string) []string {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/keys", bearer, nil)
	expect(t, r, http.StatusOK, "")
	var ids []string
	for _, k := range r.JSON(t)["keys"].([]any) {
		ids = append(ids, k.(map[string]any)["key_id"].(string))
	}
	return ids
}

// owFirstSpaceID returns the id of the account's first Space, from the
// owner's Space list (a removed route fails the test rather than skip it).
func owFirstSpaceID(t testing.TB, s *server, bearer string) string {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/bookmark-spaces", bearer, nil)
	expect(t, r, http.StatusOK, "")
	raw, isList := r.JSON(t)["spaces"].([]any)
	if !isList || len(raw) == 0 {
		t.Fatalf("owner Space list without Spaces: %s", r.Body)
	}
	return owString(t, raw[0].(map[string]any), "id")
}

func TestOwnerAPIEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	t.Run("SignInAndSignOut", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "read", "survives sign-out")

		r := owSignIn(t, s, a.ID, a.Password)
		expect(t, r, http.StatusCreated, "")
		m := r.JSON(t)
		session := owString(t, m, "session")
		for _, f := range owFields(m) {
			if f != "session" && f != "expires_at" {
				t.Fatalf("sign-in answer has unexpected field %q: %s", f, r.Body)
			}
		}
		if session == a.OwnerSecret || strings.Contains(string(r.Body), a.Password) {
			t.Fatalf("sign-in answer leaks a credential: %s", r.Body)
		}

		owExpectError(t, owSignIn(t, s, a.ID, "not the password"), http.StatusUnauthorized, "UNAUTHORIZED", "")
		owExpectError(t, owSignIn(t, s, "no-such-account", a.Password), http.StatusUnauthorized, "UNAUTHORIZED", "")
		// Both refusals read the same: the answer does not tell which part was wrong.
		if w, u := owSignIn(t, s, a.ID, "not the password"), owSignIn(t, s, "no-such-account", a.Password); !bytes.Equal(w.Body, u.Body) {
			t.Fatalf("wrong password %s and unknown account %s answer differently", w.Body, u.Body)
		}
		owExpectError(t, do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"account_id": a.ID}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"password": a.Password}), http.StatusUnprocessableEntity, "VALIDATION", "")

		// The session works on owner routes, reads and writes.
		r = do(t, "GET", s.URL+"/owner/v1/keys", session, nil)
		expect(t, r, http.StatusOK, "")
		sessionKeyID, _ := owKey(t, s, session, "write", "made in a session")
		if ids := owKeyIDs(t, s, a.OwnerSecret); !slices.Contains(ids, sessionKeyID) {
			t.Fatalf("key made in a session %s missing from %v", sessionKeyID, ids)
		}
		// A session is an owner credential: it is not an API key.
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", session, nil))

		// Sign-out with the owner secret instead of a session is refused.
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/sessions/current", a.OwnerSecret, nil), http.StatusUnprocessableEntity, "VALIDATION", "")

		// Sign-out ends the session and only the session.
		owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/sessions/current", session, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", session, nil))
		owExpectUnauthorized(t, do(t, "DELETE", s.URL+"/owner/v1/sessions/current", session, nil))
		if me := owMe(t, s, key); me["capability"] != "read" {
			t.Fatalf("key after sign-out: %v", me)
		}
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil), http.StatusOK, "")
		// A new sign-in still works.
		owSession(t, s, a)
	})

	t.Run("Keys", func(t *testing.T) {
		a := s.createAccount(t, "base")
		r := do(t, "POST", s.URL+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": "read", "name": "reader"})
		expect(t, r, http.StatusCreated, "")
		m := r.JSON(t)
		for _, f := range []string{"key_id", "key", "capability", "name"} {
			if _, present := m[f]; !present {
				t.Fatalf("key creation answer without %q: %s", f, r.Body)
			}
		}
		if m["capability"] != "read" || m["name"] != "reader" {
			t.Fatalf("created key %s, want capability read and name reader", r.Body)
		}
		readID, readKey := owString(t, m, "key_id"), owString(t, m, "key")
		writeID, writeKey := owKey(t, s, a.OwnerSecret, "write", "writer")
		if readID == writeID || readKey == writeKey {
			t.Fatalf("two keys share an id or a secret")
		}

		me := owMe(t, s, readKey)
		if me["capability"] != "read" || me["key_id"] != readID || me["account_id"] != a.ID {
			t.Fatalf("/v1/me of the read key: %v", me)
		}
		if me := owMe(t, s, writeKey); me["capability"] != "write" || me["key_id"] != writeID {
			t.Fatalf("/v1/me of the write key: %v", me)
		}
		// A read key never writes.
		owExpectError(t, do(t, "POST", s.URL+"/v1/portfolio/cards", readKey, map[string]any{"address": owAddress(1)}), http.StatusForbidden, "FORBIDDEN", "")

		// The list shows ids, capability, name and time: never the key or a hash.
		r = do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		list := r.JSON(t)
		owExpectFields(t, "key list", list, "keys")
		keys := list["keys"].([]any)
		if len(keys) != 2 {
			t.Fatalf("key list has %d keys, want 2: %s", len(keys), r.Body)
		}
		for i, want := range []struct{ id, capability, name string }{{readID, "read", "reader"}, {writeID, "write", "writer"}} {
			k := keys[i].(map[string]any)
			owExpectFields(t, "listed key", k, "key_id", "capability", "name", "created_at", "last_used_at")
			if k["key_id"] != want.id || k["capability"] != want.capability || k["name"] != want.name {
				t.Fatalf("listed key %d is %v, want %+v", i, k, want)
			}
			owString(t, k, "created_at")
		}
		body := string(r.Body)
		for _, secret := range []string{owSecretPart(readKey), owSecretPart(writeKey)} {
			if strings.Contains(body, secret) {
				t.Fatalf("key list shows a secret: %s", body)
			}
		}
		if strings.Contains(strings.ToLower(body), "hash") {
			t.Fatalf("key list mentions a hash: %s", body)
		}

		// Revoke: 204, and the key is refused on the very next request.
		owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+readID, a.OwnerSecret, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", readKey, nil))
		if ids := owKeyIDs(t, s, a.OwnerSecret); !slices.Equal(ids, []string{writeID}) {
			t.Fatalf("keys after revoke %v, want [%s]", ids, writeID)
		}
		owMe(t, s, writeKey) // the other key is untouched
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+readID, a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND", "")
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/keys/no-such-key", a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND", "")

		// Another account's owner cannot revoke this account's key.
		b := s.createAccount(t, "base")
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+writeID, b.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND", "")
		owMe(t, s, writeKey)

		for _, body := range []map[string]any{
			{"capability": "admin", "name": "x"},
			{"capability": "none", "name": "x"},
			{"capability": "READ", "name": "x"},
			{"name": "no capability"},
			{"capability": "read", "name": "x", "extra": true},
		} {
			owExpectError(t, do(t, "POST", s.URL+"/owner/v1/keys", a.OwnerSecret, body), http.StatusUnprocessableEntity, "VALIDATION", "")
		}
		if ids := owKeyIDs(t, s, a.OwnerSecret); len(ids) != 1 {
			t.Fatalf("refused key creations left keys behind: %v", ids)
		}
	})

	t.Run("CredentialsStayInTheirAPI", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "write", "agent")
		for _, rt := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/owner/v1/keys", nil},
			{"POST", "/owner/v1/keys", map[string]any{"capability": "write", "name": "escalate"}},
			{"PUT", "/owner/v1/plan", map[string]any{"plan": "extended"}},
			{"POST", "/owner/v1/owner-secret", map[string]any{"current_password": a.Password}},
			{"POST", "/owner/v1/password", map[string]any{"current_password": a.Password, "new_password": "another password"}},
			{"GET", "/owner/v1/portfolio/cards", nil},
			{"DELETE", "/owner/v1/sessions/current", nil},
			{"DELETE", "/owner/v1/account", map[string]any{"confirm": true, "current_password": a.Password}},
		} {
			owExpectUnauthorized(t, do(t, rt.method, s.URL+rt.path, key, rt.body))
		}
		// Nothing above changed anything.
		if ids := owKeyIDs(t, s, a.OwnerSecret); len(ids) != 1 {
			t.Fatalf("an API key managed keys: %v", ids)
		}
		if me := owMe(t, s, key); me["plan"] != "base" {
			t.Fatalf("an API key changed the plan: %v", me)
		}
		// The owner secret is not an API key either; nor is garbage.
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", a.OwnerSecret, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", "", nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", "", nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", "aws."+a.ID+".notthesecret", nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", s.AdminToken, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", key+"x", nil))
	})

	t.Run("PortfolioGrants", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, writeKey := owKey(t, s, a.OwnerSecret, "write", "writer")
		_, readKey := owKey(t, s, a.OwnerSecret, "read", "reader")

		card := owOwnerCard(t, s, a.OwnerSecret, owAddress(10), "owner card")
		id := owString(t, card, "id")
		if card["grant"] != "none" || card["effective_access"] != "write" {
			t.Fatalf("owner-created card %v, want grant none (and full access for the owner)", card)
		}
		owExpectFields(t, "owner card", card, "id", "version", "effective_access", "address", "name", "note", "color_key", "grant")

		// At grant none the agent cannot see it, but it counts.
		owExpectError(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil), http.StatusNotFound, "NOT_FOUND", "")
		r := do(t, "GET", s.URL+"/v1/portfolio/cards", writeKey, nil)
		expect(t, r, http.StatusOK, "")
		list := r.JSON(t)
		if ids := owStrings(t, list, "included_card_ids"); len(ids) != 0 || len(list["cards"].([]any)) != 0 || list["scope"] != "accessible_portfolio" {
			t.Fatalf("agent list shows a card at grant none: %s", r.Body)
		}
		if strings.Contains(string(r.Body), owAddress(10)) {
			t.Fatalf("agent list leaks the hidden card's address: %s", r.Body)
		}
		me := owMe(t, s, writeKey)
		if used := owNumber(t, owObject(t, me, "portfolio_cards"), "used"); used != 1 {
			t.Fatalf("portfolio_cards.used %d, want 1 (hidden cards count): %v", used, me)
		}
		if ids := owStrings(t, me, "accessible_card_ids"); len(ids) != 0 {
			t.Fatalf("accessible_card_ids %v at grant none", ids)
		}
		// The agent cannot change what it cannot see.
		owExpectError(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+id, writeKey, map[string]any{"expected_version": card["version"], "name": "x"}), http.StatusNotFound, "NOT_FOUND", "")

		// The owner's views carry the grant.
		r = do(t, "GET", s.URL+"/owner/v1/portfolio/cards/"+id, a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		if got := owObject(t, r.JSON(t), "card"); got["grant"] != "none" || got["id"] != id {
			t.Fatalf("owner GET card %s, want grant none", r.Body)
		}
		r = do(t, "GET", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		if ids := owStrings(t, r.JSON(t), "included_card_ids"); !slices.Equal(ids, []string{id}) {
			t.Fatalf("owner list %s, want the card", r.Body)
		}
		if c := r.JSON(t)["cards"].([]any)[0].(map[string]any); c["grant"] != "none" {
			t.Fatalf("owner list card %v, want grant none", c)
		}

		grant := func(level string) {
			t.Helper()
			r := do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/"+id, a.OwnerSecret, map[string]any{"level": level})
			expect(t, r, http.StatusOK, "")
			m := r.JSON(t)
			if m["level"] != level || m["id"] != id {
				t.Fatalf("grant answer %s, want level %s on %s", r.Body, level, id)
			}
		}

		// read: visible on the next request, read only even for a write key.
		grant("read")
		if ids := owStrings(t, owMe(t, s, writeKey), "accessible_card_ids"); !slices.Equal(ids, []string{id}) {
			t.Fatalf("accessible_card_ids %v after grant read, want [%s]", ids, id)
		}
		r = do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil)
		expect(t, r, http.StatusOK, "")
		agentView := owObject(t, r.JSON(t), "card")
		if agentView["effective_access"] != "read" || agentView["address"] != owAddress(10) || agentView["name"] != "owner card" {
			t.Fatalf("agent view at grant read: %v", agentView)
		}
		if _, shown := agentView["grant"]; shown {
			t.Fatalf("agent view shows the owner's grant field: %v", agentView)
		}
		owExpectError(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+id, writeKey, map[string]any{"expected_version": agentView["version"], "name": "x"}), http.StatusForbidden, "FORBIDDEN", "")

		// write: the write key may change it; the read key still only reads.
		grant("write")
		r = do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, readKey, nil)
		expect(t, r, http.StatusOK, "")
		if got := owObject(t, r.JSON(t), "card")["effective_access"]; got != "read" {
			t.Fatalf("read key on a write grant: effective_access %v, want read", got)
		}
		r = do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+id, writeKey, map[string]any{"expected_version": agentView["version"], "name": "renamed by agent"})
		expect(t, r, http.StatusOK, "")
		if got := owObject(t, r.JSON(t), "card"); got["name"] != "renamed by agent" || got["effective_access"] != "write" {
			t.Fatalf("agent PATCH at grant write: %v", got)
		}

		// none again: hidden on the next request.
		grant("none")
		owExpectError(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil), http.StatusNotFound, "NOT_FOUND", "")
		if ids := owStrings(t, owMe(t, s, readKey), "accessible_card_ids"); len(ids) != 0 {
			t.Fatalf("accessible_card_ids %v after grant none", ids)
		}

		// An agent-created card starts at write; the owner sees that grant.
		agentCard := owAgentCard(t, s, writeKey, owAddress(11), "agent card")
		if agentCard["effective_access"] != "write" {
			t.Fatalf("agent card %v", agentCard)
		}
		r = do(t, "GET", s.URL+"/owner/v1/portfolio/cards/"+agentCard["id"].(string), a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		if got := owObject(t, r.JSON(t), "card")["grant"]; got != "write" {
			t.Fatalf("owner view of an agent-created card: grant %v, want write", got)
		}
		if ids := owStrings(t, owMe(t, s, readKey), "accessible_card_ids"); !slices.Equal(ids, []string{agentCard["id"].(string)}) {
			t.Fatalf("accessible_card_ids %v, want only the agent card", ids)
		}

		// Refusals.
		owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/no-such-card", a.OwnerSecret, map[string]any{"level": "read"}), http.StatusNotFound, "NOT_FOUND", "")
		for _, body := range []any{map[string]any{"level": "admin"}, map[string]any{"level": "WRITE"}, map[string]any{}, map[string]any{"level": 2}} {
			owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/"+id, a.OwnerSecret, body), http.StatusUnprocessableEntity, "VALIDATION", "")
		}
		// Another account's owner cannot grant this account's card.
		b := s.createAccount(t, "base")
		owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/"+id, b.OwnerSecret, map[string]any{"level": "write"}), http.StatusNotFound, "NOT_FOUND", "")
		owExpectError(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil), http.StatusNotFound, "NOT_FOUND", "")
	})

	t.Run("SpaceGrants", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "write", "writer")
		owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/no-such-space", a.OwnerSecret, map[string]any{"level": "read"}), http.StatusNotFound, "NOT_FOUND", "")

		me := owMe(t, s, key)
		if ids := owStrings(t, me, "accessible_space_ids"); len(ids) != 0 {
			t.Fatalf("the first Space is visible before any grant: %v", me)
		}
		if sp := owObject(t, me, "bookmark_spaces"); owNumber(t, sp, "used") != 1 || owNumber(t, sp, "limit") != 1 {
			t.Fatalf("bookmark_spaces %v, want used 1 limit 1", sp)
		}
		spaceID := owFirstSpaceID(t, s, a.OwnerSecret)
		owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+spaceID, a.OwnerSecret, map[string]any{"level": "bogus"}), http.StatusUnprocessableEntity, "VALIDATION", "")
		for _, step := range []struct {
			level   string
			visible bool
		}{{"read", true}, {"none", false}, {"write", true}, {"none", false}} {
			r := do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+spaceID, a.OwnerSecret, map[string]any{"level": step.level})
			expect(t, r, http.StatusOK, "")
			if m := r.JSON(t); m["id"] != spaceID || m["level"] != step.level {
				t.Fatalf("Space grant answer %s", r.Body)
			}
			ids := owStrings(t, owMe(t, s, key), "accessible_space_ids")
			if got := slices.Contains(ids, spaceID); got != step.visible {
				t.Fatalf("after grant %s accessible_space_ids is %v (visible %v, want %v)", step.level, ids, got, step.visible)
			}
			// The agent's own Space list agrees, without the owner's grant field.
			r = do(t, "GET", s.URL+"/v1/bookmark-spaces", key, nil)
			expect(t, r, http.StatusOK, "")
			spaces, _ := r.JSON(t)["spaces"].([]any)
			if step.visible {
				if len(spaces) != 1 {
					t.Fatalf("agent Space list after grant %s: %s", step.level, r.Body)
				}
				sp := spaces[0].(map[string]any)
				if _, shown := sp["grant"]; shown || sp["id"] != spaceID || sp["effective_access"] != step.level {
					t.Fatalf("agent Space list after grant %s: %s", step.level, r.Body)
				}
			} else if len(spaces) != 0 {
				t.Fatalf("agent Space list after grant none: %s", r.Body)
			}
		}
	})

	t.Run("Plan", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "read", "reader")
		me := owMe(t, s, key)
		if me["plan"] != "base" || owNumber(t, owObject(t, me, "bookmark_spaces"), "limit") != 1 || owNumber(t, owObject(t, me, "portfolio_cards"), "limit") != 10 {
			t.Fatalf("base plan /v1/me: %v", me)
		}
		for _, step := range []struct {
			plan        string
			spacesLimit int
		}{{"extended", 10}, {"extended", 10}, {"base", 1}, {"extended", 10}} {
			r := do(t, "PUT", s.URL+"/owner/v1/plan", a.OwnerSecret, map[string]any{"plan": step.plan})
			expect(t, r, http.StatusOK, "")
			if m := r.JSON(t); m["plan"] != step.plan {
				t.Fatalf("plan answer %s, want %s", r.Body, step.plan)
			}
			me := owMe(t, s, key)
			if me["plan"] != step.plan || owNumber(t, owObject(t, me, "bookmark_spaces"), "limit") != step.spacesLimit || owNumber(t, owObject(t, me, "portfolio_cards"), "limit") != 10 {
				t.Fatalf("/v1/me after plan %s: %v", step.plan, me)
			}
		}
		for _, body := range []any{map[string]any{"plan": "gold"}, map[string]any{"plan": ""}, map[string]any{}, map[string]any{"plan": 1}} {
			owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/plan", a.OwnerSecret, body), http.StatusUnprocessableEntity, "VALIDATION", "")
		}
		if me := owMe(t, s, key); me["plan"] != "extended" {
			t.Fatalf("a refused plan change changed the plan: %v", me)
		}
	})

	t.Run("PasswordChangeRevokesEveryKeyAndTheOwnerSecret", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, k1 := owKey(t, s, a.OwnerSecret, "read", "one")
		_, k2 := owKey(t, s, a.OwnerSecret, "write", "two")
		session := owSession(t, s, a)
		const newPassword = "a brand new passphrase"

		owExpectError(t, do(t, "POST", s.URL+"/owner/v1/password", a.OwnerSecret, map[string]any{"current_password": "wrong password", "new_password": newPassword}), http.StatusUnauthorized, "UNAUTHORIZED", "")
		owExpectError(t, do(t, "POST", s.URL+"/owner/v1/password", a.OwnerSecret, map[string]any{"current_password": a.Password, "new_password": "short"}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "POST", s.URL+"/owner/v1/password", a.OwnerSecret, map[string]any{"current_password": a.Password}), http.StatusUnprocessableEntity, "VALIDATION", "")
		// Refusals revoked nothing.
		owMe(t, s, k1)
		owMe(t, s, k2)
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", session, nil), http.StatusOK, "")

		r := do(t, "POST", s.URL+"/owner/v1/password", a.OwnerSecret, map[string]any{"current_password": a.Password, "new_password": newPassword})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		owExpectFields(t, "password change answer", m, "owner_secret")
		newSecret := owString(t, m, "owner_secret")
		if newSecret == a.OwnerSecret || !strings.HasPrefix(newSecret, "aws."+a.ID+".") {
			t.Fatalf("password change answered owner secret %q (old %q)", newSecret, a.OwnerSecret)
		}
		// The old owner secret, every key and every session are revoked.
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", k1, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", k2, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", session, nil))
		if ids := owKeyIDs(t, s, newSecret); len(ids) != 0 {
			t.Fatalf("keys listed after a password change: %v", ids)
		}
		owExpectError(t, owSignIn(t, s, a.ID, a.Password), http.StatusUnauthorized, "UNAUTHORIZED", "")
		expect(t, owSignIn(t, s, a.ID, newPassword), http.StatusCreated, "")
		// New keys work again.
		_, k3 := owKey(t, s, newSecret, "read", "three")
		owMe(t, s, k3)
	})

	t.Run("PasswordChangeInASession", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "write", "k")
		session, other := owSession(t, s, a), owSession(t, s, a)
		r := do(t, "POST", s.URL+"/owner/v1/password", session, map[string]any{"current_password": a.Password, "new_password": "changed in a session"})
		expect(t, r, http.StatusOK, "")
		newSecret := owString(t, r.JSON(t), "owner_secret")
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", key, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil))
		// Every other session ends; the one that made the change goes on.
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", other, nil))
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", session, nil), http.StatusOK, "")
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", newSecret, nil), http.StatusOK, "")
		expect(t, owSignIn(t, s, a.ID, "changed in a session"), http.StatusCreated, "")
	})

	t.Run("OwnerSecretRotationNeedsThePasswordAndRevokesEveryKey", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, k1 := owKey(t, s, a.OwnerSecret, "read", "one")
		_, k2 := owKey(t, s, a.OwnerSecret, "write", "two")
		rotate := func(bearer string, body any) response {
			return do(t, "POST", s.URL+"/owner/v1/owner-secret", bearer, body)
		}

		// Without the current password, or with a wrong one, nothing rotates.
		owExpectError(t, rotate(a.OwnerSecret, nil), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, rotate(a.OwnerSecret, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, rotate(a.OwnerSecret, map[string]any{"current_password": "wrong password"}), http.StatusUnauthorized, "UNAUTHORIZED", "")
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil), http.StatusOK, "")
		owMe(t, s, k1)

		r := rotate(a.OwnerSecret, map[string]any{"current_password": a.Password})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		owExpectFields(t, "rotation answer", m, "owner_secret")
		newSecret := owString(t, m, "owner_secret")
		if newSecret == a.OwnerSecret {
			t.Fatal("rotation returned the old secret")
		}
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil))
		owExpectUnauthorized(t, rotate(a.OwnerSecret, map[string]any{"current_password": a.Password}))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", k1, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", k2, nil))
		if ids := owKeyIDs(t, s, newSecret); len(ids) != 0 {
			t.Fatalf("keys listed after a rotation: %v", ids)
		}
		_, k3 := owKey(t, s, newSecret, "write", "three")
		owMe(t, s, k3)
		// The password is untouched, and a session may rotate too.
		session := owSession(t, s, a)
		expect(t, rotate(session, map[string]any{"current_password": a.Password}), http.StatusOK, "")
	})

	t.Run("AccountDeletion", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "write", "k")
		owAgentCard(t, s, key, owAddress(20), "doomed")
		session := owSession(t, s, a)

		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, nil), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{"confirm": false}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{"confirm": "yes"}), http.StatusUnprocessableEntity, "VALIDATION", "")
		// The current password too: without it 422, a wrong one 401.
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{"confirm": true}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "DELETE", s.URL+"/owner/v1/account", session, map[string]any{"confirm": true, "current_password": "not it"}), http.StatusUnauthorized, "UNAUTHORIZED", "")
		owMe(t, s, key) // still there

		owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{"confirm": true, "current_password": a.Password}))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", key, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/portfolio/cards", key, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", session, nil))
		owExpectUnauthorized(t, do(t, "DELETE", s.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{"confirm": true, "current_password": a.Password}))
		owExpectError(t, owSignIn(t, s, a.ID, a.Password), http.StatusUnauthorized, "UNAUTHORIZED", "")
	})
}
