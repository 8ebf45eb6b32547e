package chain

import (
	"errors"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"
)

// litecoinAddressCharsMax is the BIP-173 limit for bech32 strings; Litecoin's
// base58 addresses are much shorter.
const litecoinAddressCharsMax = 90

// Litecoin mainnet parameters (chainparams.cpp).
const (
	litecoinP2PKHVersion        = 0x30 // "L..."
	litecoinP2SHVersion         = 0x32 // "M..."
	litecoinLegacyP2SHVersion   = 0x05 // "3...", the same string as a Bitcoin P2SH address
	litecoinBech32HRP           = "ltc"
	litecoinBech32Prefix        = litecoinBech32HRP + "1"
	witnessV0KeyHashBytes       = 20
	witnessV0ScriptHashBytes    = 32
	witnessV1TaprootOutputBytes = 32
)

// validateLitecoin accepts Litecoin mainnet P2PKH (L...), P2SH (M... and the
// legacy 3...) and segwit addresses (ltc1...): witness v0 with a 20- or
// 32-byte program (bech32) and v1 with a 32-byte program (bech32m). Segwit
// addresses may be all upper case but not mixed; their canonical form is
// lower case. Base58 addresses are canonical as given. MWEB addresses
// (ltcmweb1...) and test networks are rejected.
func validateLitecoin(s string) (string, error) {
	if len(s) > len(litecoinBech32Prefix) && strings.EqualFold(s[:len(litecoinBech32Prefix)], litecoinBech32Prefix) {
		return validateLitecoinSegwit(s)
	}
	if len(s) > base58Hash160CharsMax {
		return "", addrErr(reasonNotLitecoin)
	}
	version, hash, err := decodeHash160Check(s, reasonNotLitecoin)
	if err != nil {
		return "", err
	}
	switch version {
	case litecoinP2PKHVersion, litecoinP2SHVersion, litecoinLegacyP2SHVersion:
		return base58.CheckEncode(hash, version), nil
	}
	return "", addrErr(reasonNotLitecoin)
}

// validateLitecoinSegwit checks a bech32/bech32m string with the "ltc" prefix
// by the rules of BIP-173 and BIP-350.
func validateLitecoinSegwit(s string) (string, error) {
	hrp, data, encoding, err := bech32.DecodeGeneric(s)
	if err != nil {
		var (
			mixed  bech32.ErrMixedCase
			badSum bech32.ErrInvalidChecksum
		)
		switch {
		case errors.As(err, &mixed):
			return "", addrErr(reasonMixedCase)
		case errors.As(err, &badSum):
			return "", addrErr(reasonChecksum)
		}
		return "", addrErr(reasonNotLitecoin)
	}
	if hrp != litecoinBech32HRP || len(data) == 0 {
		return "", addrErr(reasonNotLitecoin)
	}
	witnessVersion := data[0]
	program, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return "", addrErr(reasonNotLitecoin)
	}
	// BIP-350: version 0 uses the bech32 checksum, later versions bech32m.
	// A string with the other checksum was made by mistake.
	if (witnessVersion == 0) != (encoding == bech32.Version0) {
		return "", addrErr(reasonChecksum)
	}
	switch {
	case witnessVersion == 0 && (len(program) == witnessV0KeyHashBytes || len(program) == witnessV0ScriptHashBytes):
	case witnessVersion == 1 && len(program) == witnessV1TaprootOutputBytes:
	default:
		return "", addrErr(reasonAltUnsupported)
	}
	return strings.ToLower(s), nil
}
