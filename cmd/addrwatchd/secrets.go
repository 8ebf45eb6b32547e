package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/addrwatch/addrwatch/notify/keys"
)

// loadAdminToken returns --admin-token, or the token stored in
// <data>/admin-token, or a new one written there (mode 0600) on first start.
func loadAdminToken(cfg config) (string, error) {
	if cfg.AdminToken != "" {
		return cfg.AdminToken, nil
	}
	path := filepath.Join(cfg.Data, "admin-token")
	b, err := os.ReadFile(path)
	if err == nil {
		if token := strings.TrimSpace(string(b)); token != "" {
			return token, nil
		}
		return "", fmt.Errorf("%s is empty: delete it to have a new token generated", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	token := "awa." + randomHex(32)
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	return token, nil
}

// loadNotifyKey loads --notify-key, which must exist and be readable by
// its owner only; or, when it is unset, <data>/notify-key, made (0600) on
// first start. That one is the data dir's, which is made private at
// every start: open to others, it is made private with a warning, as the
// data dir's cluster certificates are (makePrivate). Every node of a
// cluster must hold the same key: a channel made under another is refused
// by the deliverer rather than signed with a secret its receiver does not
// know.
func loadNotifyKey(cfg config, logger *slog.Logger) (*keys.Key, error) {
	if cfg.NotifyKey != "" {
		k, err := keys.Load(cfg.NotifyKey, false)
		if err != nil {
			return nil, fmt.Errorf("--notify-key: %w", err)
		}
		return k, nil
	}
	path := filepath.Join(cfg.Data, "notify-key")
	if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o077 != 0 {
		logger.Warn("the data dir's notify key was open to other users; made it private. Whoever read it can sign as this cluster's webhooks and open owners' notification URLs: if that may have happened, give every node a new key (--notify-key), and owners must make their channels again",
			"path", path, "mode", fmt.Sprintf("%#o", info.Mode().Perm()))
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("make %s private: %w", path, err)
		}
	}
	return keys.Load(path, true)
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		panic("addrwatchd: no randomness: " + err.Error())
	}
	return hex.EncodeToString(raw)
}
