package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The data dir's notify key is made on first start and kept; one left
// open to others is made private; an explicit --notify-key must exist and
// be private.
func TestLoadNotifyKey(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	data := t.TempDir()
	first, err := loadNotifyKey(config{Data: data}, logger)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "notify-key")
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("made %v %v", info, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := loadNotifyKey(config{Data: data}, logger)
	if err != nil || again.Fingerprint() != first.Fingerprint() {
		t.Fatalf("the same key again: %v", err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("left open: %v", info.Mode())
	}
	if _, err := loadNotifyKey(config{Data: data, NotifyKey: filepath.Join(data, "none")}, logger); err == nil || !strings.Contains(err.Error(), "--notify-key") {
		t.Errorf("a missing --notify-key: %v", err)
	}
	open := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(open, []byte(strings.Repeat("ab", 32)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadNotifyKey(config{Data: data, NotifyKey: open}, logger); err == nil {
		t.Error("an explicit key others may read was taken")
	}
}
