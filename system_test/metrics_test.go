package system_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestMetricsOnTheAdminListener checks that /metrics serves raft state,
// apply latency, commit batch sizes, per-route request counts, actor
// counts and the build to the operator token, and that no secret or ID reaches a label.
func TestMetricsOnTheAdminListener(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	key := s.createKey(t, a, "write")
	r := do(t, "POST", s.URL+"/v1/portfolio/cards", key, map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"})
	expect(t, r, http.StatusCreated, "")
	id := r.JSON(t)["card"].(map[string]any)["id"].(string)
	expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, key, nil), http.StatusOK, "")

	m := do(t, "GET", s.AdminURL+"/metrics", s.AdminToken, nil)
	expect(t, m, http.StatusOK, "")
	body := string(m.Body)
	for _, want := range []string{
		"addrwatch_raft_state 2",
		"addrwatch_accounts 1",
		"addrwatch_apply_batch_seconds_count",
		"addrwatch_commit_batch_commands_count",
		`addrwatch_http_requests_total{method="POST",route="/v1/portfolio/cards",status="201"} 1`,
		`addrwatch_http_request_seconds_count{method="GET",route="/v1/portfolio/cards/{card_id}"} 1`,
		`addrwatch_build_info{goversion="` + runtime.Version() + `",modified=`, // the test's build of the server: the same Go
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Profiles show the command line: they need the operator token.
	expect(t, do(t, "GET", s.AdminURL+"/debug/pprof/", "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	expect(t, do(t, "GET", s.AdminURL+"/debug/pprof/cmdline", "garbage", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	expect(t, do(t, "GET", s.AdminURL+"/debug/pprof/", s.AdminToken, nil), http.StatusOK, "")
	for _, secret := range []string{key, id, a.OwnerSecret, a.ID} {
		if strings.Contains(body, secret) {
			t.Fatalf("/metrics shows a secret or an ID")
		}
	}
}
