package btcdsource

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// The cache forgets the least recently used indexes once they hold too
// many transaction IDs together, never the one just grown, and does not
// count an index it already forgot.
func TestIndexCacheForgetsTheLeastRecentlyUsed(t *testing.T) {
	c := newIndexCache(10, 3)
	a, b, d := c.entry("a"), c.entry("b"), c.entry("d")
	c.resized(a, 4)
	c.resized(b, 4)
	c.entry("a") // a is now the most recently used
	c.resized(d, 4)
	if held := slices.Collect(func(yield func(string) bool) {
		for el := c.order.Front(); el != nil; el = el.Next() {
			yield(el.Value.(*addressIndex).addr)
		}
	}); !slices.Equal(held, []string{"a", "d"}) || c.txids != 8 {
		t.Fatalf("held %v with %d txids, want [a d] with 8", held, c.txids)
	}
	c.resized(b, 9) // b was forgotten: it counts no more
	if c.txids != 8 || c.entry("b") == b {
		t.Fatalf("a forgotten index was counted (%d) or kept", c.txids)
	}
	c.resized(d, 30) // over the bound alone: kept while in use
	if _, held := c.byAddr["d"]; !held {
		t.Fatal("the index that grew past the bound was forgotten")
	}
	for _, addr := range []string{"e", "f", "g", "h"} {
		c.entry(addr)
	}
	if c.order.Len() != 3 {
		t.Fatalf("%d addresses held, at most 3", c.order.Len())
	}
}

// Mempool transactions are listed as Esplora lists them, newest first,
// as far as btcd tells: a transaction before the one it spends from,
// others by txid, the same whatever order btcd gave them in.
func TestMempoolIsListedChildrenFirst(t *testing.T) {
	id := func(c string) string { return strings.Repeat(c, 64) }
	spending := func(txid string, from ...string) chain.Tx {
		tx := chain.Tx{TxID: txid}
		for _, f := range from {
			tx.Inputs = append(tx.Inputs, chain.TxIO{Spends: chain.Outpoint(f, 0)})
		}
		return tx
	}
	pool := []chain.Tx{
		spending(id("1"), id("9")),          // spends a confirmed one
		spending(id("2"), id("3")),          // spends 3
		spending(id("3"), id("1")),          // spends 1
		spending(id("0"), id("8"), id("9")), // unrelated
	}
	want := []string{id("2"), id("3"), id("0"), id("1")}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		txs := make([]chain.Tx, len(order))
		for i, j := range order {
			txs[i] = pool[j]
		}
		sortNewestFirst(txs, pool)
		if got := []string{txs[0].TxID, txs[1].TxID, txs[2].TxID, txs[3].TxID}; !slices.Equal(got, want) {
			t.Errorf("from order %v: %v", order, got)
		}
	}
}

// btcd's BTC amounts turn back into the satoshis they were written from.
func TestSatoshisFromBTC(t *testing.T) {
	// 29 and 393 satoshis are among the amounts float64(sats)/1e8*1e8
	// falls just short of: they come back only when rounded.
	for _, sats := range []int64{0, 1, 29, 393, 546, 12_345, 99_999_999, 100_000_000, 2_099_999_997_690_000, satoshisMax} {
		if got, ok := satoshis(float64(sats) / 1e8); !ok || got != sats {
			t.Errorf("%d satoshis came back as %d (%v)", sats, got, ok)
		}
	}
	for _, btc := range []float64{-0.00000001, 21_000_000.00000001, 1e300} {
		if got, ok := satoshis(btc); ok {
			t.Errorf("%v BTC taken as %d satoshis", btc, got)
		}
	}
}

// An output naming one address is that address's; one naming several
// (bare multisig) or none (OP_RETURN) is nobody's, as Esplora has it.
func TestAnOutputNamesItsOneAddressOnly(t *testing.T) {
	params := chain.Regtest.Params()
	key := func(b byte) *btcutil.AddressPubKey {
		priv, _ := btcec.PrivKeyFromBytes(bytes.Repeat([]byte{b}, 32))
		k, err := btcutil.NewAddressPubKey(priv.PubKey().SerializeCompressed(), params)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	one := key(1)
	payOne, _ := txscript.PayToAddrScript(one.AddressPubKeyHash())
	multisig, _ := txscript.MultiSigScript([]*btcutil.AddressPubKey{one, key(2)}, 1)
	opReturn, _ := txscript.NullDataScript([]byte("hi"))
	s := &Source{params: params}
	var got []string
	for _, script := range [][]byte{payOne, multisig, opReturn} {
		io, err := s.txIO("test", wire.NewTxOut(1, script))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, io.Address)
	}
	if want := []string{one.AddressPubKeyHash().EncodeAddress(), "", ""}; !slices.Equal(got, want) {
		t.Errorf("outputs named %q, want %q", got, want)
	}
}
