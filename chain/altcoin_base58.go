package chain

import (
	"errors"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// Coins whose addresses are Bitcoin-alphabet base58: Dogecoin and TRON
// (base58check of a 20-byte hash, like Bitcoin's P2PKH) and Solana (a bare
// 32-byte public key). Litecoin's base58 addresses share decodeHash160Check.

// base58Hash160CharsMax is the longest base58 encoding of 25 bytes (version
// byte, 20-byte hash, 4-byte checksum): 58^34 < 2^200 <= 58^35.
const base58Hash160CharsMax = 35

// base58Hash160Bytes is the decoded size of such an address.
const base58Hash160Bytes = 1 + 20 + 4

// Version bytes, from each coin's chain parameters.
const (
	dogecoinP2PKHVersion = 0x1e // "D..."
	dogecoinP2SHVersion  = 0x16 // "9..." or "A..."
	tronAddressVersion   = 0x41 // "T..."
)

// Solana addresses are the base58 text of a 32-byte ed25519 public key (or a
// program-derived address), with no checksum and no version byte.
const (
	solanaPublicKeyBytes  = 32
	solanaAddressCharsMin = 32
	solanaAddressCharsMax = 44
)

// validateDogecoin accepts Dogecoin mainnet P2PKH and P2SH addresses. The
// canonical form is the base58check re-encoding, which equals the input.
func validateDogecoin(s string) (string, error) {
	version, hash, err := decodeHash160Check(s, reasonNotDogecoin)
	if err != nil {
		return "", err
	}
	if version != dogecoinP2PKHVersion && version != dogecoinP2SHVersion {
		return "", addrErr(reasonNotDogecoin)
	}
	return base58.CheckEncode(hash, version), nil
}

// validateTron accepts a TRON address: base58check of the version byte 0x41
// and a 20-byte account hash. The canonical form equals the input.
func validateTron(s string) (string, error) {
	version, hash, err := decodeHash160Check(s, reasonNotTron)
	if err != nil {
		return "", err
	}
	if version != tronAddressVersion {
		return "", addrErr(reasonNotTron)
	}
	return base58.CheckEncode(hash, version), nil
}

// validateSolana accepts 32 to 44 base58 characters that decode to exactly
// 32 bytes. Any 32 bytes are a valid account (on-curve key or not), so
// nothing more can be checked; a typo is only caught when it changes the
// decoded length. Base58 encodes each byte string one way only, so the input
// is already canonical.
func validateSolana(s string) (string, error) {
	if len(s) < solanaAddressCharsMin {
		return "", addrErr(reasonNotSolana)
	}
	if len(base58.Decode(s)) != solanaPublicKeyBytes {
		return "", addrErr(reasonNotSolana)
	}
	return s, nil
}

// decodeHash160Check decodes a base58check string carrying a 20-byte hash
// and returns its version byte and hash. notCoin is the reason given for a
// string that is not such an address at all.
func decodeHash160Check(s, notCoin string) (version byte, hash []byte, err error) {
	payload, version, err := base58.CheckDecode(s)
	switch {
	case errors.Is(err, base58.ErrChecksum):
		// Only blame the checksum when the string has the shape of an
		// address: a Solana key pasted as Dogecoin is the wrong coin,
		// not a typo.
		if len(base58.Decode(s)) == base58Hash160Bytes {
			return 0, nil, addrErr(reasonChecksum)
		}
		return 0, nil, addrErr(notCoin)
	case err != nil, len(payload) != 20:
		return 0, nil, addrErr(notCoin)
	}
	return version, payload, nil
}
