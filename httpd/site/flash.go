package site

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Flashes carry what a form's POST made to the one GET that shows it
// (post/redirect/get): a new key's secret, a rotated owner or webhook
// secret, a test's outcome, an import's report. A reload or Back then
// asks for a GET page and never repeats the action, and a secret is still
// shown once and only once.
//
// A flash is a short-lived cookie (over plain HTTP scoped to its result
// page; over HTTPS a __Host- cookie, which must have Path=/), holding the
// value sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the
// browser's own session token, with the page's path and the flash's
// expiry as associated data. So:
//   - nothing is stored on the server, in the replicated state or on disk,
//     and any node of a cluster can open it (every node sees the session
//     token on every request);
//   - the cookie alone is useless: it opens only with the session token
//     (an HttpOnly cookie the page's scripts cannot read), only on its own
//     page, and only before it expires (flashLifetime);
//   - the page that shows it clears the cookie, and the node that opened it
//     remembers its nonce until it expires, so the same value is refused a
//     second time there. (A party holding both the session token and the
//     cookie could still open it once more on another node within the
//     lifetime; that party already acts as the owner.)
//
// No flash travels in a URL, and every site page is no-store.

const (
	// flashLifetime is how long a flash can be opened after its POST:
	// the redirect is followed at once, so this only has to cover a slow
	// browser.
	flashLifetime = 60 * time.Second
	flashCookie   = "addrwatch_flash"
	// secureFlashCookie is the name over HTTPS. Like the session cookie
	// it takes the __Host- prefix, so a sibling host cannot plant one that
	// shadows ours (a planted flash would not open, but would hide the
	// real one); the prefix requires Path=/, so over HTTPS a flash is
	// sent with every request of its minute, not only to its page. It
	// opens on its page only either way (the page is sealed in).
	secureFlashCookie = "__Host-addrwatch_flash"
	flashVersion      = 1
	flashNonceBytes   = 12
	// flashHeaderBytes are the version, the expiry and the nonce before
	// the ciphertext.
	flashHeaderBytes = 1 + 8 + flashNonceBytes
	// flashValueBytesMax bounds a sealed value as a cookie carries it:
	// browsers keep a cookie of up to 4096 bytes, name and attributes
	// included.
	flashValueBytesMax = 3800
	// flashOpenedMax bounds the nonces a node remembers; past it (more
	// than this many flashes opened within a lifetime) a flash is not
	// opened, which shows "shown once" rather than show one twice.
	flashOpenedMax = 10_000
	flashKeyInfo   = "addrwatch site flash v1"
)

// errFlashUnreadable is every reason a flash is not opened: none, someone
// else's, another page's, expired, tampered with, or already opened.
var errFlashUnreadable = errors.New("no flash to show")

// flashKey derives a session's flash key from its secret token.
func flashKey(sessionToken string) []byte {
	key, err := hkdf.Key(sha256.New, []byte(sessionToken), nil, flashKeyInfo, 32)
	if err != nil {
		panic("site: hkdf: " + err.Error()) // only for a length SHA-256 cannot give
	}
	return key
}

// flashAAD binds a sealed value to its page and expiry.
func flashAAD(page string, header []byte) []byte {
	return append(append([]byte(flashKeyInfo+"\x00"+page+"\x00"), header...), 0)
}

func flashAEAD(key []byte) cipher.AEAD {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("site: aes: " + err.Error()) // the key is always 32 bytes
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("site: gcm: " + err.Error())
	}
	return aead
}

// sealFlash seals payload for page under key, to be opened before
// now+flashLifetime.
func sealFlash(key []byte, page string, now time.Time, payload []byte) string {
	header := make([]byte, flashHeaderBytes)
	header[0] = flashVersion
	binary.BigEndian.PutUint64(header[1:9], uint64(now.Add(flashLifetime).Unix()))
	rand.Read(header[9:]) // crypto/rand's Read never fails: it crashes the program instead
	sealed := flashAEAD(key).Seal(header, header[9:], payload, flashAAD(page, header))
	return base64.RawURLEncoding.EncodeToString(sealed)
}

