package system_test

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The owner's notification settings over real HTTP against the real
// server (raft, actors and all): every endpoint of /owner/v1/notifications,
// a webhook's secret shown once and never again, the URL's token never in
// an answer nor anywhere in the data dir, a loopback URL refused unless
// the server runs with --notify-allow-private, and the refusals.

// ntURL is the notifications API of s.
func ntURL(s *server, path string) string { return s.URL + "/owner/v1/notifications" + path }

// noRelay is an SMTP relay flag set for a server that must accept email
// channels but is never asked to send one (nothing listens there).
var noRelay = []string{"--smtp-relay", "127.0.0.1:9", "--smtp-from", "addrwatch@example.com"}

func TestNotificationChannels(t *testing.T) {
	t.Parallel()
	s := startServer(t, noRelay...)
	a := s.createAccount(t, "extended")
	agentKey := s.createKey(t, a, "write")
	const token = "tok3n-in-the-path-4f1c9a"
	hookURL := "https://93.184.215.14/hooks/" + token + "?sig=" + token

	// A loopback URL is refused, naming why, without quoting the URL.
	r := do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "webhook", "name": "local", "url": "http://127.0.0.1:9/" + token})
	expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
	if msg := string(r.Body); !strings.Contains(msg, "loopback") || strings.Contains(msg, token) {
		t.Errorf("the refusal of a loopback URL: %s", msg)
	}

	// A webhook: the secret is in this answer only.
	r = do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "webhook", "name": "Hook <b>", "url": hookURL})
	expect(t, r, http.StatusCreated, "")
	created := r.JSON(t)
	secret := owString(t, created, "secret")
	hook := owObject(t, created, "channel")
	hookID := owString(t, hook, "id")
	if !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(hookID, "nc_") || hook["display"] != "https://93.184.215.14/…" || hook["enabled"] != true {
		t.Errorf("created %s", r.Body)
	}
	if strings.Contains(string(r.Body), token) {
		t.Errorf("the creation's answer quotes the URL's token: %s", r.Body)
	}
	expect(t, do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "ntfy", "name": "phone", "url": "https://1.1.1.1/topic-" + token}), http.StatusCreated, "")
	r = do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "email", "name": "me", "address": "Owner <owner@example.com>"})
	expect(t, r, http.StatusCreated, "")
	mail := r.JSON(t)
	if _, has := mail["secret"]; has || owObject(t, mail, "channel")["display"] != "owner@example.com" {
		t.Errorf("email channel %s", r.Body)
	}
	mailID := owString(t, owObject(t, mail, "channel"), "id")

	r = do(t, "GET", ntURL(s, "/channels"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if body := string(r.Body); strings.Contains(body, secret) || strings.Contains(body, token) || strings.Count(body, `"id"`) != 3 {
		t.Errorf("the list shows a secret or a URL's token, or not every channel: %s", body)
	}

	// Rename, turn off and on, rotate: a new secret, shown once.
	r = do(t, "PATCH", ntURL(s, "/channels/"+hookID), a.OwnerSecret, map[string]any{"name": "renamed", "enabled": false})
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); v["name"] != "renamed" || v["enabled"] != false || v["disabled_reason"] != "owner" {
		t.Errorf("patched %s", r.Body)
	}
	r = do(t, "PATCH", ntURL(s, "/channels/"+hookID), a.OwnerSecret, map[string]any{"enabled": true})
	expect(t, r, http.StatusOK, "")
	r = do(t, "POST", ntURL(s, "/channels/"+hookID+"/secret"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	rotated := owString(t, r.JSON(t), "secret")
	if rotated == secret || !strings.HasPrefix(rotated, "whsec_") {
		t.Errorf("rotated secret %q (old %q)", rotated, secret)
	}
	if v := r.JSON(t); v["previous_secret_until"] != nil {
		t.Errorf("a rotation without a grace keeps the old secret: %s", r.Body)
	}
	// With a grace: the old secret signs until a time the answer and the
	// list both give; a bad grace is refused and changes nothing.
	r = do(t, "POST", ntURL(s, "/channels/"+hookID+"/secret"), a.OwnerSecret, map[string]any{"grace_seconds": 3600})
	expect(t, r, http.StatusOK, "")
	until, _ := r.JSON(t)["previous_secret_until"].(string)
	if when, err := time.Parse(time.RFC3339Nano, until); err != nil || time.Until(when) < 59*time.Minute || time.Until(when) > 61*time.Minute {
		t.Errorf("a rotation with an hour's grace: %s", r.Body)
	}
	r = do(t, "GET", ntURL(s, "/channels"), a.OwnerSecret, nil)
	if !strings.Contains(string(r.Body), `"previous_secret_until":"`+until+`"`) {
		t.Errorf("the list does not show the grace's end %s: %s", until, r.Body)
	}
	for name, body := range map[string]any{
		"negative grace": map[string]any{"grace_seconds": -1},
		"over a day":     map[string]any{"grace_seconds": 86401},
		"a string":       map[string]any{"grace_seconds": "3600"},
		"unknown member": map[string]any{"grace": 3600},
		"not an object":  []int{3600},
		"fractional":     map[string]any{"grace_seconds": 1.5},
	} {
		if r := do(t, "POST", ntURL(s, "/channels/"+hookID+"/secret"), a.OwnerSecret, body); r.Status != http.StatusUnprocessableEntity || r.Code(t) != "VALIDATION" {
			t.Errorf("a rotation with %s: %d %s", name, r.Status, r.Body)
		}
	}
	r = do(t, "GET", ntURL(s, "/channels"), a.OwnerSecret, nil)
	if !strings.Contains(string(r.Body), `"previous_secret_until":"`+until+`"`) {
		t.Errorf("a refused rotation changed the channel: %s", r.Body)
	}
	expect(t, do(t, "POST", ntURL(s, "/channels/"+mailID+"/secret"), a.OwnerSecret, nil), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "POST", ntURL(s, "/channels/"+mailID+"/secret"), a.OwnerSecret, map[string]any{"grace_seconds": 60}), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "POST", ntURL(s, "/channels/nc_nope/secret"), a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND")

	// Bad input: the documented 4xx, never a 500, never a partial write.
	for name, body := range map[string]any{
		"no kind":          map[string]any{"name": "x", "url": hookURL},
		"unknown kind":     map[string]any{"kind": "sms", "name": "x"},
		"no name":          map[string]any{"kind": "webhook", "url": hookURL},
		"no url":           map[string]any{"kind": "webhook", "name": "x"},
		"email with a url": map[string]any{"kind": "email", "name": "x", "url": hookURL},
		"two addresses":    map[string]any{"kind": "email", "name": "x", "address": "a@example.com, b@example.com"},
		"ftp url":          map[string]any{"kind": "ntfy", "name": "x", "url": "ftp://1.1.1.1/x"},
		"user in url":      map[string]any{"kind": "webhook", "name": "x", "url": "https://u:p@1.1.1.1/x"},
		"private address":  map[string]any{"kind": "webhook", "name": "x", "url": "http://10.1.2.3/x"},
		"unknown member":   map[string]any{"kind": "webhook", "name": "x", "url": hookURL, "secret": "mine"},
	} {
		r := do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, body)
		if r.Status != http.StatusUnprocessableEntity || r.Code(t) != "VALIDATION" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	expect(t, do(t, "PATCH", ntURL(s, "/channels/"+hookID), a.OwnerSecret, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "PATCH", ntURL(s, "/channels/nc_nope"), a.OwnerSecret, map[string]any{"name": "x"}), http.StatusNotFound, "NOT_FOUND")
	r = do(t, "GET", ntURL(s, "/channels"), a.OwnerSecret, nil)
	if n := strings.Count(string(r.Body), `"id"`); n != 3 {
		t.Errorf("%d channels after the refusals, want 3", n)
	}

	// An agent key is no credential here.
	for _, c := range []struct{ method, path string }{
		{"GET", "/channels"}, {"POST", "/channels"}, {"PATCH", "/channels/" + hookID}, {"DELETE", "/channels/" + hookID},
		{"POST", "/channels/" + hookID + "/secret"}, {"GET", "/rules"}, {"PUT", "/rules/default"}, {"GET", "/deliveries"},
		{"POST", "/deliveries/nd_x/redeliver"}, {"GET", "/outbox"},
	} {
		var body any
		if c.method == "POST" || c.method == "PATCH" || c.method == "PUT" {
			body = map[string]any{}
		}
		expect(t, do(t, c.method, ntURL(s, c.path), agentKey, body), http.StatusUnauthorized, "UNAUTHORIZED")
	}

	// Nothing the owner must not see again is in the data dir: not the
	// URL's token (sealed), not a secret (derived, never stored).
	expect(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil), http.StatusOK, "")
	files := 0
	filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for _, s := range []string{token, secret, rotated, "hooks/"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if files < 3 {
		t.Fatalf("read %d files of the data dir", files)
	}

	expect(t, do(t, "DELETE", ntURL(s, "/channels/"+hookID), a.OwnerSecret, nil), http.StatusNoContent, "")
	expect(t, do(t, "DELETE", ntURL(s, "/channels/"+hookID), a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND")
}

func TestNotificationRulesDeliveriesAndOutbox(t *testing.T) {
	t.Parallel()
	s := startServer(t, noRelay...)
	a := s.createAccount(t, "extended")
	r := do(t, "POST", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, map[string]any{"address": owAddress(7001)})
	expect(t, r, http.StatusCreated, "")
	cardID := owString(t, owObject(t, r.JSON(t), "card"), "id")
	r = do(t, "GET", s.URL+"/owner/v1/bookmark-spaces", a.OwnerSecret, nil)
	var spaceID string
	for _, sp := range r.JSON(t)["spaces"].([]any) {
		if m := sp.(map[string]any); m["type"] == "bitcoin" {
			spaceID = m["id"].(string)
		}
	}
	if spaceID == "" {
		t.Fatalf("no bitcoin Space: %s", r.Body)
	}
	r = do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "email", "name": "me", "address": "owner@example.com"})
	expect(t, r, http.StatusCreated, "")
	mailID := owString(t, owObject(t, r.JSON(t), "channel"), "id")

	r = do(t, "GET", ntURL(s, "/rules"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if def := owObject(t, r.JSON(t), "default"); def["set"] != false || def["depth"] != float64(6) || len(def["events"].([]any)) != 6 {
		t.Errorf("built-in default %s", r.Body)
	}
	r = do(t, "PUT", ntURL(s, "/rules/default"), a.OwnerSecret, map[string]any{"events": []string{"tx_confirmed", "tx_seen"}, "min_amount_sat": 1000})
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); v["set"] != true || v["depth"] != float64(6) || v["events"].([]any)[0] != "tx_seen" {
		t.Errorf("default rule %s", r.Body)
	}
	expect(t, do(t, "PUT", ntURL(s, "/rules/cards/"+cardID), a.OwnerSecret, map[string]any{"depth": 1, "channels": []string{mailID}}), http.StatusOK, "")
	expect(t, do(t, "PUT", ntURL(s, "/rules/bookmark-spaces/"+spaceID), a.OwnerSecret, map[string]any{"events": []string{}}), http.StatusOK, "")
	r = do(t, "GET", ntURL(s, "/rules"), a.OwnerSecret, nil)
	rules := r.JSON(t)
	if len(rules["cards"].([]any)) != 1 || len(rules["bookmark_spaces"].([]any)) != 1 {
		t.Errorf("rules %s", r.Body)
	}
	for name, c := range map[string]struct {
		path   string
		body   any
		status int
		code   string
	}{
		"depth 0":         {"/rules/default", map[string]any{"depth": 0}, 422, "VALIDATION"},
		"depth 101":       {"/rules/default", map[string]any{"depth": 101}, 422, "VALIDATION"},
		"unknown kind":    {"/rules/default", map[string]any{"events": []string{"tx_lost"}}, 422, "VALIDATION"},
		"unknown channel": {"/rules/default", map[string]any{"channels": []string{"nc_nope"}}, 422, "VALIDATION"},
		"negative amount": {"/rules/default", map[string]any{"min_amount_sat": -1}, 422, "VALIDATION"},
		"string depth":    {"/rules/default", map[string]any{"depth": "6"}, 422, "VALIDATION"},
		"no such card":    {"/rules/cards/card_nope", map[string]any{}, 404, "NOT_FOUND"},
		"no such Space":   {"/rules/bookmark-spaces/sp_nope", map[string]any{}, 404, "NOT_FOUND"},
	} {
		r := do(t, "PUT", ntURL(s, c.path), a.OwnerSecret, c.body)
		if r.Status != c.status || r.Code(t) != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	expect(t, do(t, "DELETE", ntURL(s, "/rules/cards/"+cardID), a.OwnerSecret, nil), http.StatusNoContent, "")
	expect(t, do(t, "DELETE", ntURL(s, "/rules/cards/"+cardID), a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND")
	expect(t, do(t, "DELETE", ntURL(s, "/rules/bookmark-spaces/"+spaceID), a.OwnerSecret, nil), http.StatusNoContent, "")
	expect(t, do(t, "DELETE", ntURL(s, "/rules/default"), a.OwnerSecret, nil), http.StatusNoContent, "")

	r = do(t, "GET", ntURL(s, "/deliveries"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); len(v["deliveries"].([]any)) != 0 || v["has_more"] != false || v["next_before"] != nil {
		t.Errorf("an empty log %s", r.Body)
	}
	expect(t, do(t, "GET", ntURL(s, "/deliveries?channel="+mailID+"&limit=10&before=5"), a.OwnerSecret, nil), http.StatusOK, "")
	for _, q := range []string{"?limit=0", "?limit=201", "?before=x", "?chanel=" + mailID, "?limit=1&limit=2"} {
		expect(t, do(t, "GET", ntURL(s, "/deliveries"+q), a.OwnerSecret, nil), http.StatusUnprocessableEntity, "VALIDATION")
	}
	expect(t, do(t, "POST", ntURL(s, "/deliveries/nd_00000000000000000000000000000000/redeliver"), a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND")

	r = do(t, "GET", ntURL(s, "/outbox"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	chans := r.JSON(t)["channels"].([]any)
	if len(chans) != 1 || chans[0].(map[string]any)["pending"] != float64(0) || chans[0].(map[string]any)["channel_id"] != mailID {
		t.Errorf("outbox %s", r.Body)
	}
}

// With --notify-allow-private a lab's loopback receiver is accepted.
func TestNotificationAllowPrivate(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--notify-allow-private")
	a := s.createAccount(t, "base")
	r := do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "webhook", "name": "lab", "url": "http://127.0.0.1:9/hook"})
	expect(t, r, http.StatusCreated, "")
	if owObject(t, r.JSON(t), "channel")["display"] != "http://127.0.0.1:9/…" {
		t.Errorf("lab channel %s", r.Body)
	}
	// This server has no SMTP relay: an email channel is refused, saying so.
	r = do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "email", "name": "me", "address": "owner@example.com"})
	expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
	if !strings.Contains(string(r.Body), "--smtp-relay") {
		t.Errorf("the refusal of an email channel without a relay: %s", r.Body)
	}
}
