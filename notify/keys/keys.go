// Package keys holds the notify key: a node-local secret from which every
// webhook's signing secret is derived and with which owners' URLs are
// sealed before they enter the replicated state.
//
// Nothing derived from the key is stored. A webhook's secret is
// HMAC(key, channel ID ‖ nonce), computed when it is shown once to the
// owner and again by the leader for each signature, so neither the raft
// log nor a snapshot holds a secret a receiver trusts. An owner's URL may
// carry a token of its own (a Slack or Discord webhook URL, an ntfy topic
// that is its only password), so the state holds it sealed (AES-256-GCM
// under a key derived from the notify key, bound to its channel), with a
// redacted form for display.
//
// Every node of a cluster must be given the same key (--notify-key). A
// channel records the key's fingerprint when it is made, and a node whose
// key has another fingerprint refuses to sign or open it rather than sign
// with a secret the receiver does not know.
package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// keyBytes is the notify key's length: 256 bits.
const keyBytes = 32

// Labels keep each use of the key apart: no derived value can stand for
// another.
const (
	labelFingerprint = "addrwatch notify key fingerprint v1"
	labelWebhook     = "addrwatch webhook secret v1"
	labelSeal        = "addrwatch notify seal v1"
)

// sealedPrefix starts every sealed value, naming its format.
const sealedPrefix = "s1."

// ErrWrongKey is what opening a value sealed under another key returns.
var ErrWrongKey = errors.New("keys: this value was sealed under another notify key, or altered")

// Key is a loaded notify key.
type Key struct {
	secret      [keyBytes]byte
	fingerprint string
	aead        cipher.AEAD
}

// FromBytes makes a Key from its 32 bytes.
func FromBytes(secret []byte) (*Key, error) {
	if len(secret) != keyBytes {
		return nil, fmt.Errorf("keys: a notify key is %d bytes, not %d", keyBytes, len(secret))
	}
	k := &Key{}
	copy(k.secret[:], secret)
	k.fingerprint = hex.EncodeToString(k.mac(labelFingerprint)[:8])
	block, err := aes.NewCipher(k.mac(labelSeal))
	if err != nil {
		return nil, err
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	return k, nil
}

// Generate makes a new random key.
func Generate() (*Key, error) {
	secret := make([]byte, keyBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("keys: no randomness: %w", err)
	}
	return FromBytes(secret)
}

// Load reads the key file at path: 64 hex digits and an optional newline.
// When the file does not exist and create is true, a new key is written
// there, readable by its owner only. A file that others may read is
// refused: the key signs every webhook.
func Load(path string, create bool) (*Key, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		return write(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the notify key: %w", err)
	}
	if err := checkPrivate(path); err != nil {
		return nil, err
	}
	text := strings.TrimSpace(string(raw))
	secret, err := hex.DecodeString(text)
	if err != nil || len(secret) != keyBytes {
		return nil, fmt.Errorf("%s must hold %d hex digits (a key from `openssl rand -hex %d`)", path, 2*keyBytes, keyBytes)
	}
	return FromBytes(secret)
}

func write(path string) (*Key, error) {
	k, err := Generate()
	if err != nil {
		return nil, err
	}
	// The key is written whole to a file of its own, then linked to path,
	// which fails when path exists: two starts racing on one data dir keep
	// one key, and neither ever reads the other's half-written file (as
	// an O_EXCL create of path itself would let it).
	f, err := os.CreateTemp(filepath.Dir(path), ".notify-key-*")
	if err != nil {
		return nil, fmt.Errorf("write the notify key: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the notify key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(k.secret[:]) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the notify key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the notify key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write the notify key: %w", err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return Load(path, false)
	} else if err != nil {
		return nil, fmt.Errorf("write the notify key: %w", err)
	}
	return k, nil
}

func checkPrivate(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read the notify key: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is readable by others (mode %o): chmod 600 it", path, info.Mode().Perm())
	}
	return nil
}

// Fingerprint names the key without revealing it: 16 hex digits. Channels
// record it so a node can tell a channel made under another key.
func (k *Key) Fingerprint() string { return k.fingerprint }

// WebhookSecret is the signing secret of the webhook channel channelID
// made with nonce: what the owner is shown once and what signs each of
// its deliveries. A new nonce (a rotation) gives an unrelated secret.
func (k *Key) WebhookSecret(channelID, nonce string) string {
	return "whsec_" + base64.RawURLEncoding.EncodeToString(k.mac(labelWebhook, channelID, nonce))
}

// Seal encrypts plaintext for the state, bound to channelID: a sealed URL
// copied into another channel does not open. Each call draws a new nonce,
// so Seal runs at the edge, never in apply.
func (k *Key) Seal(channelID, plaintext string) (string, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("keys: no randomness: %w", err)
	}
	sealed := k.aead.Seal(nonce, nonce, []byte(plaintext), []byte(channelID))
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open is Seal's inverse: ErrWrongKey when sealed was made under another
// key, for another channel, or altered.
func (k *Key) Open(channelID, sealed string) (string, error) {
	body, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", fmt.Errorf("keys: not a sealed value")
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < k.aead.NonceSize() {
		return "", fmt.Errorf("keys: not a sealed value")
	}
	nonce, ciphertext := raw[:k.aead.NonceSize()], raw[k.aead.NonceSize():]
	plain, err := k.aead.Open(nil, nonce, ciphertext, []byte(channelID))
	if err != nil {
		return "", ErrWrongKey
	}
	return string(plain), nil
}

// mac is HMAC-SHA256 under the key over label and fields, each followed
// by a zero byte, which none of them holds.
func (k *Key) mac(label string, fields ...string) []byte {
	h := hmac.New(sha256.New, k.secret[:])
	for _, field := range append([]string{label}, fields...) {
		h.Write([]byte(field))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}
