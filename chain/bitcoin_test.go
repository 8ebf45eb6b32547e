package chain

import (
	"errors"
	"strings"
	"testing"
)

// knownReasons is every Reason ValidateBitcoinAddress may return. Checking
// against this set also proves that no error echoes the input back.
var knownReasons = map[string]bool{
	reasonEmpty:          true,
	reasonSpaces:         true,
	reasonTooLong:        true,
	reasonPubKey:         true,
	reasonTestnet:        true,
	reasonMixedCase:      true,
	reasonChecksum:       true,
	reasonUnsupported:    true,
	reasonNotMainnetAddr: true,
}

const (
	genesisP2PKH = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
	// BIP-173 P2WPKH test vector (upper case in the BIP).
	bip173P2WPKH = "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"
	// BIP-173 P2WSH test vector.
	bip173P2WSH = "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"
	// BIP-350 valid segwit v1 (P2TR) test vector.
	bip350P2TR = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"
	// BIP-86 first receiving address (P2TR).
	bip86P2TR = "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr"
	// P2SH example from the Bitcoin wiki.
	wikiP2SH = "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
)

func TestValidateBitcoinAddressValid(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"genesis P2PKH", genesisP2PKH, genesisP2PKH},
		{"P2PKH btcutil vector", "1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX", "1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX"},
		{"P2PKH with leading 1s", "12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG", "12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG"},
		{"P2SH wiki", wikiP2SH, wikiP2SH},
		{"P2SH btcutil vector", "3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC", "3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC"},
		{"BIP-173 P2WPKH upper case is lower-cased", bip173P2WPKH, strings.ToLower(bip173P2WPKH)},
		{"BIP-173 P2WPKH lower case", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{"BIP-173 P2WSH", bip173P2WSH, bip173P2WSH},
		{"BIP-173 P2WSH upper case is lower-cased", strings.ToUpper(bip173P2WSH), bip173P2WSH},
		{"BIP-350 P2TR", bip350P2TR, bip350P2TR},
		{"BIP-350 P2TR upper case is lower-cased", strings.ToUpper(bip350P2TR), bip350P2TR},
		{"BIP-86 P2TR", bip86P2TR, bip86P2TR},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValidateBitcoinAddress(tc.in)
			if err != nil {
				t.Fatalf("ValidateBitcoinAddress(%q) error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("ValidateBitcoinAddress(%q) = %q, want %q", tc.in, got, tc.want)
			}
			// The canonical form is a fixed point.
			again, err := ValidateBitcoinAddress(got)
			if err != nil || again != got {
				t.Fatalf("canonical %q re-validates to %q, %v", got, again, err)
			}
		})
	}
}

func TestValidateBitcoinAddressDuplicatesShareCanonicalForm(t *testing.T) {
	a, errA := ValidateBitcoinAddress(bip173P2WPKH)
	b, errB := ValidateBitcoinAddress(strings.ToLower(bip173P2WPKH))
	if errA != nil || errB != nil {
		t.Fatalf("unexpected errors: %v, %v", errA, errB)
	}
	if a != b {
		t.Fatalf("upper and lower case forms differ: %q vs %q", a, b)
	}
}

