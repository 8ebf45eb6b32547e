package system_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestAgentMe checks GET /v1/me over real HTTP: the key's capability, the
// accessible card and Space ids (grant at least read), usage counts that
// include hidden resources, rate_limit.remaining null, and which
// credentials are refused.
func TestAgentMe(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)

	t.Run("shape_of_a_new_account", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		for key, capability := range map[string]string{e.write: "write", e.read: "read"} {
			r := do(t, "GET", s.URL+"/v1/me", key, nil)
			expect(t, r, http.StatusOK, "")
			me := r.JSON(t)
			apFields(t, me, map[string]any{"capability": capability})
			if ids := apStrings(t, me["accessible_card_ids"], "accessible_card_ids"); len(ids) != 0 {
				t.Fatalf("new account has accessible cards %v", ids)
			}
			if ids := apStrings(t, me["accessible_space_ids"], "accessible_space_ids"); len(ids) != 0 {
				t.Fatalf("the first Space starts at none, but /me lists %v", ids)
			}
			if u, l := apUsage(t, me, "portfolio_cards"), apLimit(t, me, "portfolio_cards"); u != 0 || l != 10 {
				t.Fatalf("portfolio_cards %d/%d, want 0/10", u, l)
			}
			// The first Space exists (at none) and counts.
			if u, l := apUsage(t, me, "bookmark_spaces"), apLimit(t, me, "bookmark_spaces"); u != 1 || l != 1 {
				t.Fatalf("bookmark_spaces %d/%d, want 1/1 on the base plan", u, l)
			}
			rl, isObject := me["rate_limit"].(map[string]any)
			if !isObject {
				t.Fatalf("/me has no rate_limit object: %s", r.Body)
			}
			if v, present := rl["remaining"]; !present || v != nil {
				t.Fatalf("rate_limit.remaining is %v (present %v), want JSON null: %s", v, present, r.Body)
			}
			if !bytes.Contains(r.Body, []byte(`"remaining":null`)) {
				t.Fatalf("rate_limit.remaining is not written as null: %s", r.Body)
			}
		}
	})

	t.Run("cards_accessible_and_counted", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		hiddenAddr := apAddress("me-hidden")
		hidden := apOwnerCreateCard(t, s, e.acct, hiddenAddr, "hidden name")
		readC := apOwnerCreateCard(t, s, e.acct, apAddress("me-read"), "")
		apGrantCard(t, s, e.acct, apID(readC), "read")
		writeC := apOwnerCreateCard(t, s, e.acct, apAddress("me-write"), "")
		apGrantCard(t, s, e.acct, apID(writeC), "write")
		agentC := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("me-agent")})

		want := []string{apID(readC), apID(writeC), apID(agentC)}
		for _, key := range []string{e.read, e.write} {
			r := do(t, "GET", s.URL+"/v1/me", key, nil)
			expect(t, r, http.StatusOK, "")
			me := r.JSON(t)
			apSameSet(t, "accessible_card_ids", apStrings(t, me["accessible_card_ids"], "accessible_card_ids"), want)
			if u, l := apUsage(t, me, "portfolio_cards"), apLimit(t, me, "portfolio_cards"); u != 4 || l != 10 {
				t.Fatalf("portfolio_cards %d/%d, want 4/10 (the hidden card counts)", u, l)
			}
			for _, leak := range []string{apID(hidden), hiddenAddr, "hidden name"} {
				if bytes.Contains(r.Body, []byte(leak)) {
					t.Fatalf("/me reveals %q of a card at none: %s", leak, r.Body)
				}
			}
		}

		// Grant changes show on the next request.
		apGrantCard(t, s, e.acct, apID(hidden), "read")
		apGrantCard(t, s, e.acct, apID(writeC), "none")
		apGrantCard(t, s, e.acct, apID(agentC), "none")
		me := apMe(t, s, e.read)
		apSameSet(t, "accessible_card_ids after grant changes", apStrings(t, me["accessible_card_ids"], "accessible_card_ids"), []string{apID(hidden), apID(readC)})
		if u := apUsage(t, me, "portfolio_cards"); u != 4 {
			t.Fatalf("portfolio_cards.used %d, want 4", u)
		}

		// A deleted card stops counting.
		r := do(t, "DELETE", s.URL+"/owner/v1/portfolio/cards/"+apID(writeC), e.acct.OwnerSecret, map[string]any{"expected_version": writeC["version"]})
		expect(t, r, http.StatusOK, "")
		if u := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); u != 3 {
			t.Fatalf("portfolio_cards.used %d after a delete, want 3", u)
		}
	})

	t.Run("spaces_accessible_and_counted", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		space := apFirstSpaceID(t, s, e.acct)
		grant := func(level string) {
			t.Helper()
			r := do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+space, e.acct.OwnerSecret, map[string]any{"level": level})
			expect(t, r, http.StatusOK, "")
		}
		check := func(key string, want []string, limit int) {
			t.Helper()
			r := do(t, "GET", s.URL+"/v1/me", key, nil)
			expect(t, r, http.StatusOK, "")
			me := r.JSON(t)
			apSameSet(t, "accessible_space_ids", apStrings(t, me["accessible_space_ids"], "accessible_space_ids"), want)
			if u, l := apUsage(t, me, "bookmark_spaces"), apLimit(t, me, "bookmark_spaces"); u != 1 || l != limit {
				t.Fatalf("bookmark_spaces %d/%d, want 1/%d", u, l, limit)
			}
			if len(want) == 0 && bytes.Contains(r.Body, []byte(space)) {
				t.Fatalf("/me reveals the id of a Space at none: %s", r.Body)
			}
		}
		check(e.write, nil, 1)
		grant("read")
		check(e.write, []string{space}, 1)
		check(e.read, []string{space}, 1)
		grant("write")
		check(e.read, []string{space}, 1)
		grant("none")
		check(e.write, nil, 1)
		check(e.read, nil, 1)

		// The extended plan raises the Space limit; the count stays.
		grant("read")
		r := do(t, "PUT", s.URL+"/owner/v1/plan", e.acct.OwnerSecret, map[string]any{"plan": "extended"})
		expect(t, r, http.StatusOK, "")
		check(e.read, []string{space}, 10)
		r = do(t, "PUT", s.URL+"/owner/v1/plan", e.acct.OwnerSecret, map[string]any{"plan": "base"})
		expect(t, r, http.StatusOK, "")
		check(e.read, []string{space}, 1)
	})

	t.Run("extended_plan_limits", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "extended")
		me := apMe(t, s, e.write)
		if u, l := apUsage(t, me, "bookmark_spaces"), apLimit(t, me, "bookmark_spaces"); u != 1 || l != 10 {
			t.Fatalf("bookmark_spaces %d/%d, want 1/10 on the extended plan", u, l)
		}
		if l := apLimit(t, me, "portfolio_cards"); l != 10 {
			t.Fatalf("portfolio_cards.limit %d, want 10", l)
		}
	})

	t.Run("owner_credentials_are_refused_on_v1", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		expect(t, do(t, "GET", s.URL+"/v1/me", e.acct.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards", e.acct.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.acct.OwnerSecret, map[string]any{"address": apAddress("owner-on-v1")}), http.StatusUnauthorized, "UNAUTHORIZED")
		r := do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"account_id": e.acct.ID, "password": e.acct.Password})
		expect(t, r, http.StatusCreated, "")
		session := r.JSON(t)["session"].(string)
		expect(t, do(t, "GET", s.URL+"/v1/me", session, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		// And the other way round: an API key is not an owner credential.
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", e.write, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		if l := apList(t, s, e.write); len(l.ids) != 0 {
			t.Fatalf("the owner secret created a card over /v1: %s", l.raw)
		}
	})

	t.Run("missing_garbage_and_revoked_keys", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		other := apSetup(t, s, "base")
		parts := strings.Split(e.write, ".")
		wrongSecret := strings.Join(parts[:3], ".") + "." + strings.Repeat("a", len(parts[3]))
		otherAccount := parts[0] + "." + other.acct.ID + "." + parts[2] + "." + parts[3]
		for name, auth := range map[string]string{
			"no header":                     "",
			"empty bearer":                  "Bearer ",
			"garbage":                       "Bearer garbage",
			"wrong scheme":                  "Basic " + e.write,
			"no scheme":                     e.write,
			"wrong secret":                  "Bearer " + wrongSecret,
			"key under another account":     "Bearer " + otherAccount,
			"truncated":                     "Bearer " + e.write[:len(e.write)-1],
			"overlong":                      "Bearer " + e.write + strings.Repeat("x", 300),
			"empty part":                    "Bearer awk..." + parts[2] + "." + parts[3],
			"unknown account":               "Bearer awk.nosuchaccount00." + parts[2] + "." + parts[3],
			"owner-secret shape of the key": "Bearer aws." + e.acct.ID + "." + parts[3],
		} {
			for _, q := range []struct{ method, path string }{{"GET", "/v1/me"}, {"GET", "/v1/portfolio/cards"}, {"POST", "/v1/portfolio/cards"}} {
				var body []byte
				if q.method == "POST" {
					body = []byte(`{"address":"` + apAddress("bad-cred") + `"}`)
				}
				var headers []string
				if auth != "" {
					headers = []string{"Authorization", auth}
				}
				r, err := apRaw(q.method, s.URL+q.path, "", body, "application/json", headers...)
				if err != nil {
					t.Fatal(err)
				}
				apExpect(t, name+" on "+q.method+" "+q.path, r, http.StatusUnauthorized, "UNAUTHORIZED")
			}
		}

		// Revoking one key stops it on the next request and leaves the others.
		apMe(t, s, e.write)
		r := do(t, "DELETE", s.URL+"/owner/v1/keys/"+e.writeID, e.acct.OwnerSecret, nil)
		expect(t, r, http.StatusNoContent, "")
		expect(t, do(t, "GET", s.URL+"/v1/me", e.write, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards", e.write, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("revoked")}), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards/validate", e.write, map[string]any{"address": apAddress("revoked")}), http.StatusUnauthorized, "UNAUTHORIZED")
		apFields(t, apMe(t, s, e.read), map[string]any{"capability": "read"})
		apFields(t, apMe(t, s, e.write2), map[string]any{"capability": "write"})
		if l := apList(t, s, e.write2); len(l.ids) != 0 {
			t.Fatalf("a revoked key created a card: %s", l.raw)
		}
	})

	t.Run("owner_credential_changes_revoke_keys", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		// Sign-out ends the session only.
		r := do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"account_id": e.acct.ID, "password": e.acct.Password})
		expect(t, r, http.StatusCreated, "")
		session := r.JSON(t)["session"].(string)
		expect(t, do(t, "DELETE", s.URL+"/owner/v1/sessions/current", session, nil), http.StatusNoContent, "")
		apFields(t, apMe(t, s, e.write), map[string]any{"capability": "write"})
		apFields(t, apMe(t, s, e.read), map[string]any{"capability": "read"})

		// Rotating the owner secret revokes every key.
		r = do(t, "POST", s.URL+"/owner/v1/owner-secret", e.acct.OwnerSecret, map[string]any{"current_password": e.acct.Password})
		expect(t, r, http.StatusOK, "")
		e.acct.OwnerSecret = r.JSON(t)["owner_secret"].(string)
		for _, key := range []string{e.write, e.read, e.write2} {
			expect(t, do(t, "GET", s.URL+"/v1/me", key, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		}

		// A password change revokes every key.
		key, _ := apCreateKey(t, s, e.acct, "read")
		apMe(t, s, key)
		r = do(t, "POST", s.URL+"/owner/v1/password", e.acct.OwnerSecret, map[string]any{"current_password": e.acct.Password, "new_password": "another good password"})
		expect(t, r, http.StatusOK, "")
		e.acct.OwnerSecret = r.JSON(t)["owner_secret"].(string)
		expect(t, do(t, "GET", s.URL+"/v1/me", key, nil), http.StatusUnauthorized, "UNAUTHORIZED")

		// Deleting the account revokes every key.
		key, _ = apCreateKey(t, s, e.acct, "write")
		apMe(t, s, key)
		expect(t, do(t, "DELETE", s.URL+"/owner/v1/account", e.acct.OwnerSecret, map[string]any{"confirm": true, "current_password": "another good password"}), http.StatusNoContent, "")
		expect(t, do(t, "GET", s.URL+"/v1/me", key, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", key, map[string]any{"address": apAddress("after-delete")}), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}
