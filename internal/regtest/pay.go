package regtest

import (
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// walletFeeRate is what the harness's wallet pays, in satoshis a byte:
// ten times btcd's minimum relay fee, so that the next block takes every
// payment.
const walletFeeRate = 10

// Pay sends sats from the harness's wallet to addr and returns the
// transaction's ID. The payment waits in the mempool for the next Mine.
func (n *Node) Pay(addr string, sats int64) (string, error) {
	return n.PayAll(Payment{Address: addr, Sats: sats})
}

// Payment is one output of PayAll: Sats to Address.
type Payment struct {
	Address string
	Sats    int64
}

// PayAll makes every payment in one transaction from the harness's
// wallet, as an exchange pays a batch of withdrawals, and returns its
// ID: one transaction, so one mempool sighting and one block bring the
// news of every address at once. It waits in the mempool for the next
// Mine.
func (n *Node) PayAll(payments ...Payment) (string, error) {
	outputs := make([]*wire.TxOut, 0, len(payments))
	for _, p := range payments {
		script, err := n.script(p.Address)
		if err != nil {
			return "", err
		}
		outputs = append(outputs, &wire.TxOut{Value: p.Sats, PkScript: script})
	}
	tx, err := n.send(outputs...)
	if err != nil {
		return "", err
	}
	return tx.TxHash().String(), nil
}

// send has the harness's wallet pay outputs (with change to itself) and
// broadcasts the transaction.
func (n *Node) send(outputs ...*wire.TxOut) (*wire.MsgTx, error) {
	tx, err := n.h.CreateTransaction(outputs, walletFeeRate, true)
	if err != nil {
		return nil, fmt.Errorf("regtest: the harness's wallet cannot pay: %w", err)
	}
	if _, err := n.h.Client.SendRawTransaction(tx, true); err != nil {
		n.h.UnlockOutputs(tx.TxIn)
		return nil, fmt.Errorf("regtest: broadcasting a payment: %w", err)
	}
	return tx, nil
}

func (n *Node) script(addr string) ([]byte, error) {
	a, err := btcutil.DecodeAddress(addr, n.Params())
	if err != nil {
		return nil, fmt.Errorf("regtest: %q is no regtest address: %w", addr, err)
	}
	return txscript.PayToAddrScript(a)
}
