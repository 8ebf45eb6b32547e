package keys

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadCreatesAPrivateKeyAndReadsItBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify-key")
	created, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o, want 600", info.Mode().Perm())
	}
	again, err := Load(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Fingerprint() != created.Fingerprint() || len(created.Fingerprint()) != 16 {
		t.Fatalf("fingerprints %q then %q", created.Fingerprint(), again.Fingerprint())
	}
	if created.WebhookSecret("ch_1", "n1") != again.WebhookSecret("ch_1", "n1") {
		t.Fatal("the same key file gave two secrets")
	}
}

func TestLoadWithoutCreateNeedsTheFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), false); err == nil {
		t.Fatal("a missing key file loaded")
	}
}

func TestLoadRefusesAKeyOthersMayRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify-key")
	if err := os.WriteFile(path, []byte(strings.Repeat("ab", keyBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("got %v, want a refusal that says chmod 600", err)
	}
}

func TestLoadRefusesAMalformedKey(t *testing.T) {
	for name, text := range map[string]string{
		"short":   strings.Repeat("ab", keyBytes-1),
		"not hex": strings.Repeat("zz", keyBytes),
		"empty":   "",
	} {
		path := filepath.Join(t.TempDir(), "notify-key")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path, true); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func TestStartsRacingOnOneDataDirKeepOneKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify-key")
	var wg sync.WaitGroup
	prints := make([]string, 8)
	for i := range prints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Load(path, true)
			if err != nil {
				t.Error(err)
				return
			}
			prints[i] = k.Fingerprint()
		}()
	}
	wg.Wait()
	for _, p := range prints[1:] {
		if p != prints[0] {
			t.Fatalf("racing starts kept different keys: %v", prints)
		}
	}
}

func TestWebhookSecretsAreApart(t *testing.T) {
	a, b := mustKey(t), mustKey(t)
	base := a.WebhookSecret("ch_1", "n1")
	if !strings.HasPrefix(base, "whsec_") || len(base) < 40 {
		t.Fatalf("secret %q", base)
	}
	for name, other := range map[string]string{
		"another nonce":   a.WebhookSecret("ch_1", "n2"),
		"another channel": a.WebhookSecret("ch_2", "n1"),
		"another key":     b.WebhookSecret("ch_1", "n1"),
		// The zero byte between fields keeps "ch_1"+"n1" apart from
		// "ch_"+"1n1".
		"shifted fields": a.WebhookSecret("ch_", "1n1"),
	} {
		if other == base {
			t.Errorf("%s gave the same secret", name)
		}
	}
}

func TestSealOpensOnlyForItsChannelAndKey(t *testing.T) {
	a, b := mustKey(t), mustKey(t)
	const url = "https://hooks.example.com/services/T000/B000/XXXXSECRET"
	sealed, err := a.Seal("ch_1", url)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "XXXXSECRET") || strings.Contains(sealed, "example") {
		t.Fatalf("the sealed value shows the URL: %s", sealed)
	}
	if got, err := a.Open("ch_1", sealed); err != nil || got != url {
		t.Fatalf("Open = %q, %v", got, err)
	}
	again, _ := a.Seal("ch_1", url)
	if again == sealed {
		t.Fatal("two seals of one URL are equal: the nonce is not fresh")
	}
	if _, err := a.Open("ch_2", sealed); !errors.Is(err, ErrWrongKey) {
		t.Errorf("another channel: %v", err)
	}
	if _, err := b.Open("ch_1", sealed); !errors.Is(err, ErrWrongKey) {
		t.Errorf("another key: %v", err)
	}
	tampered := []byte(sealed)
	tampered[len(tampered)-3] ^= 1
	if _, err := a.Open("ch_1", string(tampered)); err == nil {
		t.Error("a tampered value opened")
	}
	for _, junk := range []string{"", "s1.", "s1.!!", "s2." + sealed[3:], url} {
		if _, err := a.Open("ch_1", junk); err == nil {
			t.Errorf("%q opened", junk)
		}
	}
}

func mustKey(t *testing.T) *Key {
	t.Helper()
	k, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
