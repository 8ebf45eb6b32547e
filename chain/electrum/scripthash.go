package electrum

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

// addressBytesMax bounds an address asked about.
const addressBytesMax = 128

// target is an address asked about, as Electrum knows it: the output
// script that pays it, and the script hash the server indexes it by
// (SHA-256 of the script, in hex with its bytes reversed, as the
// protocol's "Script Hashes" says).
type target struct {
	address    string
	script     []byte
	scripthash string
}

// targetOf checks that addr is an address of the source's network in
// its canonical form (what chain.ValidateBitcoinAddressOn gives, and
// what outputs are named by), and makes its target.
func (s *Source) targetOf(addr string) (target, error) {
	if addr == "" || len(addr) > addressBytesMax {
		return target{}, fmt.Errorf("%w: address must be 1 to %d bytes", chain.ErrInvalidArgument, addressBytesMax)
	}
	a, err := btcutil.DecodeAddress(addr, s.params)
	if err != nil || !a.IsForNet(s.params) {
		return target{}, fmt.Errorf("%w: not an address of %s", chain.ErrInvalidArgument, s.params.Name)
	}
	if _, isKey := a.(*btcutil.AddressPubKey); isKey || a.EncodeAddress() != addr {
		return target{}, fmt.Errorf("%w: the address is not in its canonical form", chain.ErrInvalidArgument)
	}
	script, err := txscript.PayToAddrScript(a)
	if err != nil {
		return target{}, fmt.Errorf("%w: no output script pays the address", chain.ErrInvalidArgument)
	}
	return target{address: addr, script: script, scripthash: scriptHash(script)}, nil
}

// scriptHash is the script hash Electrum indexes an output script by:
// SHA-256 of the script, its bytes reversed, in hex.
func scriptHash(script []byte) string {
	sum := sha256.Sum256(script)
	slices.Reverse(sum[:])
	return hex.EncodeToString(sum[:])
}

// addressClasses are the scripts Esplora names an address for: the
// standard single-key and script-hash outputs. A bare public key, a bare
// multisig, OP_RETURN and non-standard scripts are named by none, as
// Esplora does, and their Electrum script hash is not an address's.
var addressClasses = map[txscript.ScriptClass]bool{
	txscript.PubKeyHashTy:          true,
	txscript.ScriptHashTy:          true,
	txscript.WitnessV0PubKeyHashTy: true,
	txscript.WitnessV0ScriptHashTy: true,
	txscript.WitnessV1TaprootTy:    true,
}

// outputAddress is the address an output script pays, as Esplora's
// scriptpubkey_address names it on params' network; "" for a script
// that pays no address.
func outputAddress(script []byte, params *chaincfg.Params) string {
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params)
	if err != nil || !addressClasses[class] || len(addrs) != 1 {
		return ""
	}
	return addrs[0].EncodeAddress()
}
