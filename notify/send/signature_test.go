package send

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	secretA = "whsec_first-secret-of-the-channel"
	secretB = "whsec_second-secret-after-rotation"
)

var signedAt = time.Unix(1_700_000_000, 0)

// TestSignatureIsHMACOfTimestampDotBody pins the documented construction
// with an HMAC computed here from the description, not through Sign.
func TestSignatureIsHMACOfTimestampDotBody(t *testing.T) {
	body := []byte(`{"id":"ce_1"}`)
	mac := hmac.New(sha256.New, []byte(secretA))
	mac.Write([]byte("1700000000." + string(body)))
	want := "t=1700000000,v1=" + hex.EncodeToString(mac.Sum(nil))
	if got := Sign(signedAt, body, secretA); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"ce_1","amount_sat":150000}`)
	header := Sign(signedAt, body, secretA)
	cases := []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", secretA, header, body, signedAt, nil},
		{"valid within the tolerance", secretA, header, body, signedAt.Add(4 * time.Minute), nil},
		{"wrong secret", secretB, header, body, signedAt, ErrSignatureMismatch},
		{"altered body", secretA, header, []byte(`{"id":"ce_1","amount_sat":950000}`), signedAt, ErrSignatureMismatch},
		{"old timestamp", secretA, header, body, signedAt.Add(6 * time.Minute), ErrSignatureTime},
		{"timestamp from the future", secretA, header, body, signedAt.Add(-6 * time.Minute), ErrSignatureTime},
		{"timestamp altered to a fresh one", secretA, strings.Replace(header, "t=1700000000", "t=1700000300", 1), body, signedAt.Add(5 * time.Minute), ErrSignatureMismatch},
		{"rotation: the old secret still verifies", secretB, Sign(signedAt, body, secretA, secretB), body, signedAt, nil},
		{"rotation: the new secret verifies", secretA, Sign(signedAt, body, secretA, secretB), body, signedAt, nil},
		{"unknown scheme skipped", secretA, header + ",v9=zz", body, signedAt, nil},
		{"spaces after commas", secretA, strings.ReplaceAll(header, ",", ", "), body, signedAt, nil},
		{"no v1", secretA, "t=1700000000", body, signedAt, ErrSignatureHeader},
		{"no t", secretA, header[len("t=1700000000,"):], body, signedAt, ErrSignatureHeader},
		{"two t", secretA, "t=1700000000," + header, body, signedAt, ErrSignatureHeader},
		{"signed t", secretA, strings.Replace(header, "t=", "t=+", 1), body, signedAt, ErrSignatureHeader},
		{"short v1", secretA, "t=1700000000,v1=abcd", body, signedAt, ErrSignatureHeader},
		{"empty item", secretA, header + ",", body, signedAt, ErrSignatureHeader},
		{"empty", secretA, "", body, signedAt, ErrSignatureHeader},
		{"huge t", secretA, "t=99999999999999999999999,v1=" + strings.Repeat("0", 64), body, signedAt, ErrSignatureHeader},
		{"too many v1", secretA, "t=1700000000" + strings.Repeat(",v1="+strings.Repeat("0", 64), signaturesMax+1), body, signedAt, ErrSignatureHeader},
	}
	for _, tc := range cases {
		if err := Verify(tc.secret, tc.header, tc.body, tc.now, 0); !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestVerifyToleranceIsTheCallers: a receiver may ask for a tighter
// window than the default.
func TestVerifyToleranceIsTheCallers(t *testing.T) {
	body := []byte("x")
	header := Sign(signedAt, body, secretA)
	if err := Verify(secretA, header, body, signedAt.Add(time.Minute), 30*time.Second); !errors.Is(err, ErrSignatureTime) {
		t.Fatalf("a minute off with 30 s of tolerance: %v", err)
	}
	if err := Verify(secretA, header, body, signedAt.Add(20*time.Second), 30*time.Second); err != nil {
		t.Fatalf("20 s off with 30 s of tolerance: %v", err)
	}
}

// FuzzVerifySignatureHeader feeds Verify any header: it never panics, it
// accepts a header only when one of its v1 values is the true signature
// of a t it holds, and whatever the body and time, what Sign makes
// verifies.
func FuzzVerifySignatureHeader(f *testing.F) {
	f.Add("t=1700000000,v1="+strings.Repeat("ab", 32), []byte("{}"), int64(1_700_000_000))
	f.Add(Sign(signedAt, []byte("{}"), secretA), []byte("{}"), int64(1_700_000_000))
	f.Add(Sign(signedAt, []byte("{}"), secretA, secretB)+",v2=x", []byte("{}"), int64(1_700_000_000))
	f.Add("t=,v1=", []byte(nil), int64(0))
	f.Add(",,,=,t==1", []byte("a"), int64(-1))
	f.Add("t=1700000000,v1="+strings.Repeat("0", 64)+",t=1", []byte("a"), int64(1_700_000_000))
	f.Fuzz(func(t *testing.T, header string, body []byte, unix int64) {
		now := time.Unix(unix, 0)
		if err := Verify(secretA, header, body, now, 0); err == nil {
			ts, _, perr := parseSignatureHeader(header)
			want := hex.EncodeToString(signature(secretA, ts, body))
			if perr != nil || !strings.Contains(strings.ToLower(header), "v1="+want) {
				t.Fatalf("Verify accepted %q, which holds no true signature", header)
			}
		}
		if unix < 0 || unix > 1<<40 {
			return // Sign writes what Unix gives; Verify reads only plain digits
		}
		signed := Sign(now, body, secretA)
		if err := Verify(secretA, signed, body, now, 0); err != nil {
			t.Fatalf("Verify refused Sign's own %q: %v", signed, err)
		}
		if !strings.HasPrefix(signed, "t="+strconv.FormatInt(unix, 10)+",v1=") {
			t.Fatalf("Sign = %q", signed)
		}
	})
}
