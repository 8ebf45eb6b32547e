package send

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the webhook header that carries the signatures:
//
//	Addrwatch-Signature: t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// t is when the try was signed, in Unix seconds; each v1 is the hex of
// HMAC-SHA256 under a secret (the whole "whsec_…" string, as bytes) over
// t's digits, a full stop and the body. There is one v1 per secret the
// channel signs with: two while a rotated secret's predecessor is still
// honoured. A receiver accepts the body when any v1 matches its secret and
// t is recent (Verify).
const SignatureHeader = "Addrwatch-Signature"

// SignatureToleranceDefault is how far a signature's t may be from the
// receiver's clock when Verify is given no tolerance: long enough for
// clock skew and a slow receiver, short enough that a captured request
// replayed later is refused.
const SignatureToleranceDefault = 5 * time.Minute

// Bounds of a header Verify will read: a real one is about 80 bytes and
// holds one or two signatures.
const (
	signatureHeaderBytesMax = 4 << 10
	signaturesMax           = 8
	timestampDigitsMax      = 18
)

// Verify's errors, for a receiver to tell apart (errors.Is).
var (
	ErrSignatureHeader   = errors.New("the " + SignatureHeader + " header is not t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=...]")
	ErrSignatureTime     = errors.New("the signature's timestamp is outside the tolerance: an old request replayed, or a clock far off")
	ErrSignatureMismatch = errors.New("no v1 signature matches this secret and body")
)

// Sign is the value of the Addrwatch-Signature header for body sent at
// t, with a v1 for each secret (the current one first).
func Sign(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, secret := range secrets {
		b.WriteString(",v1=" + hex.EncodeToString(signature(secret, ts, body)))
	}
	return b.String()
}

// Verify checks a webhook as its receiver gets it: header is the
// Addrwatch-Signature header's value, body the request's body exactly as
// read (before any JSON parsing), secret the channel's "whsec_…" string.
// It returns nil when a v1 signature under secret matches and the
// timestamp is within tolerance of now (SignatureToleranceDefault when
// tolerance is not positive). Keys other than t and v1 are skipped, so a
// later version may add a scheme without breaking this one.
func Verify(secret string, header string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, sigs, err := parseSignatureHeader(header)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = SignatureToleranceDefault
	}
	// ts is at most timestampDigitsMax digits: no overflow either way.
	t, _ := strconv.ParseInt(ts, 10, 64)
	if skew := now.Unix() - t; skew > int64(tolerance/time.Second) || -skew > int64(tolerance/time.Second) {
		return ErrSignatureTime
	}
	want := signature(secret, ts, body)
	matched := 0
	for _, sig := range sigs {
		// Every candidate is compared, in constant time each, so the
		// time taken does not say which one came close.
		matched |= boolInt(hmac.Equal(sig, want))
	}
	if matched == 0 {
		return ErrSignatureMismatch
	}
	return nil
}

// parseSignatureHeader splits header into t's digits and the decoded v1
// signatures. It is strict about what it reads (one t of digits, each v1
// 64 hex digits, no empty item) and skips keys it does not know.
func parseSignatureHeader(header string) (ts string, sigs [][]byte, err error) {
	if len(header) > signatureHeaderBytesMax {
		return "", nil, ErrSignatureHeader
	}
	for item := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || key == "" {
			return "", nil, ErrSignatureHeader
		}
		switch key {
		case "t":
			if ts != "" || !isDigits(value) || len(value) > timestampDigitsMax {
				return "", nil, ErrSignatureHeader
			}
			ts = value
		case "v1":
			sig, decodeErr := hex.DecodeString(value)
			if decodeErr != nil || len(sig) != sha256.Size || len(sigs) == signaturesMax {
				return "", nil, ErrSignatureHeader
			}
			sigs = append(sigs, sig)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return "", nil, ErrSignatureHeader
	}
	return ts, sigs, nil
}

// signature is HMAC-SHA256(secret, ts "." body).
func signature(secret, ts string, body []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return mac.Sum(nil)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
