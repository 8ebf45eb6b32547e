package chain

import "crypto/sha256"

// XRP Ledger classic addresses: base58 in the Ripple alphabet of a version
// byte (0x00 for an account), the 20-byte account ID and a 4-byte checksum
// (the first bytes of a double SHA-256). X-addresses, which also carry a
// destination tag, are not accepted.
const (
	xrpAlphabet        = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz"
	xrpAccountVersion  = 0x00
	xrpAccountIDBytes  = 20
	xrpAddressBytes    = 1 + xrpAccountIDBytes + 4
	xrpAddressCharsMin = 25
	xrpAddressCharsMax = 35
)

// xrpDigits maps a Ripple-alphabet character to its value, or -1.
var xrpDigits = digitTable(xrpAlphabet)

// validateXRP accepts a classic XRP address (r..., 25 to 35 characters).
// Base58 encodes each byte string one way only, and decodeRippleBase58 is
// strict about it, so the input is already canonical.
func validateXRP(s string) (string, error) {
	// Version byte 0 is always written as a leading "r" (the alphabet's
	// zero digit); anything else is some other kind of string.
	if len(s) < xrpAddressCharsMin || s[0] != xrpAlphabet[0] {
		return "", addrErr(reasonNotXRP)
	}
	var decoded [xrpAddressBytes]byte
	if !decodeRippleBase58(s, decoded[:]) || decoded[0] != xrpAccountVersion {
		return "", addrErr(reasonNotXRP)
	}
	body := decoded[:1+xrpAccountIDBytes]
	first := sha256.Sum256(body)
	second := sha256.Sum256(first[:])
	if [4]byte(second[:4]) != [4]byte(decoded[len(body):]) {
		return "", addrErr(reasonChecksum)
	}
	return s, nil
}

// decodeRippleBase58 decodes s, in the Ripple alphabet, into out. It reports
// false unless s is exactly the base58 encoding of len(out) bytes: every
// character in the alphabet, the value fitting in out, and one leading zero
// digit for each leading zero byte (so "rr..." cannot stand for "r...").
// It works in place on out, without big integers or allocation.
func decodeRippleBase58(s string, out []byte) bool {
	clear(out)
	for i := 0; i < len(s); i++ {
		d := xrpDigits[s[i]]
		if d < 0 {
			return false
		}
		carry := uint32(d)
		for j := len(out) - 1; j >= 0; j-- {
			carry += uint32(out[j]) * 58
			out[j] = byte(carry)
			carry >>= 8
		}
		if carry != 0 {
			return false // more than len(out) bytes
		}
	}
	zeroDigits := 0
	for zeroDigits < len(s) && s[zeroDigits] == xrpAlphabet[0] {
		zeroDigits++
	}
	zeroBytes := 0
	for zeroBytes < len(out) && out[zeroBytes] == 0 {
		zeroBytes++
	}
	return zeroDigits == zeroBytes
}
