package regtest

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// AddressKind is the script a Key's address pays to.
type AddressKind int

// The kinds of address a Key can have.
const (
	P2WPKH AddressKind = iota // bech32, bcrt1q…
	P2PKH                     // base58, m… or n…
)

// replaceableSequence signals BIP 125: a transaction with an input whose
// sequence is below 0xfffffffe may be replaced by one paying more.
const replaceableSequence = wire.MaxTxInSequenceNum - 2

// dustSats is the smallest change output worth making; less goes to the
// fee.
const dustSats = 1000

// Key is an address whose private key the test holds, so that it can
// spend from the address as well as receive: Fund gives it a coin from
// the harness's wallet, Send spends one, Replace replaces an unconfirmed
// Send with one paying a higher fee. It keeps track of its coins itself
// (everything it was sent through Fund and its own change), confirmed or
// not, and spends the newest one that is large enough, so a test knows
// which: a Send right after a Fund or a Send spends that coin, making a
// chain of unconfirmed transactions. It does not follow reorgs.
type Key struct {
	Address string

	node   *Node
	key    *btcec.PrivateKey
	script []byte
	kind   AddressKind

	mu     sync.Mutex
	coins  []coin           // oldest first
	spends map[string]spend // by txid: what Replace rebuilds
}

type coin struct {
	outpoint wire.OutPoint
	value    int64
}

// spend is one Send: the coin it spent, its payee and its amount.
type spend struct {
	coin
	to   []byte
	sats int64
	fee  int64
}

// NewKey makes a key nobody has used, with an address of kind.
func (n *Node) NewKey(kind AddressKind) (*Key, error) {
	priv, err := btcec.NewPrivateKey()
	if err != nil {
		return nil, err
	}
	hash := btcutil.Hash160(priv.PubKey().SerializeCompressed())
	var addr btcutil.Address
	switch kind {
	case P2WPKH:
		addr, err = btcutil.NewAddressWitnessPubKeyHash(hash, n.Params())
	case P2PKH:
		addr, err = btcutil.NewAddressPubKeyHash(hash, n.Params())
	default:
		err = fmt.Errorf("regtest: no address kind %d", kind)
	}
	if err != nil {
		return nil, err
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, err
	}
	return &Key{
		Address: addr.EncodeAddress(), node: n, key: priv, script: script, kind: kind,
		spends: map[string]spend{},
	}, nil
}

// Fund pays sats from the harness's wallet to the key and returns the
// transaction's ID; the coin can be spent at once.
func (k *Key) Fund(sats int64) (string, error) {
	tx, err := k.node.send(&wire.TxOut{Value: sats, PkScript: k.script})
	if err != nil {
		return "", err
	}
	txid := tx.TxHash()
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, out := range tx.TxOut {
		if out.Value == sats && bytes.Equal(out.PkScript, k.script) {
			k.coins = append(k.coins, coin{wire.OutPoint{Hash: txid, Index: uint32(i)}, sats})
			return txid.String(), nil
		}
	}
	return "", fmt.Errorf("regtest: the funding transaction %s does not pay the key", txid)
}

// Send pays sats to addr from one of the key's coins, with fee, the
// change back to the key, signalling that it may be replaced (BIP 125).
// It returns the transaction's ID.
func (k *Key) Send(addr string, sats, fee int64) (string, error) {
	to, err := k.node.script(addr)
	if err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := len(k.coins) - 1; i >= 0; i-- {
		c := k.coins[i]
		if c.value < sats+fee {
			continue
		}
		k.coins = slices.Delete(k.coins, i, i+1)
		txid, err := k.broadcast(spend{coin: c, to: to, sats: sats, fee: fee})
		if err != nil {
			k.coins = slices.Insert(k.coins, i, c)
			return "", err
		}
		return txid, nil
	}
	return "", fmt.Errorf("regtest: the key has no coin of %d satoshis or more", sats+fee)
}

// Replace replaces the unconfirmed Send txid with the same payment
// paying fee instead (less change), and returns the replacement's ID.
// btcd takes it when fee is above the old fee by at least its minimum
// relay fee for the new transaction's size, and the fee rate is higher.
func (k *Key) Replace(txid string, fee int64) (string, error) {
	return k.rebroadcast(txid, func(s spend) spend {
		s.fee = fee
		return s
	})
}

// Cancel replaces the unconfirmed Send txid with a transaction that pays
// its coin back to the key, less fee, as a wallet cancels a payment: the
// payee is paid nothing, so to a follower of the payee's address the
// payment was dropped (or, if a block had confirmed it and then left the
// chain, reorged out for good). It returns the cancelling transaction's
// ID; the same bounds on fee apply as for Replace. The coin it pays
// back is not among those the key spends later.
func (k *Key) Cancel(txid string, fee int64) (string, error) {
	return k.rebroadcast(txid, func(s spend) spend {
		s.to, s.sats, s.fee = k.script, s.value-fee, fee
		return s
	})
}

// rebroadcast spends the coin of the unconfirmed Send txid again, as
// change says, and forgets txid's change (it went with txid).
func (k *Key) rebroadcast(txid string, change func(spend) spend) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.spends[txid]
	if !ok {
		return "", fmt.Errorf("regtest: %s is no Send of this key", txid)
	}
	oldHash, err := chainhash.NewHashFromStr(txid)
	if err != nil {
		return "", err
	}
	newID, err := k.broadcast(change(s))
	if err != nil {
		return "", err
	}
	k.coins = slices.DeleteFunc(k.coins, func(c coin) bool { return c.outpoint == wire.OutPoint{Hash: *oldHash, Index: 1} })
	delete(k.spends, txid)
	return newID, nil
}

// broadcast builds, signs and sends s, and records its change and the
// spend. k.mu is held.
func (k *Key) broadcast(s spend) (string, error) {
	tx := wire.NewMsgTx(wire.TxVersion)
	in := wire.NewTxIn(&s.outpoint, nil, nil)
	in.Sequence = replaceableSequence
	tx.AddTxIn(in)
	tx.AddTxOut(&wire.TxOut{Value: s.sats, PkScript: s.to})
	change := s.value - s.sats - s.fee
	if change < 0 {
		return "", fmt.Errorf("regtest: a coin of %d satoshis cannot pay %d and a fee of %d", s.value, s.sats, s.fee)
	}
	if change >= dustSats {
		tx.AddTxOut(&wire.TxOut{Value: change, PkScript: k.script})
	}
	if err := k.sign(tx, s.value); err != nil {
		return "", err
	}
	hash, err := k.node.h.Client.SendRawTransaction(tx, true)
	if err != nil {
		return "", fmt.Errorf("regtest: broadcasting a spend of %s: %w", k.Address, err)
	}
	if change >= dustSats {
		k.coins = append(k.coins, coin{wire.OutPoint{Hash: *hash, Index: 1}, change})
	}
	k.spends[hash.String()] = s
	return hash.String(), nil
}

// sign signs tx's one input, which spends a coin of value to the key.
func (k *Key) sign(tx *wire.MsgTx, value int64) error {
	switch k.kind {
	case P2PKH:
		sig, err := txscript.SignatureScript(tx, 0, k.script, txscript.SigHashAll, k.key, true)
		if err != nil {
			return err
		}
		tx.TxIn[0].SignatureScript = sig
	default:
		hashes := txscript.NewTxSigHashes(tx, txscript.NewCannedPrevOutputFetcher(k.script, value))
		wit, err := txscript.WitnessSignature(tx, hashes, 0, value, k.script, txscript.SigHashAll, k.key, true)
		if err != nil {
			return err
		}
		tx.TxIn[0].Witness = wit
	}
	return nil
}
