package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// auditSettleMax bounds how long the audit waits for the records to
// agree with btcd after the last block: the follower reads what the
// last block touched within seconds, so a record still wrong after this
// is wrong, not late. It is well below the follower's full sweep (every
// 5 minutes), which would otherwise mend a lost notification unseen.
const auditSettleMax = time.Minute

// auditResult is the audit of every node.
type auditResult struct {
	Nodes        []nodeAudit `json:"nodes"`
	SettledS     float64     `json:"settled_s"`     // from the last block to the last pass
	AppliedIndex []uint64    `json:"applied_index"` // each node's, when the audit ended
	Passes       int         `json:"passes"`
}

type nodeAudit struct {
	Node string `json:"node"`
	auditCounts
}

// worst is the node audit with the most faults (the first on a tie).
func (a auditResult) worst() auditCounts {
	var w auditCounts
	for i, n := range a.Nodes {
		if i == 0 || n.faults() > w.faults() {
			w = n.auditCounts
		}
	}
	return w
}

// audit mines a last block with one more payment, so that what the
// reorgs left in the mempool confirms, waits for the follower to be at rest, and then compares what
// btcd says of every payment with every node's record, again while it
// finds faults, until auditSettleMax after that block.
func (w *watchRun) audit(ctx context.Context, stderr io.Writer) (auditResult, error) {
	var res auditResult
	// The block pays a watched address: a block that touches none is
	// not read until the next full sweep (minutes), and the follower's
	// tip, which the wait below watches, stays where it was until then.
	t := w.nextTarget()
	txid, err := w.node.Pay(t.address, paymentSats)
	if err != nil {
		return res, err
	}
	w.note(payment{account: t.account, address: t.address, txid: txid})
	hashes, err := w.node.Mine(1)
	if err != nil {
		return res, err
	}
	mined := time.Now()
	if _, err := w.waitTip(ctx, hashes[0]); err != nil {
		return res, err
	}
	truth := make([]paidTruth, len(w.paid))
	for i, p := range w.paid {
		st, err := w.node.Status(p.txid)
		if err != nil {
			return res, err
		}
		truth[i] = paidTruth{p, st}
	}
	for {
		if err := w.waitQuiet(ctx); err != nil {
			return res, err
		}
		res.Passes++
		res.Nodes = nil
		for _, s := range w.cluster.nodes {
			counts, err := w.auditNode(s.public, truth)
			if err != nil {
				return res, fmt.Errorf("auditing node %s: %w", s.id, err)
			}
			res.Nodes = append(res.Nodes, nodeAudit{s.id, counts})
		}
		res.SettledS = time.Since(mined).Seconds()
		if res.worst().faults() == 0 || time.Since(mined) > auditSettleMax {
			break
		}
		fmt.Fprintf(stderr, "watch: audit pass %d found %d faults; reading again …\n", res.Passes, res.worst().faults())
	}
	res.AppliedIndex, err = w.appliedIndexes(ctx)
	return res, err
}

// auditNode compares every account's record, as node public answers it,
// with truth.
func (w *watchRun) auditNode(public string, truth []paidTruth) (auditCounts, error) {
	var c auditCounts
	byAddress := map[string][]paidTruth{}
	for _, p := range truth {
		byAddress[p.address] = append(byAddress[p.address], p)
	}
	for _, a := range w.accounts {
		var v struct {
			Addresses []recordAddress `json:"addresses"`
		}
		if err := w.c.call("GET", public+"/owner/v1/watched", a.ownerSecret, nil, 200, &v); err != nil {
			return c, err
		}
		listed := map[string]bool{}
		for _, rec := range v.Addresses {
			listed[rec.Address] = true
			auditAddress(rec, byAddress[rec.Address], &c)
		}
		for _, address := range a.addresses {
			if !listed[address] {
				auditAddress(recordAddress{Address: address}, byAddress[address], &c)
			}
		}
	}
	return c, nil
}

// appliedIndexes waits until every node has applied as far as the
// others (or auditSettleMax passes) and returns each node's index.
func (w *watchRun) appliedIndexes(ctx context.Context) ([]uint64, error) {
	deadline := time.Now().Add(auditSettleMax)
	for {
		var out []uint64
		for _, s := range w.cluster.nodes {
			var st struct {
				AppliedIndex uint64 `json:"applied_index"`
			}
			if err := w.c.call("GET", s.admin+"/admin/v1/cluster", w.cfg.adminToken, nil, 200, &st); err != nil {
				return nil, err
			}
			out = append(out, st.AppliedIndex)
		}
		if slices.Min(out) == slices.Max(out) || time.Now().After(deadline) {
			return out, nil
		}
		if err := sleepCtx(ctx, followerReadInterval); err != nil {
			return out, err
		}
	}
}
