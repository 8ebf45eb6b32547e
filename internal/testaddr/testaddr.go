// Package testaddr makes valid mainnet Bitcoin addresses for tests:
// deterministic and distinct, each derived from a seed string, so a test
// can name as many addresses as it needs without a list of real ones.
package testaddr

import (
	"crypto/sha256"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// P2PKH returns the pay-to-public-key-hash address whose hash is the first
// 20 bytes of the SHA-256 of seed. Seeds that differ give different
// addresses; the same seed always gives the same one.
func P2PKH(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return FromHash(h[:20])
}

// FromHash returns the P2PKH address of a 20-byte hash.
func FromHash(hash []byte) string {
	a, err := btcutil.NewAddressPubKeyHash(hash, &chaincfg.MainNetParams)
	if err != nil {
		panic("testaddr: " + err.Error()) // only a hash of the wrong length fails
	}
	return a.EncodeAddress()
}
