package system_test

import (
	"net/http"
	"testing"
)

// The block explorer the site links to, over the owner API end to end:
// none by default; one of the list is kept, through a snapshot and a
// restart; a URL or an unknown name is 422 with {"code","error"} and
// changes nothing; an agent's key is refused.
func TestOwnerExplorerSettingEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	get := func() map[string]any {
		t.Helper()
		r := do(t, "GET", s.URL+"/owner/v1/explorer", a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		return r.JSON(t)
	}
	if m := get(); m["explorer"] != "none" || m["base_url"] != "" {
		t.Fatalf("a new account's explorer: %v", m)
	}
	r := do(t, "PUT", s.URL+"/owner/v1/explorer", a.OwnerSecret, map[string]any{"explorer": "mempool.space"})
	expect(t, r, http.StatusOK, "")
	if m := r.JSON(t); m["explorer"] != "mempool.space" || m["base_url"] != "https://mempool.space" {
		t.Fatalf("PUT mempool.space: %s", r.Body)
	}
	for _, bad := range []any{"https://evil.example/tx/", "blockchair.com", "", 7} {
		r = do(t, "PUT", s.URL+"/owner/v1/explorer", a.OwnerSecret, map[string]any{"explorer": bad})
		if r.Status == http.StatusBadRequest { // a number is not a string: the body's shape
			owExpectError(t, r, http.StatusBadRequest, "VALIDATION", "")
			continue
		}
		owExpectError(t, r, http.StatusUnprocessableEntity, "VALIDATION", "")
	}
	owExpectError(t, do(t, "PUT", s.URL+"/owner/v1/explorer", a.OwnerSecret, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION", "")
	key := s.createKey(t, a, "write")
	expect(t, do(t, "PUT", s.URL+"/owner/v1/explorer", key, map[string]any{"explorer": "none"}), http.StatusUnauthorized, "UNAUTHORIZED")
	if m := get(); m["explorer"] != "mempool.space" {
		t.Fatalf("after refused writes: %v", m)
	}

	expect(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil), http.StatusOK, "")
	s.stop()
	s.start()
	if m := get(); m["explorer"] != "mempool.space" {
		t.Fatalf("after a snapshot and a restart: %v", m)
	}
}
