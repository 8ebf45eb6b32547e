package httpd

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"unsafe"

	"github.com/addrwatch/addrwatch/actors"
)

// Bearer secrets name their account and id in the clear and carry 256
// random bits:
//
//	API key       awk.<account>.<key id>.<secret>
//	owner secret  aws.<account>.<secret>
//	session       awt.<account>.<session id>.<secret>
//
// Only the SHA-256 of the whole string is stored. With that much entropy a
// slow hash would add latency and no safety.
const (
	prefixAPIKey      = "awk"
	prefixOwnerSecret = "aws"
	prefixSession     = "awt"
	secretBytes       = 32
	idBytes           = 10
	bearerCharsMax    = 256
)

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// randomString returns n random bytes in lower-case base32.
func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("httpd: no randomness: " + err.Error())
	}
	return lowerBase32.EncodeToString(b)
}

// newID returns a fresh opaque identifier (80 random bits).
func newID() string { return randomString(idBytes) }

// hashSecret hashes s in place: sha256 only reads its input, and a
// []byte(s) copy would cost an allocation on every authenticated request.
func hashSecret(s string) actors.Hash {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// newAPIKey returns a new key id, the full key and its hash.
func newAPIKey(account string) (id, key string, hash actors.Hash) {
	id = newID()
	key = prefixAPIKey + "." + account + "." + id + "." + randomString(secretBytes)
	return id, key, hashSecret(key)
}

func newOwnerSecret(account string) (secret string, hash actors.Hash) {
	secret = prefixOwnerSecret + "." + account + "." + randomString(secretBytes)
	return secret, hashSecret(secret)
}

func newSessionToken(account string) (id, token string, hash actors.Hash) {
	id = newID()
	token = prefixSession + "." + account + "." + id + "." + randomString(secretBytes)
	return id, token, hashSecret(token)
}

// parseBearer parses a bearer secret into a credential. It reports false
// for anything that is not one of the three shapes; the caller answers 401
// without saying why.
func parseBearer(token string, now int64) (actors.Credential, bool) {
	cred, valid := bearerShape(token)
	if !valid {
		return actors.Credential{}, false
	}
	cred.Hash, cred.Now = hashSecret(token), now
	return cred, true
}

// bearerShape is parseBearer without the hash: the kind, account and id a
// token names, for the edge's per-key bucket, which needs no more and
// would otherwise hash every token twice.
func bearerShape(token string) (actors.Credential, bool) {
	if len(token) > bearerCharsMax {
		return actors.Credential{}, false
	}
	// At most four non-empty dot-separated parts; cut by hand, because
	// strings.Split allocates on every authenticated request.
	var parts [4]string
	n, rest := 0, token
	for {
		part, after, more := strings.Cut(rest, ".")
		if part == "" || n == len(parts) {
			return actors.Credential{}, false
		}
		parts[n], n, rest = part, n+1, after
		if !more {
			break
		}
	}
	var cred actors.Credential
	switch {
	case n == 4 && parts[0] == prefixAPIKey:
		cred.Kind, cred.AccountID, cred.ID = actors.CredentialAPIKey, parts[1], parts[2]
	case n == 3 && parts[0] == prefixOwnerSecret:
		cred.Kind, cred.AccountID = actors.CredentialOwnerSecret, parts[1]
	case n == 4 && parts[0] == prefixSession:
		cred.Kind, cred.AccountID, cred.ID = actors.CredentialSession, parts[1], parts[2]
	default:
		return actors.Credential{}, false
	}
	return cred, true
}
