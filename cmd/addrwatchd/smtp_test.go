package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The --smtp-* flags: a relay needs a sender; a user goes with a password
// file, which must be private; none means anything without a relay.
func TestSMTPFlags(t *testing.T) {
	c, err := parseConfig([]string{"--smtp-relay", "mail.example:587", "--smtp-from", "addrwatch <alerts@example.com>", "--smtp-plaintext"}, env(nil))
	if err != nil || c.SMTPRelay != "mail.example:587" || !c.SMTPPlaintext {
		t.Fatalf("%+v %v", c, err)
	}
	for _, args := range [][]string{
		{"--smtp-from", "a@example.com"},
		{"--smtp-plaintext"},
		{"--smtp-relay", "mail.example"},
		{"--smtp-relay", "mail.example:587"},
		{"--smtp-relay", "mail.example:587", "--smtp-from", "not an address"},
		{"--smtp-relay", "mail.example:587", "--smtp-from", "a@example.com", "--smtp-user", "u"},
		{"--smtp-relay", "mail.example:587", "--smtp-from", "a@example.com", "--smtp-password-file", "/x"},
	} {
		if _, err := parseConfig(args, env(nil)); err == nil {
			t.Errorf("%v accepted", args)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "smtp-password")
	if err := os.WriteFile(file, []byte("s3cret-pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]string{"--smtp-relay", "mail.example:587", "--smtp-from", "a@example.com", "--smtp-user", "u", "--smtp-password-file", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := smtpRelay(c); err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a password file others may read: %v", err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	relay, err := smtpRelay(c)
	if err != nil || relay.Password != "s3cret-pass" || relay.Username != "u" || relay.From != "a@example.com" {
		t.Fatalf("%+v %v", relay, err)
	}
	if relay, err := smtpRelay(config{}); relay != nil || err != nil {
		t.Errorf("no relay: %+v %v", relay, err)
	}
}
