package chain

import "golang.org/x/crypto/sha3"

// ethereumAddressChars is the length of every Ethereum address: "0x" and 40
// hex digits (a 20-byte account).
const ethereumAddressChars = 2 + 40

// validateEthereum accepts "0x" followed by 40 hex digits. Digits in one case
// (all lower or all upper) carry no checksum and are accepted as they are;
// mixed case is an EIP-55 checksum and must match. The canonical form is the
// EIP-55 checksummed address, so every spelling of one account maps to one
// string. A "0X" prefix and ENS names are not addresses and are rejected.
func validateEthereum(s string) (string, error) {
	if len(s) != ethereumAddressChars || s[:2] != "0x" {
		return "", addrErr(reasonNotEthereum)
	}
	digits := s[2:]
	var hasLower, hasUpper bool
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case '0' <= c && c <= '9':
		case 'a' <= c && c <= 'f':
			hasLower = true
		case 'A' <= c && c <= 'F':
			hasUpper = true
		default:
			return "", addrErr(reasonNotEthereum)
		}
	}
	canonical := eip55(digits)
	if hasLower && hasUpper && canonical != s {
		return "", addrErr(reasonChecksum)
	}
	return canonical, nil
}

// eip55 returns "0x" and the 40 hex digits in EIP-55 mixed case: a letter is
// upper-cased when the matching nibble of Keccak-256(lower-case hex digits)
// is 8 or more. digits must be 40 hex digits.
func eip55(digits string) string {
	var lower [40]byte
	for i := range lower {
		c := digits[i]
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	h := sha3.NewLegacyKeccak256()
	h.Write(lower[:])
	var sum [32]byte
	h.Sum(sum[:0])

	out := make([]byte, 0, ethereumAddressChars)
	out = append(out, '0', 'x')
	for i, c := range lower {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			c -= 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}
