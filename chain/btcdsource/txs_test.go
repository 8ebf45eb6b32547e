package btcdsource

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/btcsuite/btcd/btcjson"
)

// An address's transactions read from btcd's answer filtered to the
// address (each one's hex, the inputs spending from the address and the
// outputs paying it) are the very chain.Txs the whole answer gave: a
// payment among fifty outputs, coins spent from it, its change, in a
// block and in the mempool; whether the outputs the other inputs spend
// are kept or asked for.
func TestAFilteredAnswerGivesTheWholeTransactions(t *testing.T) {
	n := regtest.Shared(t)
	ctx := context.Background()
	k := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	sourcetest.Must[string](t)(k.Fund(70_000))
	payments := []regtest.Payment{{Address: k.Address, Sats: 30_000}}
	for range 49 {
		payments = append(payments, regtest.Payment{Address: newAddress(t, n), Sats: 20_000})
	}
	sourcetest.Must[string](t)(n.PayAll(payments...))
	sourcetest.Must[string](t)(k.Fund(50_000))
	sourcetest.Must[[]string](t)(n.Mine(1))
	sourcetest.Must[string](t)(k.Send(newAddress(t, n), 10_000, 2_000)) // spends from the address, change back to it
	sourcetest.Must[string](t)(n.PayAll(payments[:20]...))              // in the mempool

	src := open(t, n, Options{})
	var whole []rpcTx
	verbose, skip, count, vinExtra, reverse := 1, 0, 100, 1, false
	cmd := btcjson.NewSearchRawTransactionsCmd(k.Address, &verbose, &skip, &count, &vinExtra, &reverse, nil)
	if err := src.rpc.call(ctx, "test", cmd, &whole); err != nil {
		t.Fatal(err)
	}
	if len(whole) != 5 {
		t.Fatalf("%d transactions listed, want 5", len(whole))
	}
	want := make([]chain.Tx, len(whole))
	for i, raw := range whole {
		want[i] = wholeTx(t, raw)
	}
	for _, round := range []string{"asked", "kept"} {
		filtered := sourcetest.Must[[]rpcTx](t)(src.search(ctx, "test", k.Address, 0, count))
		got, err := src.toTxs(ctx, "test", filtered)
		if err != nil {
			t.Fatal(err)
		}
		byTxID := func(a, b chain.Tx) int { return strings.Compare(a.TxID, b.TxID) } // btcd lists the mempool in no order
		slices.SortFunc(got, byTxID)
		slices.SortFunc(want, byTxID)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("outputs %s: from the filtered answer\n%+v\nfrom the whole one\n%+v", round, got, want)
		}
	}
}

// wholeTx is what the source made of a transaction of the unfiltered
// answer before it asked for the filtered one: every input with its
// prevOut, every output, as btcd writes them.
func wholeTx(t *testing.T, raw rpcTx) chain.Tx {
	t.Helper()
	tx := chain.Tx{TxID: raw.TxID, Confirmed: raw.confirmed()}
	if tx.Confirmed {
		tx.BlockTime, tx.BlockHash = time.Unix(raw.BlockTime, 0).UTC(), raw.BlockHash
	}
	var in, out int64
	tx.Inputs = []chain.TxIO{}
	for _, vin := range raw.Vin {
		if vin.Coinbase != "" {
			continue
		}
		io := sourcetest.Must[chain.TxIO](t)(toTxIO("test", vin.PrevOut.Value, soleAddress("", vin.PrevOut.Addresses)))
		io.Spends = chain.Outpoint(vin.TxID, vin.Vout)
		in += io.Value
		tx.Inputs = append(tx.Inputs, io)
	}
	tx.Outputs = []chain.TxIO{}
	for _, vout := range raw.Vout {
		io := sourcetest.Must[chain.TxIO](t)(toTxIO("test", vout.Value, soleAddress(vout.ScriptPubKey.Address, vout.ScriptPubKey.Addresses)))
		out += io.Value
		tx.Outputs = append(tx.Outputs, io)
	}
	if len(tx.Inputs) > 0 {
		tx.Fee = in - out
	}
	return tx
}

// The outputs kept are bounded in bytes, least recently used forgotten
// first, and a transaction's are kept once.
func TestKeptOutputsAreBounded(t *testing.T) {
	outs := []chain.TxIO{{Address: "bcrt1qexample", Value: 1}}
	size := outputsEntryBytes + outputBytes + len(outs[0].Address)
	c := newOutputsCache(3 * size)
	for _, id := range []string{"a", "b", "c", "a", "d"} {
		c.keep(id, outs)
	}
	if c.bytes != 3*size || c.txs.Len() != 3 {
		t.Fatalf("%d bytes in %d entries, want %d in 3", c.bytes, c.txs.Len(), 3*size)
	}
	if _, ok := c.get("a"); ok {
		t.Error("the least recently used was kept")
	}
	for _, id := range []string{"b", "c", "d"} {
		if _, ok := c.get(id); !ok {
			t.Errorf("%s was forgotten", id)
		}
	}
	c.keep("big", make([]chain.TxIO, 10))
	if _, ok := c.get("big"); ok || c.bytes > 3*size {
		t.Error("outputs larger than the bound were kept")
	}
}
