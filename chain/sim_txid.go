package chain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sync"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// The simulated chain's transaction IDs carry what is needed to rebuild the
// transaction, so that GET /tx/{txid} works for any txid the sim has ever
// listed, even in a fresh process that never listed it:
//
//	byte  0      kind (high nibble) and address type (low nibble)
//	bytes 1..2   index of the transaction in the address's timeline,
//	             or the year of a hub transaction
//	byte  3      hub transactions: which of the year's hub transactions
//	bytes 3..22  address transactions: the address key (see below)
//	bytes 23..31 a tag: SHA-256 of the above and the address, so that a
//	             made-up txid is refused (404) instead of "resolved"
//
// The 32 bytes are then scrambled by a two-round Feistel permutation (an
// invertible mix), so txids look like real ones: uniform hex.
//
// The address key is the 20-byte hash inside P2PKH, P2SH and P2WPKH
// addresses, from which the address is rebuilt with no state at all. P2WSH
// and P2TR addresses hold 32 bytes, which do not fit beside an index and a
// tag; their key is a hash of the address, looked up in a bounded index that
// the sim fills as it serves those addresses (the hubs are in it from the
// start). So a P2WSH/P2TR txid resolves in a fresh process only after that
// process has served its address once.

const (
	simKindOwnConfirmed = 0x1
	simKindOwnMempool   = 0x2
	simKindHubConfirmed = 0x3
	simKindHubMempool   = 0x4
)

const (
	simAddrP2PKH  = 0x1
	simAddrP2SH   = 0x2
	simAddrP2WPKH = 0x3
	simAddrP2WSH  = 0x4
	simAddrP2TR   = 0x5
)

// simIndexedAddressesMax bounds the index of P2WSH/P2TR addresses.
const simIndexedAddressesMax = 1 << 16

type simTxRef struct {
	kind     byte
	addrType byte
	number   uint16 // timeline index, or the year of a hub transaction
	hubSlot  byte
	key      [20]byte
}

// simAddressKey returns the address type and key of a canonical address.
func simAddressKey(canonical string) (byte, [20]byte, bool) {
	var key [20]byte
	a, err := btcutil.DecodeAddress(canonical, &chaincfg.MainNetParams)
	if err != nil {
		return 0, key, false
	}
	var t byte
	switch a.(type) {
	case *btcutil.AddressPubKeyHash:
		t = simAddrP2PKH
	case *btcutil.AddressScriptHash:
		t = simAddrP2SH
	case *btcutil.AddressWitnessPubKeyHash:
		t = simAddrP2WPKH
	case *btcutil.AddressWitnessScriptHash:
		t = simAddrP2WSH
	case *btcutil.AddressTaproot:
		t = simAddrP2TR
	default:
		return 0, key, false
	}
	if t == simAddrP2WSH || t == simAddrP2TR {
		sum := sha256.Sum256([]byte("addrwatch-sim/address-key/v1|" + canonical))
		copy(key[:], sum[:])
	} else {
		copy(key[:], a.ScriptAddress())
	}
	return t, key, true
}

// simAddressFromKey rebuilds an address from its type and key; P2WSH and P2TR
// come from the index.
func simAddressFromKey(t byte, key [20]byte, index *simAddressIndex) (string, bool) {
	var (
		a   btcutil.Address
		err error
	)
	switch t {
	case simAddrP2PKH:
		a, err = btcutil.NewAddressPubKeyHash(key[:], &chaincfg.MainNetParams)
	case simAddrP2SH:
		a, err = btcutil.NewAddressScriptHashFromHash(key[:], &chaincfg.MainNetParams)
	case simAddrP2WPKH:
		a, err = btcutil.NewAddressWitnessPubKeyHash(key[:], &chaincfg.MainNetParams)
	case simAddrP2WSH, simAddrP2TR:
		return index.lookup(key)
	default:
		return "", false
	}
	if err != nil {
		return "", false
	}
	return a.EncodeAddress(), true
}

// encodeSimTxID builds the txid of ref; address is "" for hub transactions.
func encodeSimTxID(ref simTxRef, address string) string {
	var p [32]byte
	p[0] = ref.kind<<4 | ref.addrType
	binary.BigEndian.PutUint16(p[1:3], ref.number)
	if ref.kind == simKindHubConfirmed || ref.kind == simKindHubMempool {
		p[3] = ref.hubSlot
	} else {
		copy(p[3:23], ref.key[:])
	}
	tag := simTxIDTag(p[:23], address)
	copy(p[23:], tag[:9])
	simPermute(&p, false)
	return hex.EncodeToString(p[:])
}

// decodeSimTxID undoes encodeSimTxID up to the tag, which the caller checks
// with checkSimTxIDTag once it knows the address.
func decodeSimTxID(txid string) (simTxRef, [32]byte, bool) {
	var p [32]byte
	if n, err := hex.Decode(p[:], []byte(txid)); err != nil || n != 32 || len(txid) != 64 {
		return simTxRef{}, p, false
	}
	simPermute(&p, true)
	ref := simTxRef{kind: p[0] >> 4, addrType: p[0] & 0x0f, number: binary.BigEndian.Uint16(p[1:3])}
	if ref.kind == simKindHubConfirmed || ref.kind == simKindHubMempool {
		ref.hubSlot = p[3]
	} else {
		copy(ref.key[:], p[3:23])
	}
	return ref, p, true
}

func checkSimTxIDTag(p [32]byte, address string) bool {
	tag := simTxIDTag(p[:23], address)
	return string(tag[:9]) == string(p[23:])
}

func simTxIDTag(head []byte, address string) [32]byte {
	h := sha256.New()
	h.Write([]byte("addrwatch-sim/txid-tag/v1|"))
	h.Write(head)
	h.Write([]byte(address))
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// simPermute is a two-round Feistel network over the two 16-byte halves;
// inverse runs the rounds backwards.
func simPermute(p *[32]byte, inverse bool) {
	round := func(r byte, dst, src []byte) {
		f := sha256.Sum256(append([]byte{'a', 'w', 's', r}, src...))
		for i := range dst {
			dst[i] ^= f[i]
		}
	}
	l, r := p[:16], p[16:]
	if !inverse {
		round(1, l, r)
		round(2, r, l)
		return
	}
	round(2, r, l)
	round(1, l, r)
}

// simAddressIndex maps the key of a P2WSH or P2TR address back to the
// address. It holds at most simIndexedAddressesMax entries and forgets the
// oldest first.
type simAddressIndex struct {
	mu    sync.Mutex
	byKey map[[20]byte]string
	ring  [][20]byte // insertion order, for eviction
	next  int        // ring slot the next new key takes
}

func newSimAddressIndex() *simAddressIndex {
	return &simAddressIndex{byKey: make(map[[20]byte]string)}
}

func (x *simAddressIndex) remember(key [20]byte, address string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.byKey[key]; ok {
		return
	}
	if len(x.ring) < simIndexedAddressesMax {
		x.ring = append(x.ring, key)
	} else {
		delete(x.byKey, x.ring[x.next])
		x.ring[x.next] = key
		x.next = (x.next + 1) % simIndexedAddressesMax
	}
	x.byKey[key] = address
}

func (x *simAddressIndex) lookup(key [20]byte) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	a, ok := x.byKey[key]
	return a, ok
}
