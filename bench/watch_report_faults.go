package main

import (
	"fmt"
	"io"
)

// printFaults prints what the leader kills and reorgs measured and the
// audit's counts, node by node.
func printFaults(w io.Writer, r watchReport) {
	if k := r.KilledBlockLatency; k.Samples > 0 {
		fmt.Fprintf(w, "  blocks with the leader killed: %d, announced → readable p50 %s, max %s (left out of the figures above)\n",
			k.Samples, fmtMicros(k.P50), fmtMicros(k.Max))
	}
	if g := r.Reorgs; g.Count > 0 {
		fmt.Fprintf(w, "  reorgs: %d, shown in the records p50 %s, max %s after the branch's last block; never shown: %d\n",
			g.Count, fmtMicros(g.Latency.P50), fmtMicros(g.Latency.Max), g.Unseen)
	}
	a := r.Audit
	if a == nil {
		fmt.Fprintln(w, "  audit: not run (interrupted)")
		return
	}
	fmt.Fprintf(w, "  audit after %.1f s, %d pass(es), applied index per node %v:\n", a.SettledS, a.Passes, a.AppliedIndex)
	for _, n := range a.Nodes {
		fmt.Fprintf(w, "    %s: %d payments (%d confirmed, %d on no chain): missed %d, double-counted %d, phantom %d, wrong state %d\n",
			n.Node, n.Payments, n.Confirmed, n.NotOnChain, n.Missed, n.Doubled, n.Phantom, n.WrongState)
		for _, p := range n.Problems {
			fmt.Fprintln(w, "      "+p)
		}
	}
}
