package electrum_test

import (
	"context"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/electrum"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// A spend names the output it spends (txid:vout) with its address and
// value, in the mempool and once mined, when its block's hash, height
// and time come from the block's header; a spend of a spend waiting in
// the mempool is listed before it.
func TestTxNamesWhatItsInputsSpend(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, electrumtest.Config{})
	src := open(t, srv.Addr(), false, chain.Reach{}, electrum.Options{})
	ctx := context.Background()
	from, to := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2PKH)), sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	funding := sourcetest.Must[string](t)(from.Fund(100_000))
	spend := sourcetest.Must[string](t)(from.Send(to.Address, 30_000, 700))
	respend := sourcetest.Must[string](t)(from.Send(to.Address, 20_000, 800)) // spends spend's change

	pool := sourcetest.Must[[]chain.Tx](t)(src.MempoolTxs(ctx, from.Address))
	if len(pool) != 3 || pool[0].TxID != respend || pool[1].TxID != spend {
		t.Fatalf("the mempool lists %v, want the spend of a spend first, then the spend", ids(pool))
	}
	check := func(tx chain.Tx) {
		t.Helper()
		fundTx := sourcetest.Must[chain.Tx](t)(src.Tx(ctx, funding))
		vout := -1
		for i, o := range fundTx.Outputs {
			if o.Address == from.Address && o.Value == 100_000 {
				vout = i
			}
		}
		in := tx.Inputs
		if vout < 0 || len(in) != 1 || in[0].Spends != chain.Outpoint(funding, uint32(vout)) || in[0].Address != from.Address || in[0].Value != 100_000 {
			t.Fatalf("the spend's inputs %+v, want the funding output %s:%d", in, funding, vout)
		}
		if tx.Fee != 700 || tx.NetAmount(to.Address) != 30_000 || tx.NetAmount(from.Address) != -30_700 {
			t.Errorf("the spend: fee %d, %d to the payee, %d from the payer", tx.Fee, tx.NetAmount(to.Address), tx.NetAmount(from.Address))
		}
	}
	check(sourcetest.Must[chain.Tx](t)(src.Tx(ctx, spend)))

	mined := sourcetest.Must[[]string](t)(n.Mine(1))
	tip := sourcetest.Must[chain.BlockRef](t)(src.Tip(ctx))
	tx := sourcetest.Must[chain.Tx](t)(src.Tx(ctx, spend))
	check(tx)
	header, err := n.Client().GetBlockHeaderVerbose(mustHash(t, mined[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Confirmed || tx.BlockHash != mined[0] || tx.BlockHeight != tip.Height || tx.BlockTime.Unix() != header.Time {
		t.Errorf("the mined spend: %+v; want block %s at %d, time %d", tx, mined[0], tip.Height, header.Time)
	}
}

func ids(txs []chain.Tx) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.TxID
	}
	return out
}

func mustHash(t *testing.T, s string) *chainhash.Hash {
	t.Helper()
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
