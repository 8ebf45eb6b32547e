package testaddr

import (
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

func TestP2PKHIsValidDistinctAndStable(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		a := P2PKH(string(rune('a'+i%26)) + string(rune(i)))
		if canonical, err := chain.ValidateBitcoinAddress(a); err != nil || canonical != a {
			t.Fatalf("%s: %q %v", a, canonical, err)
		}
		if seen[a] {
			t.Fatalf("%s given twice", a)
		}
		seen[a] = true
	}
	// The derivation is fixed: tests' fixtures (and the simulated chain's
	// History for them) depend on these values.
	if got := P2PKH("addrwatch-system-test-900"); got != P2PKH("addrwatch-system-test-900") || got[0] != '1' {
		t.Fatalf("P2PKH is not stable: %s", got)
	}
}