// flashOpened remembers the nonces of the flashes this node opened, until
// they expire, so a replayed cookie is refused.
type flashOpened struct {
	mu     sync.Mutex
	nonces map[[flashNonceBytes]byte]int64 // nonce → expiry (Unix seconds)
}

// first records nonce and reports whether it was not recorded before.
func (o *flashOpened) first(nonce [flashNonceBytes]byte, expiry, now int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.nonces == nil {
		o.nonces = make(map[[flashNonceBytes]byte]int64)
	}
	if _, seen := o.nonces[nonce]; seen {
		return false
	}
	if len(o.nonces) >= flashOpenedMax {
		for n, exp := range o.nonces {
			if exp < now {
				delete(o.nonces, n)
			}
		}
		if len(o.nonces) >= flashOpenedMax {
			return false
		}
	}
	o.nonces[nonce] = expiry
	return true
}

// openFlash opens a value sealFlash made for page under key, once.
func (o *flashOpened) openFlash(key []byte, page string, now time.Time, value string) ([]byte, error) {
	if value == "" || len(value) > flashValueBytesMax {
		return nil, errFlashUnreadable
	}
	sealed, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(sealed) < flashHeaderBytes || sealed[0] != flashVersion {
		return nil, errFlashUnreadable
	}
	header := sealed[:flashHeaderBytes]
	expiry := int64(binary.BigEndian.Uint64(header[1:9]))
	if now.Unix() >= expiry {
		return nil, errFlashUnreadable
	}
	payload, err := flashAEAD(key).Open(nil, header[9:], sealed[flashHeaderBytes:], flashAAD(page, header))
	if err != nil {
		return nil, errFlashUnreadable
	}
	if !o.first([flashNonceBytes]byte(header[9:]), expiry, now.Unix()) {
		return nil, errFlashUnreadable
	}
	return payload, nil
}

// flashCookieNamePath is the flash cookie's name and path for page.
func flashCookieNamePath(https bool, page string) (string, string) {
	if https {
		return secureFlashCookie, "/"
	}
	return flashCookie, page
}

// setFlash answers a form's POST with 303 to page, carrying v (JSON) in a
// flash only that page of this session can open.
func (s *Site) setFlash(ctx *fasthttp.RequestCtx, sess *siteSession, page string, v any) {
	payload, err := json.Marshal(v)
	if err != nil {
		panic("site: a flash does not encode: " + err.Error()) // a bug: flashes are plain structs
	}
	value := sealFlash(sess.flashKey, page, s.now(), payload)
	if len(value) > flashValueBytesMax {
		panic("site: a flash is too big for a cookie") // a bug: callers bound what they put in one
	}
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	name, path := flashCookieNamePath(sess.https, page)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath(path)
	c.SetHTTPOnly(true)
	c.SetSecure(sess.https)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetMaxAge(int(flashLifetime / time.Second))
	ctx.Response.Header.SetCookie(c)
	s.redirect(ctx, page)
}

// takeFlash opens the flash of the page requested into v and clears its
// cookie. It reports false when there is none to show: never set, another
// session's, expired, tampered with or already shown.
func (s *Site) takeFlash(ctx *fasthttp.RequestCtx, sess *siteSession, v any) bool {
	page := string(ctx.Path())
	name, path := flashCookieNamePath(sess.https, page)
	value := string(ctx.Request.Header.Cookie(name))
	if value == "" {
		return false
	}
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetPath(path)
	c.SetHTTPOnly(true)
	c.SetSecure(sess.https)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetExpire(fasthttp.CookieExpireDelete)
	c.SetMaxAge(-1)
	ctx.Response.Header.SetCookie(c)
	payload, err := s.flashes.openFlash(sess.flashKey, page, s.now(), value)
	if err != nil {
		return false
	}
	return json.Unmarshal(payload, v) == nil
}
