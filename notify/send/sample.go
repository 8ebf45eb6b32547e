package send

import (
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// The sample's transaction and address: plainly not real ones (a txid of
// a repeated pattern, the address of BIP 173's test vector), so that no
// one mistakes a test for money.
const (
	sampleTxID    = "addc0ffeeaddc0ffeeaddc0ffeeaddc0ffeeaddc0ffeeaddc0ffeeaddc0ffee0"
	sampleAddress = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
	sampleCardID  = "card_test"
	sampleSat     = 100_000
)

// SampleEvent is the event a "send a test" delivery carries (with Test
// set): a tx_seen of 0.001 BTC to a made-up transaction at at. Its ID
// changes with at's second, so a receiver that drops an ID it has seen
// still shows each press of the button, and a redelivery of one press
// (the same at) has the same ID and the same body.
func SampleEvent(at time.Time) actors.ChainEvent {
	return actors.ChainEvent{
		At:         at.UnixNano(),
		Kind:       actors.ChainTxSeen,
		CardID:     sampleCardID,
		Address:    sampleAddress,
		TxID:       sampleTxID,
		Occurrence: uint32(at.Unix()),
		AmountSat:  sampleSat,
	}
}
