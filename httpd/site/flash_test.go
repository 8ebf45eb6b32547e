package site

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

const flashTestPage = "/access/keys/created"

func TestFlashOpensOnceForItsSessionAndPage(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	key := flashKey("session-token-of-the-owner")
	value := sealFlash(key, flashTestPage, now, []byte(`{"secret":"aw_live_abc"}`))
	if strings.Contains(value, "aw_live_abc") {
		t.Fatalf("the sealed value shows the secret: %s", value)
	}
	var opened flashOpened
	got, err := opened.openFlash(key, flashTestPage, now.Add(time.Second), value)
	if err != nil || string(got) != `{"secret":"aw_live_abc"}` {
		t.Fatalf("own session, own page: %q, %v", got, err)
	}
	if _, err := opened.openFlash(key, flashTestPage, now.Add(2*time.Second), value); err == nil {
		t.Fatal("a flash opened twice on the node that showed it (a replayed cookie)")
	}
}

func TestFlashRefusesAnotherSessionPageTimeOrTampering(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	key := flashKey("session-token-of-the-owner")
	value := sealFlash(key, flashTestPage, now, []byte(`{"secret":"s"}`))
	tampered := func(i int) string {
		raw, _ := base64.RawURLEncoding.DecodeString(value)
		raw[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(raw)
	}
	cases := []struct {
		name  string
		key   []byte
		page  string
		at    time.Time
		value string
	}{
		{"another session's key (a stolen cookie alone)", flashKey("another-session"), flashTestPage, now, value},
		{"another page", key, "/settings/secret", now, value},
		{"expired", key, flashTestPage, now.Add(flashLifetime), value},
		{"expiry moved on", key, flashTestPage, now, tampered(3)},
		{"nonce changed", key, flashTestPage, now, tampered(12)},
		{"ciphertext changed", key, flashTestPage, now, tampered(flashHeaderBytes + 1)},
		{"version changed", key, flashTestPage, now, tampered(0)},
		{"cut short", key, flashTestPage, now, value[:10]},
		{"not base64", key, flashTestPage, now, "!!" + value},
		{"empty", key, flashTestPage, now, ""},
		{"oversized", key, flashTestPage, now, strings.Repeat("A", flashValueBytesMax+1)},
	}
	for _, c := range cases {
		var opened flashOpened
		if got, err := opened.openFlash(c.key, c.page, c.at, c.value); err == nil {
			t.Errorf("%s: opened %q", c.name, got)
		}
	}
	// None of the refusals used up the flash: the right session still
	// opens it on its page.
	var opened flashOpened
	if _, err := opened.openFlash(key, flashTestPage, now, value); err != nil {
		t.Fatalf("the untouched flash: %v", err)
	}
}

func TestFlashNoncesAreForgottenOnlyAfterTheyExpire(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var opened flashOpened
	var n [flashNonceBytes]byte
	for i := range flashOpenedMax {
		n[0], n[1], n[2] = byte(i), byte(i>>8), byte(i>>16)
		if !opened.first(n, now.Unix()+60, now.Unix()) {
			t.Fatalf("nonce %d refused below the bound", i)
		}
	}
	n = [flashNonceBytes]byte{0xff, 0xff, 0xff}
	if opened.first(n, now.Unix()+60, now.Unix()) {
		t.Fatal("a nonce past the bound was recorded while none had expired")
	}
	if !opened.first(n, now.Unix()+200, now.Unix()+120) {
		t.Fatal("the expired nonces were not forgotten")
	}
}
