package system_test

import (
	"net/http"
	"strings"
	"testing"
)

// owClusterStatus returns GET /admin/v1/cluster.
func owClusterStatus(t testing.TB, s *server) map[string]any {
	t.Helper()
	r := do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// owCheckOneNodeCluster checks the status of a one-node cluster of s.
func owCheckOneNodeCluster(t testing.TB, s *server, st map[string]any) {
	t.Helper()
	if st["leader"] != "node1" {
		t.Fatalf("leader %v, want node1: %v", st["leader"], st)
	}
	nodes, isList := st["nodes"].([]any)
	if !isList || len(nodes) != 1 {
		t.Fatalf("nodes %v, want one node", st["nodes"])
	}
	n := nodes[0].(map[string]any)
	for field, want := range map[string]string{"id": "node1", "raft_addr": s.raftAddr, "state": "leader", "suffrage": "voter"} {
		if n[field] != want {
			t.Fatalf("node %s is %v, want %q: %v", field, n[field], want, n)
		}
	}
	if owNumber(t, st, "applied_index") <= 0 {
		t.Fatalf("applied_index %v, want > 0", st["applied_index"])
	}
}

func TestAdminAPIEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	accounts := s.AdminURL + "/admin/v1/accounts"

	t.Run("CreateAccount", func(t *testing.T) {
		for _, plan := range []string{"base", "extended"} {
			r := do(t, "POST", accounts, s.AdminToken, map[string]any{"plan": plan, "password": "eight ch"})
			expect(t, r, http.StatusCreated, "")
			m := r.JSON(t)
			id, secret := owString(t, m, "account_id"), owString(t, m, "owner_secret")
			for _, f := range owFields(m) {
				if f != "account_id" && f != "owner_secret" && f != "plan" {
					t.Fatalf("account creation answer has unexpected field %q: %s", f, r.Body)
				}
			}
			if p, shown := m["plan"]; shown && p != plan {
				t.Fatalf("plan %v, want %s", p, plan)
			}
			if strings.Contains(string(r.Body), "eight ch") {
				t.Fatalf("answer echoes the password: %s", r.Body)
			}
			// The secret and the password are live credentials of that account.
			_, key := owKey(t, s, secret, "read", "check")
			if me := owMe(t, s, key); me["account_id"] != id || me["plan"] != plan {
				t.Fatalf("/v1/me of the new %s account: %v", plan, me)
			}
			expect(t, owSignIn(t, s, id, "eight ch"), http.StatusCreated, "")
		}
		a, b := s.createAccount(t, "base"), s.createAccount(t, "base")
		if a.ID == b.ID || a.OwnerSecret == b.OwnerSecret {
			t.Fatalf("two accounts share an id or a secret: %+v %+v", a, b)
		}

		long := strings.Repeat("p", 73)
		for _, tc := range []struct {
			name string
			body any
		}{
			{"bad plan", map[string]any{"plan": "gold", "password": "long enough"}},
			{"plan case", map[string]any{"plan": "Base", "password": "long enough"}},
			{"short password", map[string]any{"plan": "base", "password": "seven c"}},
			{"empty password", map[string]any{"plan": "base", "password": ""}},
			{"long password", map[string]any{"plan": "base", "password": long}},
			{"missing plan", map[string]any{"password": "long enough"}},
			{"missing password", map[string]any{"plan": "base"}},
			{"empty object", map[string]any{}},
			{"unknown field", map[string]any{"plan": "base", "password": "long enough", "admin": true}},
			{"wrong type", map[string]any{"plan": "base", "password": 12345678}},
			{"not json", "plan=base"},
			{"array", []any{"base"}},
		} {
			r := do(t, "POST", accounts, s.AdminToken, tc.body)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("%s: status %d, want 422; body %s", tc.name, r.Status, r.Body)
			}
			owExpectError(t, r, http.StatusUnprocessableEntity, "VALIDATION", "")
		}
		// No body at all (and so no JSON content type).
		owExpectError(t, do(t, "POST", accounts, s.AdminToken, nil), http.StatusUnprocessableEntity, "VALIDATION", "")
	})

	t.Run("AdminToken", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "write", "agent")
		session := owSession(t, s, a)
		body := map[string]any{"plan": "base", "password": "long enough"}
		for name, token := range map[string]string{
			"none":         "",
			"wrong":        s.AdminToken + "x",
			"prefix":       s.AdminToken[:len(s.AdminToken)-1],
			"api key":      key,
			"owner secret": a.OwnerSecret,
			"session":      session,
		} {
			t.Logf("token: %s", name)
			owExpectUnauthorized(t, do(t, "POST", accounts, token, body))
			owExpectUnauthorized(t, do(t, "GET", s.AdminURL+"/admin/v1/cluster", token, nil))
			owExpectUnauthorized(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", token, nil))
			owExpectUnauthorized(t, do(t, "POST", s.AdminURL+"/admin/v1/cluster/nodes", token, map[string]any{"id": "node9", "raft_addr": "127.0.0.1:1"}))
			owExpectUnauthorized(t, do(t, "DELETE", s.AdminURL+"/admin/v1/cluster/nodes/node1", token, nil))
		}
		// Another scheme carrying the right token is still refused.
		owExpectUnauthorized(t, do(t, "GET", s.AdminURL+"/admin/v1/cluster", "", nil, "Authorization", "Basic "+s.AdminToken))
		owExpectUnauthorized(t, do(t, "GET", s.AdminURL+"/admin/v1/cluster", "", nil, "Authorization", s.AdminToken))
		// The scheme name is case-insensitive.
		expect(t, do(t, "GET", s.AdminURL+"/admin/v1/cluster", "", nil, "Authorization", "bearer "+s.AdminToken), http.StatusOK, "")
		// The admin API lives only on the admin listener, and the admin
		// token is not an API key or an owner credential.
		owExpectError(t, do(t, "POST", s.URL+"/admin/v1/accounts", s.AdminToken, body), http.StatusNotFound, "NOT_FOUND", "")
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", s.AdminToken, nil))
		// Nothing above removed the one voter.
		owCheckOneNodeCluster(t, s, owClusterStatus(t, s))
	})

	t.Run("Cluster", func(t *testing.T) {
		st := owClusterStatus(t, s)
		owCheckOneNodeCluster(t, s, st)
		before := owNumber(t, st, "applied_index")
		s.createAccount(t, "base")
		after := owNumber(t, owClusterStatus(t, s), "applied_index")
		if after <= before {
			t.Fatalf("applied_index %d after a write, want > %d", after, before)
		}
		// Reads do not write the log.
		a := s.createAccount(t, "base")
		idle := owNumber(t, owClusterStatus(t, s), "applied_index")
		for range 5 {
			expect(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil), http.StatusOK, "")
		}
		if got := owNumber(t, owClusterStatus(t, s), "applied_index"); got != idle {
			t.Fatalf("applied_index moved from %d to %d on reads only", idle, got)
		}
		owExpectError(t, do(t, "POST", s.AdminURL+"/admin/v1/cluster/nodes", s.AdminToken, map[string]any{"raft_addr": "127.0.0.1:1"}), http.StatusUnprocessableEntity, "VALIDATION", "")
		owExpectError(t, do(t, "POST", s.AdminURL+"/admin/v1/cluster/nodes", s.AdminToken, map[string]any{"id": "node9"}), http.StatusUnprocessableEntity, "VALIDATION", "")
	})

	t.Run("Snapshot", func(t *testing.T) {
		s.createAccount(t, "base")
		for i := range 2 { // the second has nothing new to snapshot and still succeeds
			r := do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil)
			expect(t, r, http.StatusOK, "")
			if m := r.JSON(t); m["snapshot_taken"] != true {
				t.Fatalf("snapshot %d answer %s", i, r.Body)
			}
		}
		// The node keeps serving writes after a snapshot.
		a := s.createAccount(t, "base")
		owKey(t, s, a.OwnerSecret, "read", "after snapshot")
	})

	t.Run("Health", func(t *testing.T) {
		for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready"} {
			r := do(t, "GET", s.AdminURL+path, "", nil)
			expect(t, r, http.StatusOK, "")
			m := r.JSON(t)
			owExpectFields(t, path, m, "status")
			if m["status"] != want {
				t.Fatalf("%s: %s, want status %s", path, r.Body, want)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("%s: Content-Type %q", path, ct)
			}
			// Health answers whatever the credential.
			expect(t, do(t, "GET", s.AdminURL+path, "garbage", nil), http.StatusOK, "")
			// And it is not on the public listener.
			owExpectError(t, do(t, "GET", s.URL+path, "", nil), http.StatusNotFound, "NOT_FOUND", "")
		}
	})
}
