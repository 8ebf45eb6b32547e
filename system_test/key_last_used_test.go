package system_test

import (
	"net/http"
	"testing"
	"time"
)

// listedLastUse is a key's last_used_at in GET /owner/v1/keys (nil: null).
func listedLastUse(t *testing.T, s *server, a account, keyID string) any {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	for _, k := range r.JSON(t)["keys"].([]any) {
		if k := k.(map[string]any); k["key_id"] == keyID {
			return k["last_used_at"]
		}
	}
	t.Fatalf("key %s not listed: %s", keyID, r.Body)
	return nil
}

// TestKeyLastUsedShowsUp: an agent's request shows in the owner's key list
// as the key's last_used_at, shortly after (it is recorded in the
// background), and recording it changes no revision the agent sees.
func TestKeyLastUsedShowsUp(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	r := do(t, "POST", s.URL+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": "read", "name": "watcher"})
	expect(t, r, http.StatusCreated, "")
	key, keyID := r.JSON(t)["key"].(string), r.JSON(t)["key_id"].(string)
	if got := listedLastUse(t, s, a, keyID); got != nil {
		t.Fatalf("an unused key lists last_used_at %v, want null", got)
	}

	before := time.Now().Add(-time.Second) // the server's clock is this machine's
	spaces := do(t, "GET", s.URL+"/v1/bookmark-spaces", key, nil)
	expect(t, spaces, http.StatusOK, "")
	deadline := time.Now().Add(10 * time.Second)
	var lastUsed any
	for lastUsed == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		lastUsed = listedLastUse(t, s, a, keyID)
	}
	stamp, isString := lastUsed.(string)
	if !isString {
		t.Fatalf("last_used_at %v ten seconds after a use, want a time", lastUsed)
	}
	at, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil || at.Before(before) || at.After(time.Now()) {
		t.Fatalf("last_used_at %q (%v), want a time of the request", stamp, err)
	}
	again := do(t, "GET", s.URL+"/v1/bookmark-spaces", key, nil)
	expect(t, again, http.StatusOK, "")
	if was, now := spaces.JSON(t)["bookmark_revision"], again.JSON(t)["bookmark_revision"]; was == nil || was != now {
		t.Fatalf("recording the key's use moved bookmark_revision from %v to %v", was, now)
	}
}
