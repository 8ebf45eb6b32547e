package actors

import (
	"strings"
	"testing"
)

func TestValidateLogin(t *testing.T) {
	valid := []string{"bob", "Alice.Smith+addrwatch@example.com", "0xdeadbeef", "a_b-c", strings.Repeat("a", loginBytesMax)}
	for _, login := range valid {
		if err := ValidateLogin(login); err != nil {
			t.Errorf("ValidateLogin(%q) = %v, want valid", login, err)
		}
	}
	invalid := []string{"", "ab", strings.Repeat("a", loginBytesMax+1), ".bob", "@example.com", "-bob", "_bob", "+bob",
		"bob smith", "bob\x00", "bob/x", "bob:x", "b\u00f6b", "\u212Aelvin", "bob\n", "<script>"}
	for _, login := range invalid {
		err := ValidateLogin(login)
		if err == nil || err.Code != CodeValidation {
			t.Errorf("ValidateLogin(%q) = %v, want VALIDATION", login, err)
		}
	}
}

// Folding touches ASCII letters only: the Kelvin sign, which Unicode
// lower-cases to "k", must not fold onto a login spelled with a k.
func TestFoldLoginIsASCIIOnly(t *testing.T) {
	if got := FoldLogin("Alice.Smith@Example.COM"); got != "alice.smith@example.com" {
		t.Fatalf("FoldLogin = %q", got)
	}
	if got := FoldLogin("\u212Aelvin"); got == "kelvin" {
		t.Fatal("the Kelvin sign folded onto k")
	}
}
