package chain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"
)

// knownAltcoinReasons is every Reason a Coin or ValidateUnknownAddress may
// return. Checking against this set also proves no error echoes the input.
var knownAltcoinReasons = map[string]bool{
	reasonEmpty:           true,
	reasonSpaces:          true,
	reasonTooLong:         true,
	reasonMixedCase:       true,
	reasonChecksum:        true,
	reasonUnknownCoin:     true,
	reasonAltUnsupported:  true,
	reasonNotEthereum:     true,
	reasonNotLitecoin:     true,
	reasonNotDogecoin:     true,
	reasonNotBitcoinCash:  true,
	reasonCashAddrLegacy:  true,
	reasonNotTron:         true,
	reasonNotSolana:       true,
	reasonNotXRP:          true,
	reasonTextNotUTF8:     true,
	reasonTextMarkup:      true,
	reasonTextInvisible:   true,
	reasonTextUnprintable: true,
}

// Published addresses. Sources are in ALTCOINS.md; each is also checked
// against its published payload in TestAltcoinPublishedPayloads.
const (
	// EIP-55 test vectors ("normal" mixed case, all caps, all lower).
	eip55Mixed1 = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	eip55Mixed2 = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
	eip55Mixed3 = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"
	eip55Mixed4 = "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"
	eip55Caps1  = "0x52908400098527886E0F7030069857D2E4169EE7"
	eip55Caps2  = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"
	eip55Lower1 = "0xde709f2102306220921060314715629080e2fb77"
	eip55Lower2 = "0x27b1fdb04752bbc536007a920d24acb045561c26"

	// Litecoin Core src/test/data/key_io_valid.json.
	ltcP2PKH  = "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA"
	ltcP2PKH2 = "LbfVMz974gbbGFqXF7FZUpSBWSbwBHDwR5"
	ltcP2SH   = "MHrYRxAiMNBTku3eoDHwhA1LQGDjUStZW2"
	ltcP2SH2  = "M9dw1FAoWpHC6PcMzoCHhqQ9McvTyG5Ywj"
	// BIP-173's P2WPKH program with the "ltc" prefix (ACINQ bitcoin-lib's
	// Litecoin Bech32Spec), as published in upper case.
	ltcP2WPKH = "LTC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KGMN4N9"
	// Derived here (TestLitecoinDerivedSegwitVectors) from the BIP-173
	// P2WSH and BIP-350 P2TR programs with the "ltc" prefix.
	ltcP2WSH = "ltc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qmu8tk5"
	ltcP2TR  = "ltc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqpj6zg2"

	// Dogecoin Core src/test/data/key_io_valid.json.
	dogeP2PKH  = "DEQU7G2Chw4r1gSKZt2GfKBpGbkbQSwp3S"
	dogeP2PKH2 = "DF6ADpqER651R2eKfXeJ73iVFW4kRN89jY"
	dogeP2SHA  = "A36czoRusM4VxnNiEjTaaDcMyr4GB73xw1"
	dogeP2SH9  = "9tg8sLnB9okjuNSdgtAWrNPcgijs1yMwBE"

	// CashAddr spec (bitcoincash.org spec/cashaddr.md), legacy-address
	// conversion examples and the 160-bit payload example.
	bchP2KH  = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
	bchP2KH2 = "bitcoincash:qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy"
	bchP2KH3 = "bitcoincash:qqq3728yw0y47sqn6l2na30mcw6zm78dzqre909m2r"
	bchP2SH  = "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq"
	bchP2SH2 = "bitcoincash:pr95sy3j9xwd2ap32xkykttr4cvcu7as4yc93ky28e"
	bchP2SH3 = "bitcoincash:pqq3728yw0y47sqn6l2na30mcw6zm78dzq5ucqzc37"
	bchP2KH4 = "bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2"

	// TRON: the address in the brief, the USDT (TRC-20) contract, and the
	// base58/hex pair on developers.tron.network/docs/encoding.
	tronExample  = "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH"
	tronUSDT     = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
	tronDocsAddr = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"

	// Solana: native program and mint IDs.
	solSystemProgram = "11111111111111111111111111111111"
	solTokenProgram  = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	solWrappedSOL    = "So11111111111111111111111111111111111111112"
	solVoteProgram   = "Vote111111111111111111111111111111111111111"

	// XRP: xrpl.org "Addresses" (special addresses; account example).
	xrpGenesis     = "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"
	xrpAccountZero = "rrrrrrrrrrrrrrrrrrrrrhoLvTp"
	xrpAccountOne  = "rrrrrrrrrrrrrrrrrrrrBZbvji"
	xrpDocsExample = "rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn"
)

func mustCoin(t testing.TB, id string) Coin {
	t.Helper()
	c, ok := LookupCoin(id)
	if !ok {
		t.Fatalf("coin %q not registered", id)
	}
	return c
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// checkAddressError asserts err is an *AddressError with a known reason (and
// the wanted one, unless want is ""), that does not echo in.
func checkAddressError(t *testing.T, in string, err error, want string) {
	t.Helper()
	var ae *AddressError
	if !errors.As(err, &ae) {
		t.Fatalf("error %T (%v) is not *AddressError", err, err)
	}
	if !knownAltcoinReasons[ae.Reason] {
		t.Errorf("unexpected reason %q", ae.Reason)
	}
	if want != "" && ae.Reason != want {
		t.Errorf("reason = %q, want %q", ae.Reason, want)
	}
	if trimmed := strings.TrimSpace(in); len(trimmed) >= 4 && strings.Contains(err.Error(), trimmed) {
		t.Errorf("error %q echoes the input", err)
	}
}

func TestCoinsRegistry(t *testing.T) {
	want := []string{"bitcoin-cash", "dogecoin", "ethereum", "litecoin", "solana", "tron", "xrp"}
	got := Coins()
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
		if c.Name == "" {
			t.Errorf("coin %q has no display name", c.ID)
		}
		if c.validate == nil {
			t.Errorf("coin %q has no validator", c.ID)
		}
		found, ok := LookupCoin(c.ID)
		if !ok || found.ID != c.ID || found.Name != c.Name {
			t.Errorf("LookupCoin(%q) = %+v, %v", c.ID, found, ok)
		}
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("coin IDs = %q, want %q", ids, want)
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("coins are not sorted by ID: %q", ids)
	}

	// Coins hands out a copy.
	got[0].ID = "changed"
	if Coins()[0].ID != want[0] {
		t.Fatal("Coins() exposes the registry itself")
	}

	for _, id := range []string{"", UnknownCoinID, "Ethereum", "ETHEREUM", " ethereum", "bitcoin", "bitcoin_cash", "bch", "eth"} {
		if c, ok := LookupCoin(id); ok {
			t.Errorf("LookupCoin(%q) = %+v, want not found", id, c)
		}
	}
	if UnknownCoinID != "unknown" {
		t.Fatalf("UnknownCoinID = %q", UnknownCoinID)
	}
}

