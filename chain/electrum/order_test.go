package electrum

import (
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// A mempool transaction is listed before those whose outputs it spends,
// however the server ordered them; others keep the order given.
func TestSpendsFirst(t *testing.T) {
	msgs := map[string]*wire.MsgTx{}
	spending := func(parent string, lockTime uint32) string {
		tx := wire.NewMsgTx(wire.TxVersion)
		prev := chainhash.Hash{}
		if parent != "" {
			p, _ := chainhash.NewHashFromStr(parent)
			prev = *p
		}
		tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&prev, 0), nil, nil))
		tx.AddTxOut(wire.NewTxOut(1, []byte{0x51}))
		tx.LockTime = lockTime // tells the transactions apart
		id := tx.TxHash().String()
		msgs[id] = tx
		return id
	}
	a := spending("", 1)
	b := spending(a, 2)
	c := spending(b, 3)
	other := spending("", 4)
	got := spendsFirst([]string{a, other, b, c}, msgs)
	if want := []string{c, b, a, other}; !slices.Equal(got, want) {
		t.Errorf("spendsFirst = %v, want %v", got, want)
	}
	if got := spendsFirst([]string{other, a}, msgs); !slices.Equal(got, []string{other, a}) {
		t.Errorf("unrelated transactions reordered: %v", got)
	}
}
