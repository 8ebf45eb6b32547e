package system_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSheetGuideIsPublic checks that the Sheet guide is served as Markdown
// without a key, and that a key sent anyway changes nothing.
func TestSheetGuideIsPublic(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	key := s.createKey(t, s.createAccount(t, "base"), "read")
	for _, bearer := range []string{"", key, "garbage"} {
		r := do(t, "GET", s.URL+"/v1/docs/sheets", bearer, nil)
		expect(t, r, http.StatusOK, "")
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
			t.Fatalf("Content-Type %q, want text/markdown", ct)
		}
		body := string(r.Body)
		for _, topic := range []string{"## Reading", "view=sparse", "next_offset", "PUT", "moves up one slot", "STALE_VERSION", "Retry-After", "409 CONFLICT"} {
			if !strings.Contains(body, topic) && !strings.Contains(body, strings.ToLower(topic)) {
				t.Errorf("the guide does not cover %q", topic)
			}
		}
	}
	r := do(t, "OPTIONS", s.URL+"/v1/docs/sheets", "", nil)
	expect(t, r, http.StatusNoContent, "")
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") {
		t.Fatalf("Allow %q", allow)
	}
	expect(t, do(t, "POST", s.URL+"/v1/docs/sheets", "", "{}"), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
}