func TestZeroCoinRejectsEverything(t *testing.T) {
	got, err := Coin{}.Validate(eip55Mixed1)
	if err == nil || got != "" {
		t.Fatalf("zero Coin accepted an address: %q, %v", got, err)
	}
	checkAddressError(t, eip55Mixed1, err, reasonUnknownCoin)
}

func TestAltcoinValidateValid(t *testing.T) {
	tests := []struct {
		coin, name, in, want string
	}{
		{"ethereum", "EIP-55 mixed 1", eip55Mixed1, eip55Mixed1},
		{"ethereum", "EIP-55 mixed 2", eip55Mixed2, eip55Mixed2},
		{"ethereum", "EIP-55 mixed 3", eip55Mixed3, eip55Mixed3},
		{"ethereum", "EIP-55 mixed 4", eip55Mixed4, eip55Mixed4},
		{"ethereum", "EIP-55 all caps 1", eip55Caps1, eip55Caps1},
		{"ethereum", "EIP-55 all caps 2", eip55Caps2, eip55Caps2},
		{"ethereum", "EIP-55 all lower 1", eip55Lower1, eip55Lower1},
		{"ethereum", "EIP-55 all lower 2", eip55Lower2, eip55Lower2},
		{"ethereum", "lower case gets checksummed", strings.ToLower(eip55Mixed1), eip55Mixed1},
		{"ethereum", "upper case gets checksummed", "0x" + strings.ToUpper(eip55Mixed2[2:]), eip55Mixed2},
		{"ethereum", "lower case of an all-caps vector", strings.ToLower(eip55Caps1), eip55Caps1},
		{"ethereum", "zero address", "0x0000000000000000000000000000000000000000", "0x0000000000000000000000000000000000000000"},

		{"litecoin", "P2PKH", ltcP2PKH, ltcP2PKH},
		{"litecoin", "P2PKH 2", ltcP2PKH2, ltcP2PKH2},
		{"litecoin", "P2SH M", ltcP2SH, ltcP2SH},
		{"litecoin", "P2SH M 2", ltcP2SH2, ltcP2SH2},
		{"litecoin", "legacy P2SH 3", wikiP2SH, wikiP2SH},
		{"litecoin", "P2WPKH upper case is lower-cased", ltcP2WPKH, strings.ToLower(ltcP2WPKH)},
		{"litecoin", "P2WPKH lower case", strings.ToLower(ltcP2WPKH), strings.ToLower(ltcP2WPKH)},
		{"litecoin", "P2WSH", ltcP2WSH, ltcP2WSH},
		{"litecoin", "P2TR", ltcP2TR, ltcP2TR},
		{"litecoin", "P2TR upper case", strings.ToUpper(ltcP2TR), ltcP2TR},

		{"dogecoin", "P2PKH", dogeP2PKH, dogeP2PKH},
		{"dogecoin", "P2PKH 2", dogeP2PKH2, dogeP2PKH2},
		{"dogecoin", "P2SH A", dogeP2SHA, dogeP2SHA},
		{"dogecoin", "P2SH 9", dogeP2SH9, dogeP2SH9},

		{"bitcoin-cash", "P2KH", bchP2KH, bchP2KH},
		{"bitcoin-cash", "P2KH 2", bchP2KH2, bchP2KH2},
		{"bitcoin-cash", "P2KH 3", bchP2KH3, bchP2KH3},
		{"bitcoin-cash", "P2KH 4", bchP2KH4, bchP2KH4},
		{"bitcoin-cash", "P2SH", bchP2SH, bchP2SH},
		{"bitcoin-cash", "P2SH 2", bchP2SH2, bchP2SH2},
		{"bitcoin-cash", "P2SH 3", bchP2SH3, bchP2SH3},
		{"bitcoin-cash", "without prefix", strings.TrimPrefix(bchP2KH, "bitcoincash:"), bchP2KH},
		{"bitcoin-cash", "upper case", strings.ToUpper(bchP2SH), bchP2SH},
		{"bitcoin-cash", "upper case without prefix", strings.ToUpper(strings.TrimPrefix(bchP2KH2, "bitcoincash:")), bchP2KH2},

		{"tron", "brief example", tronExample, tronExample},
		{"tron", "USDT contract", tronUSDT, tronUSDT},
		{"tron", "TRON docs example", tronDocsAddr, tronDocsAddr},

		{"solana", "system program", solSystemProgram, solSystemProgram},
		{"solana", "token program", solTokenProgram, solTokenProgram},
		{"solana", "wrapped SOL mint", solWrappedSOL, solWrappedSOL},
		{"solana", "vote program", solVoteProgram, solVoteProgram},

		{"xrp", "genesis", xrpGenesis, xrpGenesis},
		{"xrp", "ACCOUNT_ZERO (25 chars)", xrpAccountZero, xrpAccountZero},
		{"xrp", "ACCOUNT_ONE", xrpAccountOne, xrpAccountOne},
		{"xrp", "docs example", xrpDocsExample, xrpDocsExample},
	}
	for _, tc := range tests {
		t.Run(tc.coin+"/"+tc.name, func(t *testing.T) {
			c := mustCoin(t, tc.coin)
			got, err := c.Validate(tc.in)
			if err != nil {
				t.Fatalf("Validate(%q) error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("Validate(%q) = %q, want %q", tc.in, got, tc.want)
			}
			again, err := c.Validate(got)
			if err != nil || again != got {
				t.Fatalf("canonical %q re-validates to %q, %v", got, again, err)
			}
		})
	}
}

func TestAltcoinValidateInvalid(t *testing.T) {
	tests := []struct {
		coin, name, in, reason string // reason "" = any known reason
	}{
		// Ethereum.
		{"ethereum", "empty", "", reasonEmpty},
		{"ethereum", "leading space", " " + eip55Mixed1, reasonSpaces},
		{"ethereum", "trailing newline", eip55Mixed1 + "\n", reasonSpaces},
		{"ethereum", "10 KB", "0x" + strings.Repeat("a", 10*1024), reasonTooLong},
		{"ethereum", "41 hex digits", eip55Lower1 + "0", reasonTooLong},
		{"ethereum", "39 hex digits", eip55Lower1[:41], reasonNotEthereum},
		{"ethereum", "no 0x", "00" + eip55Lower1[2:], reasonNotEthereum},
		{"ethereum", "40 hex digits only", eip55Lower1[2:], reasonNotEthereum},
		{"ethereum", "0X prefix", "0X" + eip55Lower1[2:], reasonNotEthereum},
		{"ethereum", "non-hex digit", eip55Lower1[:41] + "g", reasonNotEthereum},
		{"ethereum", "EIP-55 case of one letter flipped", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", reasonChecksum},
		{"ethereum", "EIP-55 first letter case flipped", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", reasonChecksum},
		{"ethereum", "EIP-55 digit changed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d358", reasonChecksum},
		{"ethereum", "all-caps vector with one letter lowered", "0x52908400098527886e0F7030069857D2E4169EE7", reasonChecksum},
		{"ethereum", "ENS name", "vitalik.eth", reasonNotEthereum},
		{"ethereum", "TRON address", tronExample, reasonNotEthereum},
		{"ethereum", "TRON hex form", "415CBDD86A2FA8DC4BDDD8A8F69DBA48572EEC07FB", reasonNotEthereum},
		{"ethereum", "invalid UTF-8", "0x" + strings.Repeat("\xff", 40), reasonNotEthereum},

		// Litecoin.
		{"litecoin", "empty", "", reasonEmpty},
		{"litecoin", "tab padded", "\t" + ltcP2PKH + "\t", reasonSpaces},
		{"litecoin", "10 KB", strings.Repeat("L", 10*1024), reasonTooLong},
		{"litecoin", "91 chars", "ltc1" + strings.Repeat("q", 87), reasonTooLong},
		{"litecoin", "P2PKH last char changed", ltcP2PKH[:33] + "B", reasonChecksum},
		{"litecoin", "P2SH middle char changed", "MHrYRxAiMNBTku3eoDHwhA1LQGDjUStZW3", reasonChecksum},
		{"litecoin", "P2WPKH char changed", "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n8", reasonChecksum},
		{"litecoin", "P2WPKH mixed case", "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4N9", reasonMixedCase},
		{"litecoin", "P2TR char changed", ltcP2TR[:len(ltcP2TR)-1] + "3", reasonChecksum},
		{"litecoin", "testnet P2PKH (Litecoin Core)", "mwXn5Vhicdav8Av3KMokx4YNuHoGRKxtWs", reasonNotLitecoin},
		{"litecoin", "testnet P2SH Q (Litecoin Core)", "QXaUgLHkZcbJb2j5XgMYzY8cF9YM48Y81Z", reasonNotLitecoin},
		{"litecoin", "testnet P2WSH (ACINQ)", "tltc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qsnr4fp", reasonNotLitecoin},
		{"litecoin", "v16 with bech32 checksum (ACINQ)", "ltc1sw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kx7lrn8", ""},
		{"litecoin", "v16 2-byte with bech32 checksum (ACINQ)", "LTC1SW50QZGYDF5", ""},
		{"litecoin", "invalid program length (ACINQ)", "ltc1rw5uspcuh", ""},
		{"litecoin", "Bitcoin P2PKH", genesisP2PKH, reasonNotLitecoin},
		{"litecoin", "Bitcoin P2WPKH", strings.ToLower(bip173P2WPKH), reasonNotLitecoin},
		{"litecoin", "Dogecoin P2PKH", dogeP2PKH, reasonNotLitecoin},
		{"litecoin", "bare prefix", "ltc1", reasonNotLitecoin},
		{"litecoin", "MWEB-style prefix", "ltcmweb1" + strings.Repeat("q", 60), reasonNotLitecoin},

		// Dogecoin.
		{"dogecoin", "empty", "", reasonEmpty},
		{"dogecoin", "no-break space", dogeP2PKH + "\u00a0", reasonSpaces},
		{"dogecoin", "10 KB", strings.Repeat("D", 10*1024), reasonTooLong},
		{"dogecoin", "36 chars", dogeP2PKH + "11", reasonTooLong},
		{"dogecoin", "last char changed", dogeP2PKH[:33] + "T", reasonChecksum},
		{"dogecoin", "P2SH char changed", "A36czoRusM4VxnNiEjTaaDcMyr4GB73xw2", reasonChecksum},
		{"dogecoin", "testnet P2PKH (Dogecoin Core)", "nbpzakKSn16ZAp7nXuu9tELBrmiVpEyV1Q", reasonNotDogecoin},
		{"dogecoin", "bech32 test vector (Dogecoin Core)", "dg1qw508d6qejxtdg4y5r3zarvary0c5xw7k2npgug", reasonTooLong},
		{"dogecoin", "Litecoin P2PKH", ltcP2PKH, reasonNotDogecoin},
		{"dogecoin", "Bitcoin P2PKH", genesisP2PKH, reasonNotDogecoin},
		{"dogecoin", "Bitcoin P2SH", wikiP2SH, reasonNotDogecoin},
		{"dogecoin", "Solana key", solWrappedSOL, reasonTooLong},
		{"dogecoin", "short base58", "D5", reasonNotDogecoin},

		// Bitcoin Cash.
		{"bitcoin-cash", "empty", "", reasonEmpty},
		{"bitcoin-cash", "leading space", " " + bchP2KH, reasonSpaces},
		{"bitcoin-cash", "10 KB", "bitcoincash:" + strings.Repeat("q", 10*1024), reasonTooLong},
		{"bitcoin-cash", "last char changed", bchP2KH[:len(bchP2KH)-1] + "q", reasonChecksum},
		{"bitcoin-cash", "middle char changed", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx7a", reasonChecksum},
		{"bitcoin-cash", "P2KH payload with P2SH type letter", "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", reasonChecksum},
		{"bitcoin-cash", "mixed case", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6A", reasonMixedCase},
		{"bitcoin-cash", "mixed case prefix", "BitcoinCash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", reasonMixedCase},
		{"bitcoin-cash", "testnet (CashAddr spec)", "bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t", reasonNotBitcoinCash},
		{"bitcoin-cash", "testnet payload without prefix", "pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t", reasonChecksum},
		{"bitcoin-cash", "other prefix (CashAddr spec)", "pref:pr6m7j9njldwwzlg9v7v53unlr4jkmx6ey65nvtks5", reasonNotBitcoinCash},
		{"bitcoin-cash", "empty prefix", ":qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", reasonNotBitcoinCash},
		{"bitcoin-cash", "double prefix", "bitcoincash:bitcoincash:qpm2qsznhks23z7629mms6s4cwef74v", ""},
		{"bitcoin-cash", "prefix only", "bitcoincash:", reasonNotBitcoinCash},
		{"bitcoin-cash", "one char short", bchP2KH[:len(bchP2KH)-1], reasonNotBitcoinCash},
		{"bitcoin-cash", "char outside charset", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdxba", reasonNotBitcoinCash},
		{"bitcoin-cash", "legacy P2PKH (CashAddr spec)", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu", reasonCashAddrLegacy},
		{"bitcoin-cash", "legacy P2SH (CashAddr spec)", "3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC", reasonCashAddrLegacy},
		{"bitcoin-cash", "Bitcoin genesis P2PKH", genesisP2PKH, reasonCashAddrLegacy},
		{"bitcoin-cash", "Bitcoin P2WPKH", strings.ToLower(bip173P2WPKH), reasonNotBitcoinCash},
		{"bitcoin-cash", "Litecoin P2PKH", ltcP2PKH, reasonMixedCase},

		// TRON.
		{"tron", "empty", "", reasonEmpty},
		{"tron", "trailing space", tronExample + " ", reasonSpaces},
		{"tron", "10 KB", strings.Repeat("T", 10*1024), reasonTooLong},
		{"tron", "last char changed", tronExample[:33] + "Z", reasonChecksum},
		{"tron", "middle char changed", "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYG", reasonChecksum},
		{"tron", "hex form", "415CBDD86A2FA8DC4BDDD8A8F69DBA48572EEC07FB", reasonTooLong},
		{"tron", "Ethereum address", eip55Mixed1, reasonTooLong},
		{"tron", "Bitcoin P2PKH", genesisP2PKH, reasonNotTron},
		{"tron", "Dogecoin P2PKH", dogeP2PKH, reasonNotTron},
		{"tron", "lower-cased", strings.ToLower(tronExample), ""},

		// Solana (no checksum: only the decoded length can be checked).
		{"solana", "empty", "", reasonEmpty},
		{"solana", "leading newline", "\n" + solTokenProgram, reasonSpaces},
		{"solana", "10 KB", strings.Repeat("1", 10*1024), reasonTooLong},
		{"solana", "45 chars", solTokenProgram + "11", reasonTooLong},
		{"solana", "31 chars", solSystemProgram[:31], reasonNotSolana},
		{"solana", "33 zero bytes", solSystemProgram + "1", reasonNotSolana},
		{"solana", "char outside alphabet (0)", "0" + solTokenProgram[1:], reasonNotSolana},
		{"solana", "char outside alphabet (l)", solTokenProgram[:10] + "l" + solTokenProgram[11:], reasonNotSolana},
		{"solana", "TRON address", tronExample, reasonNotSolana},
		{"solana", "Bitcoin P2PKH", genesisP2PKH, reasonNotSolana},
		{"solana", "Ethereum address", eip55Mixed1, reasonNotSolana},
		{"solana", "XRP address", xrpDocsExample, reasonNotSolana},
		{"solana", "non-ASCII", strings.Repeat("é", 20), reasonNotSolana},

		// XRP.
		{"xrp", "empty", "", reasonEmpty},
		{"xrp", "trailing CRLF", xrpGenesis + "\r\n", reasonSpaces},
		{"xrp", "10 KB", strings.Repeat("r", 10*1024), reasonTooLong},
		{"xrp", "36 chars", xrpGenesis + "rr", reasonTooLong},
		{"xrp", "last char changed", xrpGenesis[:33] + "g", reasonChecksum},
		{"xrp", "middle char changed", "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTi", reasonChecksum},
		{"xrp", "extra leading r", "r" + xrpAccountZero, reasonNotXRP},
		{"xrp", "24 chars", xrpAccountZero[:24], reasonNotXRP},
		{"xrp", "X-address (xrpaddress.info)", "X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ", reasonTooLong},
		{"xrp", "char outside alphabet", "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyT0", reasonNotXRP},
		{"xrp", "Bitcoin P2PKH", genesisP2PKH, reasonNotXRP},
		{"xrp", "TRON address", tronExample, reasonNotXRP},
	}
	for _, tc := range tests {
		t.Run(tc.coin+"/"+tc.name, func(t *testing.T) {
			got, err := mustCoin(t, tc.coin).Validate(tc.in)
			if err == nil {
				t.Fatalf("Validate(%q) = %q, want error", tc.in, got)
			}
			if got != "" {
				t.Errorf("canonical = %q on error, want empty", got)
			}
			checkAddressError(t, tc.in, err, tc.reason)
		})
	}
}

// TestAltcoinDerivedInvalid builds strings that are valid encodings (right
// checksum) of things the coins must still refuse.
func TestAltcoinDerivedInvalid(t *testing.T) {
	hash := mustHex(t, "76a04053bda0a88bda5177b86a15c3b29f559873") // CashAddr spec hash
	program32 := mustHex(t, "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	program25 := bytes.Repeat([]byte{0x75}, 25)
	tests := []struct {
		coin, name, in, reason string
	}{
		{"litecoin", "v0 with bech32m checksum", testSegwitAddress(t, "ltc", 0, hash, bech32.VersionM), reasonChecksum},
		{"litecoin", "v1 with bech32 checksum", testSegwitAddress(t, "ltc", 1, program32, bech32.Version0), reasonChecksum},
		{"litecoin", "v0 25-byte program", testSegwitAddress(t, "ltc", 0, program25, bech32.Version0), reasonAltUnsupported},
		{"litecoin", "v1 20-byte program", testSegwitAddress(t, "ltc", 1, hash, bech32.VersionM), reasonAltUnsupported},
		{"litecoin", "v2 32-byte program", testSegwitAddress(t, "ltc", 2, program32, bech32.VersionM), reasonAltUnsupported},
		{"litecoin", "testnet v0", testSegwitAddress(t, "tltc", 0, hash, bech32.Version0), reasonNotLitecoin},
		{"litecoin", "version 0x00 base58 (Bitcoin P2PKH)", base58.CheckEncode(hash, 0x00), reasonNotLitecoin},
		{"litecoin", "19-byte base58check hash", base58.CheckEncode(hash[:19], litecoinP2PKHVersion), reasonNotLitecoin},
		{"litecoin", "21-byte base58check hash", base58.CheckEncode(append(slices.Clone(hash), 0), litecoinP2PKHVersion), reasonNotLitecoin},

		{"dogecoin", "Dogecoin version with 21-byte hash", base58.CheckEncode(append(slices.Clone(hash), 0), dogecoinP2PKHVersion), reasonNotDogecoin},
		{"dogecoin", "version 0x1f", base58.CheckEncode(hash, 0x1f), reasonNotDogecoin},

		{"tron", "version 0x42", base58.CheckEncode(hash, 0x42), reasonNotTron},
		{"tron", "testnet-era version 0xa0", base58.CheckEncode(hash, 0xa0), reasonNotTron},
		{"tron", "19-byte hash", base58.CheckEncode(hash[:19], tronAddressVersion), reasonNotTron},

		{"solana", "31 bytes", base58.Encode(bytes.Repeat([]byte{0xab}, 31)), reasonNotSolana},
		{"solana", "33 bytes", base58.Encode(bytes.Repeat([]byte{0x01}, 33)), ""},

		{"bitcoin-cash", "token-aware P2PKH type 2", testCashAddr(t, 0x10, hash), reasonAltUnsupported},
		{"bitcoin-cash", "token-aware P2SH type 3", testCashAddr(t, 0x18, hash), reasonAltUnsupported},
		{"bitcoin-cash", "type 15", testCashAddr(t, 0x78, hash), reasonAltUnsupported},
		{"bitcoin-cash", "size bits say 192 bits", testCashAddr(t, 0x01, hash), reasonNotBitcoinCash},
		{"bitcoin-cash", "reserved bit set", testCashAddr(t, 0x80, hash), reasonNotBitcoinCash},
		{"bitcoin-cash", "non-zero padding", testCashAddrGroups(t, cashAddrPrefix, testCashAddrDataGroups(0x00, hash, 1)), reasonNotBitcoinCash},
		{"bitcoin-cash", "256-bit hash", testCashAddr(t, 0x03, bytes.Repeat([]byte{0x11}, 32)), reasonTooLong},
		{"bitcoin-cash", "payload checksummed for bchtest", strings.TrimPrefix(testCashAddrGroups(t, "bchtest", testCashAddrDataGroups(0x00, hash, 0)), "bchtest:"), reasonChecksum},

		{"xrp", "version byte 1", testRippleEncode(testXRPAddressBytes(0x01, hash)), reasonNotXRP},
		{"xrp", "19-byte account id", testRippleEncode(testWithDoubleSHA256(append([]byte{0x00}, hash[:19]...))), reasonNotXRP},
		{"xrp", "21-byte account id", testRippleEncode(testWithDoubleSHA256(append([]byte{0x00}, append(slices.Clone(hash), 7)...))), reasonNotXRP},
		{"xrp", "Bitcoin alphabet encoding of an XRP payload", base58.Encode(testXRPAddressBytes(0x00, hash)), reasonNotXRP},
	}
	for _, tc := range tests {
		t.Run(tc.coin+"/"+tc.name, func(t *testing.T) {
			got, err := mustCoin(t, tc.coin).Validate(tc.in)
			if err == nil {
				t.Fatalf("Validate(%q) = %q, want error", tc.in, got)
			}
			checkAddressError(t, tc.in, err, tc.reason)
		})
	}
}

// TestAltcoinAddressesStayApart gives every valid example to every coin: only
// its own coin may accept it.
func TestAltcoinAddressesStayApart(t *testing.T) {
	examples := map[string][]string{
		"bitcoin-cash": {bchP2KH, bchP2SH, strings.TrimPrefix(bchP2KH4, "bitcoincash:")},
		"dogecoin":     {dogeP2PKH, dogeP2SHA, dogeP2SH9},
		"ethereum":     {eip55Mixed1, eip55Caps1, eip55Lower1},
		"litecoin":     {ltcP2PKH, ltcP2SH, wikiP2SH, ltcP2WPKH, ltcP2WSH, ltcP2TR},
		"solana":       {solSystemProgram, solTokenProgram, solWrappedSOL},
		"tron":         {tronExample, tronUSDT, tronDocsAddr},
		"xrp":          {xrpGenesis, xrpAccountZero, xrpDocsExample},
	}
	bitcoin := []string{genesisP2PKH, bip173P2WPKH, bip350P2TR}
	for _, c := range Coins() {
		for owner, addrs := range examples {
			for _, a := range addrs {
				got, err := c.Validate(a)
				if owner == c.ID && err != nil {
					t.Errorf("%s rejects its own address %q: %v", c.ID, a, err)
				}
				if owner != c.ID && err == nil {
					t.Errorf("%s accepts %s address %q as %q", c.ID, owner, a, got)
				}
			}
		}
		for _, a := range bitcoin {
			if got, err := c.Validate(a); err == nil {
				t.Errorf("%s accepts Bitcoin address %q as %q", c.ID, a, got)
			}
		}
	}
}

// TestAltcoinPublishedPayloads checks that the published addresses decode to
// the payloads published beside them, so the vectors are what they claim.
func TestAltcoinPublishedPayloads(t *testing.T) {
	t.Run("base58check", func(t *testing.T) {
		tests := []struct {
			addr    string
			version byte
			hash    string // from the published script or hex form
		}{
			// Litecoin Core key_io_valid.json (script 76a914<hash>88ac or a914<hash>87).
			{ltcP2PKH, litecoinP2PKHVersion, "558dbca7118cd5894502767c7b2ffc21a22f54db"},
			{ltcP2PKH2, litecoinP2PKHVersion, "b4565f467408e9e1c1d2a3b0ccdeff84db3a3b93"},
			{ltcP2SH, litecoinP2SHVersion, "6d328a5b2a20d943a641c8d29b6cc3c2d2df85d3"},
			{ltcP2SH2, litecoinP2SHVersion, "130ef8742ad7492b389509252c6721775fb11273"},
			// Dogecoin Core key_io_valid.json.
			{dogeP2PKH, dogecoinP2PKHVersion, "65a16059864a2fdbc7c99a4723a8395bc6f188eb"},
			{dogeP2PKH2, dogecoinP2PKHVersion, "6d23156cbbdcc82a5a47eee4c2c7c583c18b6bf4"},
			{dogeP2SHA, dogecoinP2SHVersion, "74f209f6ea907e2ea48f74fae05782ae8a665257"},
			{dogeP2SH9, dogecoinP2SHVersion, "188f91a931947eddd7432d6e614387e32b244709"},
			// developers.tron.network/docs/encoding: 41 5CBDD8...07FB.
			{tronDocsAddr, tronAddressVersion, "5cbdd86a2fa8dc4bddd8a8f69dba48572eec07fb"},
		}
		for _, tc := range tests {
			hash, version, err := base58.CheckDecode(tc.addr)
			if err != nil || version != tc.version || hex.EncodeToString(hash) != tc.hash {
				t.Errorf("%s decodes to version %#x hash %x (%v), want %#x %s", tc.addr, version, hash, err, tc.version, tc.hash)
			}
		}
	})

	t.Run("cashaddr from legacy", func(t *testing.T) {
		// CashAddr spec: legacy address and its CashAddr form.
		pairs := [][2]string{
			{"1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu", bchP2KH},
			{"1KXrWXciRDZUpQwQmuM1DbwsKDLYAYsVLR", bchP2KH2},
			{"16w1D5WRVKJuZUsSRzdLp9w3YGcgoxDXb", bchP2KH3},
			{"3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC", bchP2SH},
			{"3LDsS579y7sruadqu11beEJoTjdFiFCdX4", bchP2SH2},
			{"31nwvkZwyPdgzjBJZXfDmSWsC4ZLKpYyUw", bchP2SH3},
		}
		for _, p := range pairs {
			hash, version, err := base58.CheckDecode(p[0])
			if err != nil {
				t.Fatalf("legacy %s: %v", p[0], err)
			}
			cashType := byte(cashAddrTypeP2KH)
			if version == 0x05 {
				cashType = cashAddrTypeP2SH
			}
			if got := testCashAddr(t, cashType<<3, hash); got != p[1] {
				t.Errorf("legacy %s encodes to %s, spec says %s", p[0], got, p[1])
			}
		}
		// The spec's 160-bit example: type 0, hash F5BF48B3...DAC9.
		if got := testCashAddr(t, 0x00, mustHex(t, "f5bf48b397dae70be82b3cca4793f8eb2b6cdac9")); got != bchP2KH4 {
			t.Errorf("spec 160-bit example encodes to %s, want %s", got, bchP2KH4)
		}
	})

	t.Run("xrp", func(t *testing.T) {
		tests := []struct{ addr, accountID string }{
			{xrpGenesis, "b5f762798a53d543a014caf8b297cff8f2f937e8"},
			{xrpAccountZero, "0000000000000000000000000000000000000000"},
			{xrpAccountOne, "0000000000000000000000000000000000000001"},
		}
		for _, tc := range tests {
			if got := testRippleEncode(testXRPAddressBytes(0x00, mustHex(t, tc.accountID))); got != tc.addr {
				t.Errorf("account %s encodes to %s, want %s", tc.accountID, got, tc.addr)
			}
			var decoded [xrpAddressBytes]byte
			if !decodeRippleBase58(tc.addr, decoded[:]) || hex.EncodeToString(decoded[1:21]) != tc.accountID {
				t.Errorf("%s decodes to %x", tc.addr, decoded)
			}
		}
	})

	t.Run("solana", func(t *testing.T) {
		tests := []struct{ addr, key string }{
			{solSystemProgram, strings.Repeat("00", 32)},
			{solTokenProgram, "06ddf6e1d765a193d9cbe146ceeb79ac1cb485ed5f5b37913a8cf5857eff00a9"},
			{solWrappedSOL, "069b8857feab8184fb687f634618c035dac439dc1aeb3b5598a0f00000000001"},
		}
		for _, tc := range tests {
			if got := hex.EncodeToString(base58.Decode(tc.addr)); got != tc.key {
				t.Errorf("%s decodes to %s, want %s", tc.addr, got, tc.key)
			}
		}
	})
}

// TestLitecoinDerivedSegwitVectors re-derives the Litecoin segwit vectors
// from BIP-173/BIP-350 programs; the P2WPKH one matches the published string.
func TestLitecoinDerivedSegwitVectors(t *testing.T) {
	tests := []struct {
		name, want string
		version    byte
		program    string
		encoding   bech32.Version
	}{
		{"P2WPKH (published)", strings.ToLower(ltcP2WPKH), 0, "751e76e8199196d454941c45d1b3a323f1433bd6", bech32.Version0},
		{"P2WSH", ltcP2WSH, 0, "1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262", bech32.Version0},
		{"P2TR", ltcP2TR, 1, "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", bech32.VersionM},
	}
	for _, tc := range tests {
		if got := testSegwitAddress(t, "ltc", tc.version, mustHex(t, tc.program), tc.encoding); got != tc.want {
			t.Errorf("%s: derived %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestEthereumEIP55AnyCaseGivesChecksum(t *testing.T) {
	for _, v := range []string{eip55Mixed1, eip55Mixed2, eip55Mixed3, eip55Mixed4, eip55Caps1, eip55Caps2, eip55Lower1, eip55Lower2} {
		for _, in := range []string{v, "0x" + strings.ToLower(v[2:]), "0x" + strings.ToUpper(v[2:])} {
			got, err := mustCoin(t, "ethereum").Validate(in)
			if err != nil || got != v {
				t.Errorf("Validate(%q) = %q, %v; want %q", in, got, err, v)
			}
		}
	}
}

func TestValidateUnknownAddress(t *testing.T) {
	accept := []struct{ name, in string }{
		{"one char", "a"},
		{"words with inner space", "my cardano wallet"},
		{"bech32-like", "cosmos1qypqxpq9qcrsszg2pvxq6rs0zqg3yyc5lzv7xu"},
		{"punctuation", "addr:1/2?x=y#z;(ok)!~@$%^*+=|[]{},.-_"},
		{"Monero-like", "49wDQf83p5tHibw9ay6fBvcv48GJynyjVE2V8EX8Vrtt89rPyECRm5zbBqng3udqrYHTjsZStSpnMCa8JRw7cfyGJwMPxDM"},
		{"Japanese", "ウォレットのアドレス"},
		{"emoji", "🙂 tip jar"},
		{"combining accent", "cafe\u0301"},
		{"128 ASCII", strings.Repeat("a", 128)},
		{"128 two-byte chars", strings.Repeat("é", 128)},
		{"128 four-byte chars (512 bytes)", strings.Repeat("😀", 128)},
	}
	for _, tc := range accept {
		t.Run("accept/"+tc.name, func(t *testing.T) {
			got, err := ValidateUnknownAddress(tc.in)
			if err != nil || got != tc.in {
				t.Fatalf("ValidateUnknownAddress(%q) = %q, %v; want it unchanged", tc.in, got, err)
			}
		})
	}

	reject := []struct{ name, in, reason string }{
		{"empty", "", reasonEmpty},
		{"only a space", " ", reasonSpaces},
		{"leading space", " abc", reasonSpaces},
		{"trailing newline", "abc\n", reasonSpaces},
		{"leading tab", "\tabc", reasonSpaces},
		{"trailing no-break space", "abc\u00a0", reasonSpaces},
		{"trailing ideographic space", "abc\u3000", reasonSpaces},
		{"129 ASCII", strings.Repeat("a", 129), reasonTooLong},
		{"129 two-byte chars", strings.Repeat("é", 129), reasonTooLong},
		{"129 four-byte chars", strings.Repeat("😀", 129), reasonTooLong},
		{"10 KB", strings.Repeat("a", 10*1024), reasonTooLong},
		{"invalid UTF-8", "abc\xff", reasonTextNotUTF8},
		{"truncated UTF-8", "abc\xc3", reasonTextNotUTF8},
		{"UTF-16 surrogate bytes", "a\xed\xa0\x80b", reasonTextNotUTF8},
		{"less than", "a<b", reasonTextMarkup},
		{"script tag", "<script>alert(1)</script>", reasonTextMarkup},
		{"greater than", "a>b", reasonTextMarkup},
		{"ampersand", "a&amp;b", reasonTextMarkup},
		{"double quote", `a"b`, reasonTextMarkup},
		{"single quote", "a'b", reasonTextMarkup},
		{"backtick", "a`b", reasonTextMarkup},
		{"backslash", `a\b`, reasonTextMarkup},
		{"NUL", "a\x00b", reasonTextInvisible},
		{"inner tab", "a\tb", reasonTextInvisible},
		{"inner newline", "a\nb", reasonTextInvisible},
		{"DEL", "a\x7fb", reasonTextInvisible},
		{"C1 control", "a\u0085b", reasonTextInvisible},
		{"right-to-left override", "abc\u202edef", reasonTextInvisible},
		{"left-to-right isolate", "abc\u2066def", reasonTextInvisible},
		{"zero-width space", "abc\u200bdef", reasonTextInvisible},
		{"zero-width joiner", "👩\u200d💻", reasonTextInvisible},
		{"leading byte order mark", "\ufeffabc", reasonTextInvisible},
		{"soft hyphen", "ab\u00adc", reasonTextInvisible},
		{"inner no-break space", "a\u00a0b", reasonTextUnprintable},
		{"line separator", "a\u2028b", reasonTextUnprintable},
		{"private use", "a\ue000b", reasonTextUnprintable},
		{"unassigned code point", "a\u0378b", reasonTextUnprintable},
	}
	for _, tc := range reject {
		t.Run("reject/"+tc.name, func(t *testing.T) {
			got, err := ValidateUnknownAddress(tc.in)
			if err == nil {
				t.Fatalf("ValidateUnknownAddress(%q) = %q, want error", tc.in, got)
			}
			if got != "" {
				t.Errorf("canonical = %q on error, want empty", got)
			}
			checkAddressError(t, tc.in, err, tc.reason)
		})
	}
}

func TestAltcoinHugeInputIsCheap(t *testing.T) {
	huge := strings.Repeat("r", 4<<20) // 4 MiB
	check := func(name string, validate func(string) (string, error)) {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := validate(huge); err == nil {
				t.Fatalf("%s accepted a huge input", name)
			}
		})
		if allocs > 1 { // only the *AddressError itself
			t.Errorf("%s: huge input allocated %v times per call", name, allocs)
		}
	}
	for _, c := range Coins() {
		check(c.ID, c.Validate)
	}
	check(UnknownCoinID, ValidateUnknownAddress)
}

// altcoinFuzzSeeds are valid and near-miss inputs for every coin.
var altcoinFuzzSeeds = []string{
	"", " ", "0x", "ltc1", "bitcoincash:", "r", "T", "1",
	eip55Mixed1, eip55Caps1, eip55Lower1, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",
	ltcP2PKH, ltcP2SH, wikiP2SH, ltcP2WPKH, ltcP2WSH, ltcP2TR, "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4N9",
	dogeP2PKH, dogeP2SHA, dogeP2SH9,
	bchP2KH, bchP2SH, strings.ToUpper(bchP2KH2), "qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a",
	"bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu",
	tronExample, tronUSDT, "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYG",
	solSystemProgram, solTokenProgram, solWrappedSOL,
	xrpGenesis, xrpAccountZero, xrpAccountOne, "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTi",
	"my wallet", "a<b", "abc\u202edef", "🙂", "\xff",
}

func FuzzAltcoinValidate(f *testing.F) {
	for _, s := range altcoinFuzzSeeds {
		f.Add(s)
	}
	coinList := Coins()
	f.Fuzz(func(t *testing.T, s string) {
		var acceptedBy []string
		for _, c := range coinList {
			got, err := c.Validate(s)
			if err != nil {
				var ae *AddressError
				if !errors.As(err, &ae) || !knownAltcoinReasons[ae.Reason] {
					t.Fatalf("%s: unexpected error %T %v", c.ID, err, err)
				}
				if got != "" {
					t.Fatalf("%s: non-empty canonical %q with error", c.ID, got)
				}
				continue
			}
			acceptedBy = append(acceptedBy, c.ID)
			if len(s) > litecoinAddressCharsMax || strings.TrimSpace(s) != s {
				t.Fatalf("%s accepted %q despite length/whitespace rules", c.ID, s)
			}
			// Canonical forms only change case (and add the CashAddr prefix).
			bare := strings.TrimPrefix(got, cashAddrPrefix+":")
			if !strings.EqualFold(got, s) && !strings.EqualFold(bare, strings.TrimPrefix(strings.ToLower(s), cashAddrPrefix+":")) {
				t.Fatalf("%s: canonical %q differs from input %q beyond case and prefix", c.ID, got, s)
			}
			again, err := c.Validate(got)
			if err != nil || again != got {
				t.Fatalf("%s: canonical %q of %q re-validates to %q, %v", c.ID, got, s, again, err)
			}
			if c.ID == "xrp" {
				var decoded [xrpAddressBytes]byte
				decodeRippleBase58(s, decoded[:])
				if testRippleEncode(decoded[:]) != s {
					t.Fatalf("xrp accepted %q, which is not the encoding of its own bytes", s)
				}
			}
		}
		if len(acceptedBy) > 1 {
			t.Fatalf("%q accepted by several coins: %q", s, acceptedBy)
		}

		got, err := ValidateUnknownAddress(s)
		if err != nil {
			var ae *AddressError
			if !errors.As(err, &ae) || !knownAltcoinReasons[ae.Reason] || got != "" {
				t.Fatalf("unknown: unexpected result %q, %T %v", got, err, err)
			}
			return
		}
		if got != s {
			t.Fatalf("unknown: canonical %q differs from input %q", got, s)
		}
		if strings.ContainsAny(s, unknownAddressMarkupChars) || strings.TrimSpace(s) != s {
			t.Fatalf("unknown: accepted unsafe text %q", s)
		}
	})
}

func BenchmarkAltcoinValidate(b *testing.B) {
	cases := []struct{ coin, name, in string }{
		{"ethereum", "EIP-55", eip55Mixed1},
		{"ethereum", "lower", eip55Lower1},
		{"ethereum", "bad-checksum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"},
		{"litecoin", "P2PKH", ltcP2PKH},
		{"litecoin", "P2WPKH", ltcP2WPKH},
		{"litecoin", "P2TR", ltcP2TR},
		{"dogecoin", "P2PKH", dogeP2PKH},
		{"bitcoin-cash", "P2KH", bchP2KH},
		{"bitcoin-cash", "legacy", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu"},
		{"tron", "address", tronExample},
		{"solana", "token-program", solTokenProgram},
		{"xrp", "genesis", xrpGenesis},
		{"xrp", "near-miss", "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTi"},
		{"litecoin", "10KB", strings.Repeat("L", 10*1024)},
	}
	for _, c := range cases {
		coin := mustCoin(b, c.coin)
		b.Run(c.coin+"/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = coin.Validate(c.in)
			}
		})
	}
	for _, c := range []struct{ name, in string }{
		{"short", "my cardano wallet"},
		{"128-chars", strings.Repeat("ü", 128)},
		{"10KB", strings.Repeat("a", 10*1024)},
	} {
		b.Run("unknown/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ValidateUnknownAddress(c.in)
			}
		})
	}
}

// Test-only encoders, used to derive vectors and build near misses.

// testSegwitAddress encodes a witness program with btcutil's encoder.
func testSegwitAddress(t testing.TB, hrp string, witnessVersion byte, program []byte, encoding bech32.Version) string {
	t.Helper()
	groups, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	data := append([]byte{witnessVersion}, groups...)
	var s string
	if encoding == bech32.VersionM {
		s, err = bech32.EncodeM(hrp, data)
	} else {
		s, err = bech32.Encode(hrp, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testCashAddrDataGroups splits a version byte and hash into 5-bit groups;
// padding is OR-ed into the last group's unused low bits.
func testCashAddrDataGroups(versionByte byte, hash []byte, padding byte) []byte {
	var groups []byte
	var acc uint32
	var bits uint
	for _, b := range append([]byte{versionByte}, hash...) {
		acc = acc<<8 | uint32(b)
		bits += 8
		for bits >= 5 {
			bits -= 5
			groups = append(groups, byte(acc>>bits)&0x1f)
		}
	}
	if bits > 0 {
		groups = append(groups, byte(acc<<(5-bits))&0x1f|padding)
	}
	return groups
}

// testCashAddrGroups appends the CashAddr checksum to data groups and
// writes "prefix:payload".
func testCashAddrGroups(t testing.TB, prefix string, groups []byte) string {
	t.Helper()
	withZeros := append(slices.Clone(groups), make([]byte, cashAddrChecksumGroups)...)
	sum := cashAddrPolymod(prefix, withZeros)
	var out strings.Builder
	out.WriteString(prefix + ":")
	for _, g := range groups {
		out.WriteByte(cashAddrCharset[g])
	}
	for i := range cashAddrChecksumGroups {
		out.WriteByte(cashAddrCharset[(sum>>(5*(7-i)))&0x1f])
	}
	return out.String()
}

// testCashAddr encodes a mainnet CashAddr address.
func testCashAddr(t testing.TB, versionByte byte, hash []byte) string {
	t.Helper()
	return testCashAddrGroups(t, cashAddrPrefix, testCashAddrDataGroups(versionByte, hash, 0))
}

// testWithDoubleSHA256 appends the 4-byte double-SHA-256 checksum.
func testWithDoubleSHA256(body []byte) []byte {
	first := sha256.Sum256(body)
	second := sha256.Sum256(first[:])
	return append(slices.Clone(body), second[:4]...)
}

// testXRPAddressBytes is version byte, account ID and checksum.
func testXRPAddressBytes(version byte, accountID []byte) []byte {
	return testWithDoubleSHA256(append([]byte{version}, accountID...))
}

// testRippleEncode is a plain big-integer base58 encoder with the Ripple
// alphabet, independent of decodeRippleBase58.
func testRippleEncode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, xrpAlphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, xrpAlphabet[0])
	}
	slices.Reverse(out)
	return string(out)
}
