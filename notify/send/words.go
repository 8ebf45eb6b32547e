package send

import (
	"fmt"
	"strings"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// The words of a notification meant for a person (ntfy, email); a
// webhook's receiver gets the JSON instead.

// satPerBTC is the number of satoshis in a bitcoin.
const satPerBTC = 100_000_000

// amountBTC is sat in BTC with 8 decimals, a sign for a change (+ for
// money in, − for money out, none for zero) and the unit.
func amountBTC(sat int64) string {
	sign := "+"
	// The magnitude as uint64 holds even math.MinInt64's.
	magnitude := uint64(sat)
	switch {
	case sat < 0:
		sign, magnitude = "-", -uint64(sat)
	case sat == 0:
		sign = ""
	}
	return fmt.Sprintf("%s%d.%08d BTC", sign, magnitude/satPerBTC, magnitude%satPerBTC)
}

// kindWords is how a kind is said: a short verb for a title, and a
// phrase for the sentence of a message.
type kindWords struct {
	verb   string
	phrase func(actors.ChainEvent) string
	// tag is ntfy's emoji short code for the kind.
	tag string
	// urgent kinds undo what an earlier notification told: the owner
	// should hear of them even when busy.
	urgent bool
}

var wordsOf = map[actors.ChainEventKind]kindWords{
	actors.ChainTxSeen: {verb: "seen", tag: "eyes",
		phrase: func(actors.ChainEvent) string { return "seen in the mempool" }},
	actors.ChainTxConfirmed: {verb: "confirmed", tag: "white_check_mark",
		phrase: func(e actors.ChainEvent) string { return fmt.Sprintf("confirmed in block %d", e.Height) }},
	actors.ChainTxDeep: {verb: "deep", tag: "lock",
		phrase: func(e actors.ChainEvent) string {
			return fmt.Sprintf("%d confirmations deep (block %d)", e.Confirmations, e.Height)
		}},
	actors.ChainTxReplaced: {verb: "replaced", tag: "warning", urgent: true,
		phrase: func(e actors.ChainEvent) string { return "replaced in the mempool by " + e.ReplacedBy }},
	actors.ChainTxDropped: {verb: "dropped", tag: "wastebasket",
		phrase: func(actors.ChainEvent) string { return "dropped from the mempool unconfirmed" }},
	actors.ChainTxReorged: {verb: "reorged out", tag: "rotating_light", urgent: true,
		phrase: func(e actors.ChainEvent) string {
			return fmt.Sprintf("no longer confirmed: block %d left the best chain", e.Height)
		}},
}

// wordsFor is kind's words; a kind this version does not know (a newer
// node's) is said by its name rather than not at all.
func wordsFor(kind actors.ChainEventKind) kindWords {
	if w, ok := wordsOf[kind]; ok {
		return w
	}
	name := oneLine(string(kind), 32)
	return kindWords{verb: name, tag: "bell", phrase: func(actors.ChainEvent) string { return name }}
}

// cardLabel is how the card is named to a person: its name as one line,
// or its address when the name is empty (or nothing but controls).
func cardLabel(d Delivery) string {
	if name := oneLine(d.CardName, cardNameRunesMax); name != "" {
		return name
	}
	return oneLine(d.Event.Address, cardNameRunesMax)
}

// title is the one line that says what happened, e.g.
// "addrwatch: +0.00100000 BTC seen on Savings". Not yet header-safe:
// headerValue makes it so.
func title(d Delivery) string {
	prefix := "addrwatch: "
	if d.Test {
		prefix = "addrwatch test: "
	}
	return prefix + amountBTC(d.Event.AmountSat) + " " + wordsFor(d.Event.Kind).verb + " on " + cardLabel(d)
}

// messageLines are the facts of the event, one a line, for a message's
// body: what happened first, then the identifiers a person may look up.
func messageLines(d Delivery) []string {
	e := d.Event
	var lines []string
	if d.Test {
		lines = append(lines, "This is a test from addrwatch: no money moved, and the transaction below does not exist.")
	}
	lines = append(lines,
		fmt.Sprintf("%s %s on %s", amountBTC(e.AmountSat), wordsFor(e.Kind).phrase(e), cardLabel(d)),
		"txid "+oneLine(e.TxID, 100),
		"address "+oneLine(e.Address, 100),
	)
	if e.BlockHash != "" {
		lines = append(lines, fmt.Sprintf("block %d %s", e.Height, oneLine(e.BlockHash, 100)))
	}
	return lines
}

// eventTime is the event's time as a webhook and an email give it.
func eventTime(e actors.ChainEvent) time.Time { return time.Unix(0, e.At).UTC() }

// joinLines ends every line with sep.
func joinLines(lines []string, sep string) string {
	return strings.Join(lines, sep) + sep
}
