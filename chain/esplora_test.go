package chain

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTxNetAmountAndAddresses(t *testing.T) {
	const a, b, c = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	tx := Tx{
		Inputs:  []TxIO{{Address: a, Value: 5000}, {Address: b, Value: 1000}, {Address: a, Value: 2000}},
		Outputs: []TxIO{{Address: c, Value: 6500}, {Address: a, Value: 300}, {}},
		Fee:     200,
	}
	if got := tx.NetAmount(a); got != 300-7000 {
		t.Fatalf("NetAmount(a) = %d", got)
	}
	if got := tx.NetAmount(c); got != 6500 {
		t.Fatalf("NetAmount(c) = %d", got)
	}
	if got := tx.NetAmount("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"); got != 0 {
		t.Fatalf("NetAmount(uninvolved) = %d", got)
	}
	if got, want := tx.Addresses(), []string{a, b, c}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Addresses() = %v, want %v", got, want)
	}
	if !tx.Involves(b) || tx.Involves("x") {
		t.Fatal("Involves")
	}
	if got := (Tx{}).Addresses(); len(got) != 0 {
		t.Fatalf("empty tx addresses %v", got)
	}
}

func TestCanonicalTxID(t *testing.T) {
	lower := strings.Repeat("0123456789abcdef", 4)
	for in, want := range map[string]string{
		lower:                  lower,
		strings.ToUpper(lower): lower,
	} {
		if got, ok := CanonicalTxID(in); !ok || got != want {
			t.Fatalf("CanonicalTxID(%q) = %q, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", lower[:63], lower + "0", strings.Repeat("g", 64), " " + lower[1:], strings.Repeat("é", 32)} {
		if _, ok := CanonicalTxID(bad); ok {
			t.Fatalf("CanonicalTxID(%q) accepted", bad)
		}
	}
}

func TestEsploraTxDecoding(t *testing.T) {
	// A coinbase transaction as Esplora sends it, with extra fields the
	// client ignores and an OP_RETURN output without an address.
	body := `{
	  "txid": "` + strings.Repeat("AB", 32) + `", "version": 2, "locktime": 0, "size": 200, "weight": 800, "fee": 0,
	  "vin": [{"txid": "` + strings.Repeat("0", 64) + `", "vout": 4294967295, "prevout": null, "is_coinbase": true, "sequence": 1}],
	  "vout": [{"scriptpubkey": "00", "scriptpubkey_type": "v0_p2wpkh", "scriptpubkey_address": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "value": 312500000},
	           {"scriptpubkey": "6a", "scriptpubkey_type": "op_return", "value": 0}],
	  "status": {"confirmed": true, "block_height": 840000, "block_hash": "` + fakeHash + `", "block_time": 1713571767}
	}`
	var w esploraTx
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatal(err)
	}
	tx, err := w.toTx()
	if err != nil {
		t.Fatal(err)
	}
	want := Tx{
		TxID:        strings.Repeat("ab", 32),
		Confirmed:   true,
		BlockHeight: 840000,
		BlockHash:   fakeHash,
		BlockTime:   time.Date(2024, 4, 20, 0, 9, 27, 0, time.UTC),
		Inputs:      []TxIO{},
		Outputs:     []TxIO{{Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", Value: 312500000}, {}},
	}
	if !reflect.DeepEqual(tx, want) {
		t.Fatalf("decoded %+v\nwant    %+v", tx, want)
	}

	// An input without a prevout that is not a coinbase cannot be judged.
	w.Vin[0].IsCoinbase = false
	if _, err := w.toTx(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("missing prevout: %v", err)
	}
}

func TestEsploraStatsChecked(t *testing.T) {
	if _, err := (esploraAddress{ChainStats: esploraStats{TxCount: -1}}).toStats(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("negative count accepted: %v", err)
	}
	many := make([]esploraTx, pageTxsMax+1)
	if _, err := toTxs(many, true); !errors.Is(err, ErrMalformed) {
		t.Fatalf("oversized listing accepted: %v", err)
	}
}

// An input names the output it spends, so that two transactions spending
// one output are seen to conflict (a replacement); an input whose txid is
// not one is malformed.
func TestEsploraInputsNameTheOutputsTheySpend(t *testing.T) {
	prev := strings.Repeat("CD", 32)
	body := `{"txid": "` + strings.Repeat("ab", 32) + `", "fee": 150,
	  "vin": [{"txid": "` + prev + `", "vout": 3, "prevout": {"scriptpubkey_address": "` + fakeAddr + `", "value": 5000}}],
	  "vout": [{"scriptpubkey_address": "` + fakeAddr + `", "value": 4850}],
	  "status": {"confirmed": false}}`
	var w esploraTx
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatal(err)
	}
	tx, err := w.toTx()
	if err != nil {
		t.Fatal(err)
	}
	if len(tx.Inputs) != 1 || tx.Inputs[0].Spends != strings.ToLower(prev)+":3" || tx.Outputs[0].Spends != "" {
		t.Errorf("inputs %+v, outputs %+v", tx.Inputs, tx.Outputs)
	}
	w.Vin[0].TxID = "not a txid"
	if _, err := w.toTx(); !errors.Is(err, ErrMalformed) {
		t.Errorf("an input spending from no txid: %v", err)
	}
}
