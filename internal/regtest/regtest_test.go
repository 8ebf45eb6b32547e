package regtest

import (
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

func TestMain(m *testing.M) { Main(m) }

// inMempool reports whether the node's mempool holds txid.
func inMempool(t *testing.T, n *Node, txid string) bool {
	t.Helper()
	pool, err := n.Client().GetRawMempool()
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(pool, func(h *chainhash.Hash) bool { return h.String() == txid })
}

// blockOf is the block holding txid, "" while it is unconfirmed.
func blockOf(t *testing.T, n *Node, txid string) string {
	t.Helper()
	h, _ := chainhash.NewHashFromStr(txid)
	tx, err := n.Client().GetRawTransactionVerbose(h)
	if err != nil {
		t.Fatalf("%s: %v", txid, err)
	}
	return tx.BlockHash
}

// A payment waits in the mempool, a block confirms it, a reorg puts it
// back in the mempool on a longer branch, and the next block confirms it
// again elsewhere.
func TestPaymentsMineAndReorg(t *testing.T) {
	n := Shared(t)
	k, err := n.NewKey(P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	txid, err := n.Pay(k.Address, 50_000)
	if err != nil {
		t.Fatal(err)
	}
	if !inMempool(t, n, txid) || blockOf(t, n, txid) != "" {
		t.Fatal("a payment not yet mined is not in the mempool alone")
	}
	mined, err := n.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := blockOf(t, n, txid); got != mined[0] || inMempool(t, n, txid) {
		t.Fatalf("after a block the payment is in %q, want %s", got, mined[0])
	}
	height, _, _ := n.Tip()
	branch, err := n.Reorg(1)
	if err != nil {
		t.Fatal(err)
	}
	newHeight, tip, _ := n.Tip()
	if len(branch) != 2 || tip != branch[1] || newHeight != height+1 {
		t.Fatalf("after Reorg(1) the tip is %d %s, want %d %v", newHeight, tip, height+1, branch)
	}
	if !inMempool(t, n, txid) {
		t.Fatal("the reorged payment is not back in the mempool")
	}
	again, err := n.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := blockOf(t, n, txid); got != again[0] {
		t.Fatalf("the payment is in %q after the next block, want %s", got, again[0])
	}
}

// PayAll pays every address its amount in one transaction.
func TestPayAllPaysEachInOneTransaction(t *testing.T) {
	n := Shared(t)
	var payments []Payment
	for i := range 3 {
		k, err := n.NewKey(P2WPKH)
		if err != nil {
			t.Fatal(err)
		}
		payments = append(payments, Payment{Address: k.Address, Sats: int64(10_000 * (i + 1))})
	}
	txid, err := n.PayAll(payments...)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := chainhash.NewHashFromStr(txid)
	tx, err := n.Client().GetRawTransactionVerbose(h)
	if err != nil {
		t.Fatal(err)
	}
	paid := map[string]int64{}
	for _, out := range tx.Vout {
		for _, addr := range out.ScriptPubKey.Addresses {
			paid[addr] += int64(out.Value*1e8 + 0.5)
		}
	}
	for _, p := range payments {
		if paid[p.Address] != p.Sats {
			t.Errorf("%s was paid %d, want %d (the transaction pays %v)", p.Address, paid[p.Address], p.Sats, paid)
		}
	}
}

// A Key's unconfirmed spend is replaced by one paying a higher fee; btcd
// refuses a replacement that pays no more.
func TestKeyReplacesItsSpend(t *testing.T) {
	n := Shared(t)
	for _, kind := range []AddressKind{P2WPKH, P2PKH} {
		from, err := n.NewKey(kind)
		if err != nil {
			t.Fatal(err)
		}
		to, _ := n.NewKey(P2WPKH)
		if _, err := from.Fund(100_000); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Mine(1); err != nil {
			t.Fatal(err)
		}
		first, err := from.Send(to.Address, 40_000, 1_000)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := from.Replace(first, 1_000); err == nil {
			t.Errorf("kind %d: btcd took a replacement paying the same fee", kind)
		}
		second, err := from.Replace(first, 5_000)
		if err != nil {
			t.Fatalf("kind %d: %v", kind, err)
		}
		if inMempool(t, n, first) || !inMempool(t, n, second) {
			t.Fatalf("kind %d: after the replacement the mempool holds the original or lacks the replacement", kind)
		}
		mined, err := n.Mine(1)
		if err != nil {
			t.Fatal(err)
		}
		if blockOf(t, n, second) != mined[0] {
			t.Fatalf("kind %d: the replacement was not mined", kind)
		}
	}
}

// A reorg's branch may leave a payment out (MineWithout: it stays in the
// mempool) and a key may cancel its reorged payment (Cancel: it is on
// no chain and in no mempool after); Status tells the three apart.
func TestABranchLeavesOutAndCancels(t *testing.T) {
	n := Shared(t)
	payee, err := n.NewKey(P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	payer, err := n.NewKey(P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := payer.Fund(100_000); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Mine(1); err != nil {
		t.Fatal(err)
	}
	left, err := n.Pay(payee.Address, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := payer.Send(payee.Address, 20_000, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	mined, err := n.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := n.Status(cancelled); err != nil || st.Block != mined[0] {
		t.Fatalf("Status of a payment just mined: %+v, %v; want in %s", st, err, mined[0])
	}
	if err := n.Invalidate(mined[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := payer.Cancel(cancelled, 5_000); err != nil {
		t.Fatal(err)
	}
	branch, err := n.MineWithout([]string{left})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.MineEmpty(1); err != nil {
		t.Fatal(err)
	}
	if st, err := n.Status(left); err != nil || !st.Mempool || st.Block != "" {
		t.Errorf("the payment left out: %+v, %v; want in the mempool", st, err)
	}
	if st, err := n.Status(cancelled); err != nil || st.Known() {
		t.Errorf("the payment cancelled: %+v, %v; want on no chain and in no mempool", st, err)
	}
	if hash, err := n.BlockHash(mustHeight(t, n) - 1); err != nil || hash != branch {
		t.Errorf("the branch's first block is %s, %v; want %s", hash, err, branch)
	}
}

func mustHeight(t *testing.T, n *Node) int64 {
	t.Helper()
	h, _, err := n.Tip()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
