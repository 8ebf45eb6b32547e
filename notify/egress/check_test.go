package egress

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

// Check refuses what Post would refuse, without sending anything, and
// says why in words that never quote the URL's path.
func TestCheck(t *testing.T) {
	loopback := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	for _, tc := range []struct {
		name         string
		url          string
		answers      []netip.Addr
		allowPrivate bool
		class        Class
	}{
		{"public", "https://hooks.example/t0ken", []netip.Addr{publicAddr}, false, ""},
		{"loopback name", "https://hooks.example/t0ken", loopback, false, ClassRefused},
		{"loopback allowed", "https://hooks.example/t0ken", loopback, true, ""},
		{"loopback literal", "http://127.0.0.1:9/t0ken", nil, false, ClassRefused},
		{"not http", "ftp://hooks.example/t0ken", nil, false, ClassInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resolver := resolveTo(tc.answers)
			c, err := New(Config{Resolver: resolver, AllowPrivate: tc.allowPrivate})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Check(context.Background(), tc.url)
			if got := ClassOfError(err); got != tc.class {
				t.Fatalf("class %q (%v), want %q", got, err, tc.class)
			}
			if err != nil && strings.Contains(err.Error(), "t0ken") {
				t.Errorf("the error quotes the URL's path: %v", err)
			}
			if tc.class == ClassRefused && !strings.Contains(err.Error(), "loopback") {
				t.Errorf("the refusal does not name the class: %v", err)
			}
		})
	}
}
