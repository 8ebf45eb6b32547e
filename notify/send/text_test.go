package send

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAmountBTC(t *testing.T) {
	cases := map[int64]string{
		100_000:        "+0.00100000 BTC",
		-2500:          "-0.00002500 BTC",
		0:              "0.00000000 BTC",
		2_100_000_000:  "+21.00000000 BTC",
		math.MinInt64:  "-92233720368.54775808 BTC",
		math.MaxInt64:  "+92233720368.54775807 BTC",
		-1:             "-0.00000001 BTC",
		12_345_678_901: "+123.45678901 BTC",
	}
	for sat, want := range cases {
		if got := amountBTC(sat); got != want {
			t.Errorf("amountBTC(%d) = %q, want %q", sat, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"Savings", 64, "Savings"},
		{"  two\r\n\tlines  ", 64, "two lines"},
		{"a\u202eb\u200bc\x00d", 64, "a b c d"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"ééééééé", 3, "éé…"},
		{"\xff\xfe", 8, "\ufffd\ufffd"},
		{"\r\n\x00", 8, ""},
	}
	for _, tc := range cases {
		got := oneLine(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > tc.max {
			t.Errorf("oneLine(%q, %d) has %d runes", tc.in, tc.max, n)
		}
	}
}

// TestHeaderValue: ASCII passes as it is (encoded-word openers broken),
// anything else is RFC 2047, and nothing holds a byte a header cannot.
func TestHeaderValue(t *testing.T) {
	if got := headerValue("Savings <main>", 64); got != "Savings <main>" {
		t.Errorf("ASCII: %q", got)
	}
	if got := headerValue("=?utf-8?q?=0D=0A?=", 64); strings.Contains(got, "=?") {
		t.Errorf("an encoded-word in owner text passed as one: %q", got)
	}
	got := headerValue(strings.Repeat("ü\r\n", 200), 160)
	if !strings.HasPrefix(got, "=?utf-8?q?") {
		t.Errorf("non-ASCII not encoded: %q", got)
	}
	for i := 0; i < len(got); i++ {
		if got[i] < 0x20 || got[i] > 0x7e {
			t.Fatalf("byte %#x in %q", got[i], got)
		}
	}
}
