package chain

import (
	"errors"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/btcsuite/btcd/chaincfg"
)

// maxBitcoinAddressLen is the longest string ValidateBitcoinAddress will try
// to decode. Bech32 strings are limited to 90 characters by BIP-173 and base58
// addresses are much shorter, so anything longer is rejected before decoding.
const maxBitcoinAddressLen = 90

// Reasons carried by *AddressError. They are short, plain-language messages
// that never include the rejected input.
const (
	reasonEmpty          = "address is empty"
	reasonSpaces         = "address has leading or trailing spaces"
	reasonTooLong        = "address is too long"
	reasonPubKey         = "public keys are not addresses"
	reasonTestnet        = "testnet addresses are not accepted"
	reasonMixedCase      = "address mixes upper and lower case"
	reasonChecksum       = "address checksum does not match; check for typos"
	reasonUnsupported    = "this kind of Bitcoin address is not supported"
	reasonNotMainnetAddr = "not a Bitcoin mainnet address"
)

// AddressError reports why an address was rejected. Reason is a short
// human-readable message; it never contains the rejected input.
type AddressError struct {
	Reason string
}

// Error returns the reason in plain words.
func (e *AddressError) Error() string {
	if e == nil || e.Reason == "" {
		return "invalid address"
	}
	return e.Reason
}

func addrErr(reason string) error { return &AddressError{Reason: reason} }

// ValidateBitcoinAddress checks that s is a Bitcoin mainnet address and returns its canonical form
// (btcutil's EncodeAddress: bech32/bech32m lower-cased), used to detect duplicates.
//
// Accepted: P2PKH (1...), P2SH (3...), P2WPKH and P2WSH (bc1q...) and P2TR
// (bc1p..., bech32m). Bech32 addresses may be all upper case, but not mixed
// case. Rejected: hex public keys, testnet/regtest/signet addresses, other
// witness versions and program types, and any string with surrounding
// whitespace or longer than 90 characters. Errors are always *AddressError.
func ValidateBitcoinAddress(s string) (canonical string, err error) {
	return ValidateBitcoinAddressOn(s, Mainnet)
}

// ValidateBitcoinAddressOn is ValidateBitcoinAddress for the addresses of
// network n (the empty Network is mainnet): on testnet and signet, m..,
// n.., 2.. and tb1..; on regtest, m.., n.., 2.. and bcrt1... The rules
// are the same; only the prefixes differ.
func ValidateBitcoinAddressOn(s string, n Network) (canonical string, err error) {
	n = n.OrMainnet()
	notOnNet := reasonNotMainnetAddr
	if n != Mainnet {
		notOnNet = "not a Bitcoin " + string(n) + " address"
	}
	if err := checkInputHygiene(s, maxBitcoinAddressLen); err != nil {
		return "", err
	}
	if isAllHex(s) {
		// DecodeAddress would accept 66/130 hex characters as a public
		// key; no real address is made only of hex digits.
		if len(s) == 66 || len(s) == 130 {
			return "", addrErr(reasonPubKey)
		}
		return "", addrErr(notOnNet)
	}

	params := n.Params()
	addr, err := btcutil.DecodeAddress(s, params)
	if err != nil {
		return "", decodeFailure(s, err, n, notOnNet)
	}

	switch addr.(type) {
	case *btcutil.AddressPubKeyHash, *btcutil.AddressScriptHash,
		*btcutil.AddressWitnessPubKeyHash, *btcutil.AddressWitnessScriptHash,
		*btcutil.AddressTaproot:
	case *btcutil.AddressPubKey:
		return "", addrErr(reasonPubKey)
	default:
		// e.g. pay-to-anchor (bc1pfeessrawgf): not an owned address.
		return "", addrErr(reasonUnsupported)
	}

	if !addr.IsForNet(params) {
		if n == Mainnet && isForTestNetwork(addr) {
			return "", addrErr(reasonTestnet)
		}
		return "", addrErr(notOnNet)
	}
	return addr.EncodeAddress(), nil
}

// decodeFailure turns a btcutil decoding error into an *AddressError; a
// failure that is not about the string's own shape says it is not an
// address of network n (notOnNet).
func decodeFailure(s string, err error, n Network, notOnNet string) error {
	var (
		mixed    bech32.ErrMixedCase
		badSum   bech32.ErrInvalidChecksum
		badVer   btcutil.UnsupportedWitnessVerError
		badProgL btcutil.UnsupportedWitnessProgLenError
	)
	switch {
	case errors.As(err, &mixed):
		return addrErr(reasonMixedCase)
	case errors.As(err, &badSum), errors.Is(err, btcutil.ErrChecksumMismatch):
		return addrErr(reasonChecksum)
	case errors.As(err, &badVer), errors.As(err, &badProgL):
		return addrErr(reasonUnsupported)
	case n == Mainnet && errors.Is(err, btcutil.ErrUnknownAddressType):
		// Base58 with a valid checksum but a non-mainnet version byte:
		// say so if it is a testnet/regtest/signet address (m.., n.., 2..).
		if a, terr := btcutil.DecodeAddress(s, &chaincfg.TestNet3Params); terr == nil &&
			a.IsForNet(&chaincfg.TestNet3Params) {
			return addrErr(reasonTestnet)
		}
	}
	return addrErr(notOnNet)
}

// isForTestNetwork reports whether addr belongs to testnet3, regtest or
// signet (signet shares testnet's prefixes).
func isForTestNetwork(addr btcutil.Address) bool {
	return addr.IsForNet(&chaincfg.TestNet3Params) ||
		addr.IsForNet(&chaincfg.RegressionNetParams) ||
		addr.IsForNet(&chaincfg.SigNetParams)
}

// checkInputHygiene is where every validator starts, in this order: an
// empty input, one longer than bytesMax (length first, so huge inputs cost
// nothing) and one with whitespace at either end are refused, each with
// its own reason.
func checkInputHygiene(s string, bytesMax int) error {
	switch {
	case s == "":
		return addrErr(reasonEmpty)
	case len(s) > bytesMax:
		return addrErr(reasonTooLong)
	case hasOuterSpace(s):
		return addrErr(reasonSpaces)
	}
	return nil
}

func hasOuterSpace(s string) bool {
	return strings.TrimSpace(s) != s
}

func isAllHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
