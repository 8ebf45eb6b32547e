package main

import (
	"fmt"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// The audit at the end of bench watch: for every payment bench made to
// a watched address, what btcd says became of it against what the
// account's record (GET /owner/v1/watched) shows, on every node. This
// file is the comparison, a pure function of the two; watch_settle.go
// reads them.

// paidTx is one payment bench made to a watched address and what bench
// saw the record show of it on the way.
type paidTx struct {
	payment
	sats int64
	// sawConfirmed: the record showed it confirmed in some block (which
	// may have left the chain since); sawMempool: in the mempool.
	sawConfirmed, sawMempool bool
}

// paidTruth is a payment and where btcd has it at the end.
type paidTruth struct {
	*paidTx
	chain regtest.TxStatus
}

// recordTx is one transaction of an address's record as listed.
type recordTx struct {
	TxID        string `json:"txid"`
	State       string `json:"state"`
	BlockHash   string `json:"block_hash"`
	ReceivedSat int64  `json:"received_sat"`
}

type recordTotals struct {
	FundedSat int64 `json:"funded_sat"`
	TxCount   int64 `json:"tx_count"`
}

// recordAddress is one address of GET /owner/v1/watched, with its
// transactions as listed (a transaction listed twice stays twice).
type recordAddress struct {
	Address      string       `json:"address"`
	Observed     bool         `json:"observed"`
	Confirmed    recordTotals `json:"confirmed"`
	Mempool      recordTotals `json:"mempool"`
	Transactions []recordTx   `json:"transactions"`
}

// auditCounts is what the audit found on one node. Every count but
// Payments, Confirmed and NotOnChain is a fault.
type auditCounts struct {
	Payments   int `json:"payments"`     // payments to watched addresses audited
	Confirmed  int `json:"confirmed"`    // of them, those btcd has in a block of its best chain
	NotOnChain int `json:"not_on_chain"` // those btcd has neither in a block nor in its mempool
	// Missed: a payment btcd has (confirmed, or in its mempool) that the
	// record lacks or shows in another state or block.
	Missed int `json:"missed"`
	// Doubled: a transaction listed twice, or an address whose totals
	// are not the sum of its recorded transactions (or of what btcd
	// confirmed to it).
	Doubled int `json:"double_counted"`
	// Phantom: a payment btcd has neither confirmed nor in its mempool
	// that the record still counts as confirmed or in the mempool.
	Phantom int `json:"phantom"`
	// WrongState: a payment gone from the chain whose record says
	// anything but reorged though it had been confirmed, or, having
	// been seen in the mempool only, is not listed as dropped or
	// replaced.
	WrongState int      `json:"wrong_state"`
	Problems   []string `json:"problems,omitempty"` // the first auditProblemsMax, said
}

// auditProblemsMax bounds the problems an audit spells out.
const auditProblemsMax = 20

// faults is how many things the audit found wrong.
func (c auditCounts) faults() int { return c.Missed + c.Doubled + c.Phantom + c.WrongState }

func (c *auditCounts) problem(format string, args ...any) {
	if len(c.Problems) < auditProblemsMax {
		c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
	}
}

// auditAddress compares one address's record with the payments bench
// made to it, adding what it finds to c. Bench's watched addresses only
// ever receive, and only from bench, so their totals must be exactly
// the payments: the confirmed ones those btcd confirmed, the mempool's
// those in its mempool.
func auditAddress(rec recordAddress, pays []paidTruth, c *auditCounts) {
	if !rec.Observed {
		for _, p := range pays {
			c.Payments++
			switch {
			case p.chain.Block != "":
				c.Confirmed++
			case !p.chain.Mempool:
				c.NotOnChain++
				continue
			}
			c.Missed++
			c.problem("%s: never observed, and btcd has %s", rec.Address, p.txid)
		}
		return
	}
	listed := map[string][]recordTx{}
	var confirmedSum, confirmedCount int64
	for _, t := range rec.Transactions {
		listed[t.TxID] = append(listed[t.TxID], t)
		if t.State == "confirmed" {
			confirmedSum += t.ReceivedSat
			confirmedCount++
		}
	}
	for txid, ts := range listed {
		if len(ts) > 1 {
			c.Doubled++
			c.problem("%s: %s listed %d times", rec.Address, txid, len(ts))
		}
	}
	var chainSum, chainCount, poolSum, poolCount, recordPoolSum int64
	for _, p := range pays {
		c.Payments++
		var t *recordTx
		if ts := listed[p.txid]; len(ts) > 0 {
			t = &ts[0]
		}
		switch {
		case p.chain.Block != "":
			c.Confirmed++
			chainSum, chainCount = chainSum+p.sats, chainCount+1
			if t == nil || t.State != "confirmed" || t.BlockHash != p.chain.Block {
				c.Missed++
				c.problem("%s: %s confirmed in %s, recorded as %s", rec.Address, p.txid, p.chain.Block, describe(t))
			}
		case p.chain.Mempool:
			poolSum, poolCount = poolSum+p.sats, poolCount+1
			if t != nil && t.State == "reorged" {
				recordPoolSum += t.ReceivedSat // back in the mempool from a block that left the chain
			}
			if t == nil || (t.State != "mempool" && t.State != "reorged") {
				c.Missed++
				c.problem("%s: %s in the mempool, recorded as %s", rec.Address, p.txid, describe(t))
			}
		default:
			c.NotOnChain++
			switch {
			case t == nil && (p.sawConfirmed || p.sawMempool):
				c.WrongState++
				c.problem("%s: %s gone, and gone from the record that had it", rec.Address, p.txid)
			case t == nil:
			case t.State == "confirmed" || t.State == "mempool":
				c.Phantom++
				c.problem("%s: %s on no chain and in no mempool, recorded as %s", rec.Address, p.txid, describe(t))
			case p.sawConfirmed && t.State != "reorged":
				c.WrongState++
				c.problem("%s: %s was confirmed and left the chain, recorded as %s, not reorged", rec.Address, p.txid, describe(t))
			}
		}
	}
	for _, t := range rec.Transactions {
		if t.State == "mempool" {
			recordPoolSum += t.ReceivedSat
		}
	}
	if rec.Confirmed.FundedSat != confirmedSum || rec.Confirmed.TxCount != confirmedCount ||
		confirmedSum != chainSum || confirmedCount != chainCount {
		c.Doubled++
		c.problem("%s: confirmed totals %d sat in %d transactions; the record lists %d sat in %d, btcd confirmed %d sat in %d",
			rec.Address, rec.Confirmed.FundedSat, rec.Confirmed.TxCount, confirmedSum, confirmedCount, chainSum, chainCount)
	}
	if rec.Mempool.FundedSat != recordPoolSum || recordPoolSum != poolSum || rec.Mempool.TxCount != poolCount {
		c.Doubled++
		c.problem("%s: mempool totals %d sat in %d transactions; the record lists %d sat, btcd's mempool has %d sat in %d",
			rec.Address, rec.Mempool.FundedSat, rec.Mempool.TxCount, recordPoolSum, poolSum, poolCount)
	}
}

func describe(t *recordTx) string {
	switch {
	case t == nil:
		return "nothing"
	case t.BlockHash != "":
		return t.State + " in " + t.BlockHash
	default:
		return t.State
	}
}
