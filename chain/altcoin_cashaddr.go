package chain

import (
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// Bitcoin Cash addresses in the CashAddr format (spec:
// github.com/bitcoincashorg/bitcoincash.org spec/cashaddr.md): an optional
// "bitcoincash:" prefix, then base32 groups of a version byte and a 160-bit
// hash, then a 40-bit BCH-code checksum over the prefix and the payload.
const (
	cashAddrPrefix  = "bitcoincash"
	cashAddrCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	// cashAddrDataGroups is the number of 5-bit groups holding the version
	// byte and a 160-bit hash: 168 bits, padded with two zero bits.
	cashAddrDataGroups     = (8 + 160 + 4) / 5
	cashAddrChecksumGroups = 8
	cashAddrPayloadChars   = cashAddrDataGroups + cashAddrChecksumGroups
	cashAddrCharsMax       = len(cashAddrPrefix) + 1 + cashAddrPayloadChars
)

// CashAddr version byte: bit 7 is reserved (0), bits 6-3 the type, bits 2-0
// the hash size. Size 0 means 160 bits; types 0 and 1 are P2KH and P2SH.
const (
	cashAddrTypeP2KH = 0
	cashAddrTypeP2SH = 1
)

// cashAddrDigits maps a lower-case CashAddr character to its 5-bit value,
// or -1 for characters outside the charset.
var cashAddrDigits = digitTable(cashAddrCharset)

// validateBitcoinCash accepts a mainnet CashAddr P2KH (q...) or P2SH (p...)
// address, with or without the "bitcoincash:" prefix, in lower or upper case
// but not mixed. The canonical form is lower case with the prefix. Legacy
// base58 addresses (1..., 3...) are rejected even though Bitcoin Cash still
// knows them: the same strings are Bitcoin addresses, and a watcher must not
// confuse the two chains. Test-network prefixes and token-aware types
// (z..., r...) are rejected too.
func validateBitcoinCash(s string) (string, error) {
	if isLegacyBitcoinAddress(s) {
		return "", addrErr(reasonCashAddrLegacy)
	}
	if hasMixedCaseASCII(s) {
		return "", addrErr(reasonMixedCase)
	}
	payload := strings.ToLower(s)
	if prefix, rest, found := strings.Cut(payload, ":"); found {
		if prefix != cashAddrPrefix {
			return "", addrErr(reasonNotBitcoinCash)
		}
		payload = rest
	}
	if len(payload) != cashAddrPayloadChars {
		return "", addrErr(reasonNotBitcoinCash)
	}
	var values [cashAddrPayloadChars]byte
	for i := 0; i < len(payload); i++ {
		d := cashAddrDigits[payload[i]]
		if d < 0 {
			return "", addrErr(reasonNotBitcoinCash)
		}
		values[i] = byte(d)
	}
	if cashAddrPolymod(cashAddrPrefix, values[:]) != 0 {
		return "", addrErr(reasonChecksum)
	}

	versionByte, ok := cashAddrVersionByte(values[:cashAddrDataGroups])
	if !ok {
		return "", addrErr(reasonNotBitcoinCash)
	}
	if versionByte&0x80 != 0 || versionByte&0x07 != 0 {
		// Reserved bit set, or a hash size other than 160 bits, which
		// cannot fit in a payload of this length.
		return "", addrErr(reasonNotBitcoinCash)
	}
	switch versionByte >> 3 {
	case cashAddrTypeP2KH, cashAddrTypeP2SH:
	default:
		return "", addrErr(reasonAltUnsupported)
	}
	return cashAddrPrefix + ":" + payload, nil
}

// cashAddrVersionByte regroups the 5-bit data groups into bytes and returns
// the first one, the version byte; the other 20 are the hash, which needs no
// check beyond the checksum. ok is false if the padding bits are not zero.
func cashAddrVersionByte(groups []byte) (versionByte byte, ok bool) {
	var acc uint32
	var bits uint
	first := true
	for _, g := range groups {
		acc = acc<<5 | uint32(g)
		bits += 5
		for bits >= 8 {
			bits -= 8
			if first {
				versionByte = byte(acc >> bits)
				first = false
			}
			acc &= 1<<bits - 1
		}
	}
	// 34 groups are 170 bits: 21 bytes and 2 bits of padding.
	return versionByte, acc == 0
}

// cashAddrPolymod computes the CashAddr checksum function over the low five
// bits of each prefix character, a zero separator and the payload groups
// (checksum included). A valid address gives 0.
func cashAddrPolymod(prefix string, payload []byte) uint64 {
	c := uint64(1)
	for i := 0; i < len(prefix); i++ {
		c = cashAddrPolymodStep(c, prefix[i]&0x1f)
	}
	c = cashAddrPolymodStep(c, 0)
	for _, d := range payload {
		c = cashAddrPolymodStep(c, d)
	}
	return c ^ 1
}

// cashAddrPolymodStep feeds one 5-bit group into the checksum state, as in
// the spec's reference code.
func cashAddrPolymodStep(c uint64, d byte) uint64 {
	c0 := byte(c >> 35)
	c = (c&0x07ffffffff)<<5 ^ uint64(d)
	if c0&0x01 != 0 {
		c ^= 0x98f2bc8e61
	}
	if c0&0x02 != 0 {
		c ^= 0x79b76d99e2
	}
	if c0&0x04 != 0 {
		c ^= 0xf33e5fb3c4
	}
	if c0&0x08 != 0 {
		c ^= 0xae2eabe2a8
	}
	if c0&0x10 != 0 {
		c ^= 0x1e4f43e470
	}
	return c
}

// isLegacyBitcoinAddress reports whether s is a base58check P2PKH (1...) or
// P2SH (3...) address, the legacy format Bitcoin Cash shares with Bitcoin.
func isLegacyBitcoinAddress(s string) bool {
	if len(s) > base58Hash160CharsMax {
		return false
	}
	hash, version, err := base58.CheckDecode(s)
	return err == nil && len(hash) == 20 && (version == 0x00 || version == 0x05)
}