func TestValidateBitcoinAddressInvalid(t *testing.T) {
	tests := []struct {
		name, in, reason string // reason "" = any known reason
	}{
		// Input hygiene.
		{"empty", "", reasonEmpty},
		{"leading space", " " + genesisP2PKH, reasonSpaces},
		{"trailing newline", genesisP2PKH + "\n", reasonSpaces},
		{"tab padded", "\t" + bip350P2TR + "\t", reasonSpaces},
		{"no-break space", genesisP2PKH + "\u00a0", reasonSpaces},
		{"only spaces", "   ", reasonSpaces},
		{"inner space", "1A1zP1eP5QGefi2DMPTf TL5SLmv7DivfNa", ""},
		{"91 chars", strings.Repeat("q", 91), reasonTooLong},
		{"10 KB", strings.Repeat("1", 10*1024), reasonTooLong},
		{"10 KB valid prefix", genesisP2PKH + strings.Repeat("x", 10*1024), reasonTooLong},
		{"NUL byte", genesisP2PKH[:10] + "\x00" + genesisP2PKH[11:], ""},
		{"invalid UTF-8", "1A1zP1eP5QGefi2DMPTfTL5SLmv7Divf\xff\xfe", ""},

		// Hex public keys and other hex strings.
		{"compressed pubkey (66 hex)", "02192d74d0cb94344c9569c2e77901573d8d7903c3ebec3a957724895dca52c6b4", reasonPubKey},
		{"compressed pubkey upper-case hex", "03B0BD634234ABBB1BA1E986E884185C61CF43E001F9137F23C2C409273EB16E65", reasonPubKey},
		{"uncompressed pubkey (130 hex)", "04678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5f", reasonTooLong},
		{"txid (64 hex)", "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b", reasonNotMainnetAddr},
		{"short hex", "1a1b", reasonNotMainnetAddr},

		// Near misses: one character changed.
		{"P2PKH last char changed", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", reasonChecksum},
		{"P2PKH middle char changed", "1A1zP1eP5QGefi2DMPTfTL5SLmv8DivfNa", reasonChecksum},
		{"P2SH char changed", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLz", reasonChecksum},
		{"P2TR char changed", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj9", reasonChecksum},
		{"P2WSH char changed", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv4", reasonChecksum},

		// BIP-173 invalid vectors.
		{"BIP-173 invalid hrp", "tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty", reasonNotMainnetAddr},
		{"BIP-173 invalid checksum", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", reasonChecksum},
		{"BIP-173 invalid witness version", "BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2", ""},
		{"BIP-173 invalid program length", "bc1rw5uspcuh", ""},
		{"BIP-173 invalid program length 41 bytes", "bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90", ""},
		{"BIP-173 invalid v0 program length", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", ""},
		{"BIP-173 mixed case (testnet)", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7", reasonMixedCase},
		{"BIP-173 zero padding of more than 4 bits", "tb1pw508d6qejxtdg4y5r3zarqfsj6c3", ""},
		{"BIP-173 non-zero padding", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv", ""},
		{"BIP-173 empty data section", "bc1gmk9yu", ""},

		// Mixed case on mainnet.
		{"mixed case P2WPKH", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3T4", reasonMixedCase},
		{"mixed case P2TR", "BC1P0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQZK5JJ0"[:20] + bip350P2TR[20:], reasonMixedCase},
		{"mixed case hrp", "Bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", reasonMixedCase},

		// BIP-350 invalid vectors.
		{"BIP-350 invalid hrp", "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut", reasonNotMainnetAddr},
		{"BIP-350 v1 with bech32 checksum", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", ""},
		{"BIP-350 testnet v1 with bech32 checksum", "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf", ""},
		{"BIP-350 v16 with bech32 checksum, upper case", "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", ""},
		{"BIP-350 v0 with bech32m checksum", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", ""},
		{"BIP-350 testnet v0 with bech32m checksum", "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47", ""},
		{"BIP-350 invalid character in checksum", "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", ""},
		{"BIP-350 witness version 17", "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", ""},
		{"BIP-350 v1 program length 1", "bc1pw5dgrnzv", ""},
		{"BIP-350 v1 program length 41", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", ""},
		{"BIP-350 mixed case (testnet)", "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq", reasonMixedCase},
		{"BIP-350 zero padding of more than 4 bits", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", ""},
		{"BIP-350 non-zero padding", "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j", ""},

		// Valid encodings (BIP-350 valid vectors) of kinds we do not accept.
		{"BIP-350 v1 40-byte program", "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y", reasonUnsupported},
		{"BIP-350 v16", "BC1SW50QGDZ25J", reasonUnsupported},
		{"BIP-350 v2", "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", reasonUnsupported},
		{"pay-to-anchor", "bc1pfeessrawgf", reasonUnsupported},

		// Test networks.
		{"testnet P2WPKH (BIP-173)", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", reasonTestnet},
		{"testnet P2WSH (BIP-173)", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", reasonTestnet},
		{"testnet P2WSH upper case", "TB1QRP33G0Q5C5TXSP9ARYSRX4K6ZDKFS4NCE4XJ0GDCCCEFVPYSXF3Q0SL5K7", reasonTestnet},
		{"testnet P2TR (BIP-350)", "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c", reasonTestnet},
		{"testnet P2PKH m...", "mrX9vMRYLfVy1BnZbc5gZjuyaqH3ZW2ZHz", reasonTestnet},
		// n...: P2PKH of hash160 ff fe ... ec on testnet3.
		{"testnet P2PKH n...", "n4rY58oeBrrfGaZ9gJbGicqhPp88g4iHFg", reasonTestnet},
		{"testnet P2SH 2...", "2NBFNJTktNa7GZusGbDbGKRZTxdK9VVez3n", reasonTestnet},
		{"regtest P2WPKH", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", reasonTestnet},

		// Other coins and garbage.
		{"litecoin bech32", "LTC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KGMN4N9", reasonNotMainnetAddr},
		{"litecoin P2PKH", "LM2WMpR1Rp6j3Sa59cMXMs1SPzj9eXpGc1", reasonNotMainnetAddr},
		{"random words", "hello world", reasonNotMainnetAddr},
		{"bare hrp", "bc1", reasonNotMainnetAddr},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValidateBitcoinAddress(tc.in)
			if err == nil {
				t.Fatalf("ValidateBitcoinAddress(%q) = %q, want error", tc.in, got)
			}
			if got != "" {
				t.Errorf("canonical = %q on error, want empty", got)
			}
			var ae *AddressError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T (%v) is not *AddressError", err, err)
			}
			if !knownReasons[ae.Reason] {
				t.Errorf("unexpected reason %q", ae.Reason)
			}
			if ae.Error() != ae.Reason {
				t.Errorf("Error() = %q, want %q", ae.Error(), ae.Reason)
			}
			if tc.reason != "" && ae.Reason != tc.reason {
				t.Errorf("reason = %q, want %q", ae.Reason, tc.reason)
			}
			if len(tc.in) >= 4 && strings.Contains(err.Error(), strings.TrimSpace(tc.in)) {
				t.Errorf("error %q echoes the input", err)
			}
		})
	}
}

func TestValidateBitcoinAddressHugeInputIsCheap(t *testing.T) {
	huge := strings.Repeat("bc1q", 1<<20) // 4 MiB
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ValidateBitcoinAddress(huge); err == nil {
			t.Fatal("huge input accepted")
		}
	})
	if allocs > 1 { // only the *AddressError itself
		t.Fatalf("huge input allocated %v times per call", allocs)
	}
}

func TestAddressErrorZeroValue(t *testing.T) {
	var nilErr *AddressError
	if nilErr.Error() == "" || (&AddressError{}).Error() == "" {
		t.Fatal("empty error message")
	}
}

func FuzzValidateBitcoinAddress(f *testing.F) {
	for _, s := range []string{
		"", " ", genesisP2PKH, wikiP2SH, bip173P2WPKH, bip173P2WSH, bip350P2TR, bip86P2TR,
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3T4",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
		"bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
		"bc1pfeessrawgf", "BC1SW50QGDZ25J",
		"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "mrX9vMRYLfVy1BnZbc5gZjuyaqH3ZW2ZHz",
		"2NBFNJTktNa7GZusGbDbGKRZTxdK9VVez3n", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
		"02192d74d0cb94344c9569c2e77901573d8d7903c3ebec3a957724895dca52c6b4",
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ValidateBitcoinAddress(s)
		if err != nil {
			var ae *AddressError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not *AddressError", err)
			}
			if !knownReasons[ae.Reason] {
				t.Fatalf("unexpected reason %q", ae.Reason)
			}
			if got != "" {
				t.Fatalf("non-empty canonical %q with error", got)
			}
			return
		}
		if len(s) > maxBitcoinAddressLen || strings.TrimSpace(s) != s {
			t.Fatalf("accepted %q despite length/whitespace rules", s)
		}
		if !strings.EqualFold(got, s) {
			t.Fatalf("canonical %q differs from input %q beyond case", got, s)
		}
		again, err := ValidateBitcoinAddress(got)
		if err != nil {
			t.Fatalf("canonical %q of %q does not re-validate: %v", got, s, err)
		}
		if again != got {
			t.Fatalf("canonical %q of %q re-validates to %q", got, s, again)
		}
	})
}

func BenchmarkValidateBitcoinAddress(b *testing.B) {
	cases := []struct{ name, in string }{
		{"P2PKH", genesisP2PKH},
		{"P2SH", wikiP2SH},
		{"P2WPKH", bip173P2WPKH},
		{"P2WSH", bip173P2WSH},
		{"P2TR", bip350P2TR},
		{"near-miss", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb"},
		{"testnet-base58", "mrX9vMRYLfVy1BnZbc5gZjuyaqH3ZW2ZHz"},
		{"10KB", strings.Repeat("1", 10*1024)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ValidateBitcoinAddress(c.in)
			}
		})
	}
}

// Off mainnet a card holds the network's own addresses: regtest's bcrt1..
// and testnet's and signet's tb1.., with the same rules, and a mainnet
// address is refused as not of the network.
func TestValidateBitcoinAddressOnEachNetwork(t *testing.T) {
	const (
		mainP2WPKH    = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
		testP2WPKH    = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"
		regtestP2WPKH = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
		testP2PKH     = "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"
	)
	for _, c := range []struct {
		n       Network
		address string
		ok      bool
	}{
		{Mainnet, mainP2WPKH, true},
		{Mainnet, regtestP2WPKH, false},
		{"", mainP2WPKH, true},
		{Testnet, testP2WPKH, true},
		{Testnet, testP2PKH, true},
		{Testnet, mainP2WPKH, false},
		{Testnet, regtestP2WPKH, false},
		{Signet, testP2WPKH, true},
		{Regtest, regtestP2WPKH, true},
		{Regtest, strings.ToUpper(regtestP2WPKH), true},
		{Regtest, testP2PKH, true},
		{Regtest, mainP2WPKH, false},
		{Regtest, testP2WPKH, false},
	} {
		canonical, err := ValidateBitcoinAddressOn(c.address, c.n)
		if c.ok && (err != nil || canonical != strings.ToLower(c.address) && canonical != c.address) {
			t.Errorf("%s on %q: %q, %v", c.address, c.n, canonical, err)
		}
		if !c.ok {
			var ae *AddressError
			want := "not a Bitcoin " + string(c.n.OrMainnet())
			if c.n.OrMainnet() == Mainnet {
				want = reasonTestnet // as ever on mainnet: regtest's and testnet's say so
			}
			if !errors.As(err, &ae) || !strings.Contains(ae.Reason, want) {
				t.Errorf("%s on %q: %q, %v; want not a Bitcoin %s address", c.address, c.n, canonical, err, c.n.OrMainnet())
			}
		}
	}
	if _, err := ValidateBitcoinAddressOn(regtestP2WPKH[:len(regtestP2WPKH)-1]+"q", Regtest); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a regtest address with a typo: %v, want the checksum reason", err)
	}
}
