package system_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Stale reads. A default read is a leader read under a lease
// (cluster/DESIGN.md "Reads"): a leader that a partition has deposed may
// answer one from its own, older, state until its lease runs out. A
// linearizable read first confirms with a quorum that its node still
// leads, so it may never be stale.
//
// A read is stale when it returned an older revision of its register than
// one the clients had already seen (an acknowledged write, or any read)
// before the read was sent. Each revision is one applied write, so that
// is the plain definition, needing no search. The fault test checks the
// history with the stale default reads left out, fails on a stale default
// read sent while no partition was in effect or around a leadership
// transfer (the old leader stops serving before it hands over), and
// reports the others: how many, how far behind, and during which faults.

// ftStaleRead is a read that returned a revision below one already seen.
type ftStaleRead struct {
	index  int   // in the history
	seen   int64 // the highest revision seen before the read was sent
	behind int64 // since when a newer revision than the read's had been seen (ns, recorder time)
}

// ftFindStaleReads returns the stale reads of ops (returns as recorded:
// an unknown outcome's return is never moved here, and unknown writes
// show nothing).
func ftFindStaleReads(ops []porcupine.Operation) []ftStaleRead {
	type seen struct {
		at  int64 // return time
		rev int64
	}
	byReg := map[int][]seen{}
	var reads []int
	for i, op := range ops {
		in, out := op.Input.(ftInput), op.Output.(ftOutput)
		switch {
		case !in.write:
			reads = append(reads, i)
			byReg[in.reg] = append(byReg[in.reg], seen{op.Return, out.rev})
		case out.outcome == ftOK:
			byReg[in.reg] = append(byReg[in.reg], seen{op.Return, out.rev})
		}
	}
	// For each register: the revisions seen in return order, each with
	// the highest seen so far.
	for _, ss := range byReg {
		sort.Slice(ss, func(i, j int) bool { return ss[i].at < ss[j].at })
		for i := 1; i < len(ss); i++ {
			ss[i].rev = max(ss[i].rev, ss[i-1].rev)
		}
	}
	var stale []ftStaleRead
	for _, i := range reads {
		op := ops[i]
		ss := byReg[op.Input.(ftInput).reg]
		rev := op.Output.(ftOutput).rev
		// The operations that returned before this read was sent.
		before := sort.Search(len(ss), func(k int) bool { return ss[k].at >= op.Call })
		if before == 0 || ss[before-1].rev <= rev {
			continue
		}
		newer := sort.Search(before, func(k int) bool { return ss[k].rev > rev })
		stale = append(stale, ftStaleRead{index: i, seen: ss[before-1].rev, behind: ss[newer].at})
	}
	return stale
}

// ftWithout returns ops without the operations at the indexes of drop.
func ftWithout(ops []porcupine.Operation, drop []ftStaleRead) []porcupine.Operation {
	gone := map[int]bool{}
	for _, s := range drop {
		gone[s.index] = true
	}
	var kept []porcupine.Operation
	for i, op := range ops {
		if !gone[i] {
			kept = append(kept, op)
		}
	}
	return kept
}

// ftCheckStaleReads fails the test for every stale linearizable read, and
// for every stale default read sent when no fault was in effect (nor had
// healed less than ftStaleSlack before), or around a leadership transfer:
// a deposed leader can believe it leads only while a partition hides the
// new leader from it, and one that hands leadership over stops serving
// first. It returns
// the stale default reads, which the linearizability check leaves out and
// the log reports.
func ftCheckStaleReads(t *testing.T, ops []porcupine.Operation, faults *ftFaults) []ftStaleRead {
	t.Helper()
	var defaults []ftStaleRead
	for _, s := range ftFindStaleReads(ops) {
		op := ops[s.index]
		in := op.Input.(ftInput)
		during := faults.during(op.Call, ftStaleSlack)
		switch {
		case in.linearizable:
			t.Errorf("a stale linearizable read: %s", ftDescribeStaleRead(op, s, during))
		case during == ftNoFault:
			t.Errorf("a stale default read outside any partition: %s", ftDescribeStaleRead(op, s, during))
			defaults = append(defaults, s)
		case strings.Contains(faults.kindsDuring(op.Call, ftStaleSlack), "leadership transfer"):
			// A transfer elects its target inside the old leader's lease,
			// so the old leader must stop serving before it hands over
			// (cluster.Node.TransferLeadership).
			t.Errorf("a stale default read around a leadership transfer: %s", ftDescribeStaleRead(op, s, during))
			defaults = append(defaults, s)
		default:
			defaults = append(defaults, s)
		}
	}
	return defaults
}

// ftStaleSlack is how long after a partition heals a deposed leader may
// still answer before it hears of the new term: its next heartbeat's
// answer, 50 to 100 ms later, tells it; a second is ample.
const ftStaleSlack = time.Second

func ftDescribeStaleRead(op porcupine.Operation, s ftStaleRead, during string) string {
	in, out := op.Input.(ftInput), op.Output.(ftOutput)
	return fmt.Sprintf("client %d read register %d via %s at t=%.3fs..%.3fs: %q@%d, though revision %d had been seen (a newer one than the read's since t=%.3fs); faults: %s",
		op.ClientId, in.reg, out.node, time.Duration(op.Call).Seconds(), time.Duration(op.Return).Seconds(), out.value, out.rev, s.seen,
		time.Duration(s.behind).Seconds(), during)
}

// ftDescribeStaleReads sums up the stale default reads for the log: how
// many, through which nodes, the furthest behind, and a few examples with
// the faults in effect (or healed less than a second before).
func ftDescribeStaleReads(ops []porcupine.Operation, stale []ftStaleRead, faults *ftFaults) []string {
	if len(stale) == 0 {
		return nil
	}
	byNode, byKind := map[string]int{}, map[string]int{}
	var worst ftStaleRead
	var worstBehind time.Duration
	for _, s := range stale {
		op := ops[s.index]
		byNode[op.Output.(ftOutput).node]++
		byKind[faults.kindsDuring(op.Call, ftStaleSlack)]++
		if b := time.Duration(op.Call - s.behind); b > worstBehind {
			worst, worstBehind = s, b
		}
	}
	var nodes, kinds []string
	for n, c := range byNode {
		nodes = append(nodes, fmt.Sprintf("%d via %s", c, n))
	}
	for k, c := range byKind {
		kinds = append(kinds, fmt.Sprintf("%d during %s", c, k))
	}
	slices.Sort(nodes)
	slices.Sort(kinds)
	lines := []string{
		fmt.Sprintf("%s; the furthest behind was sent %s after a newer revision had been seen", strings.Join(nodes, ", "), worstBehind.Round(time.Millisecond)),
		"by fault: " + strings.Join(kinds, ", "),
	}
	examples := []ftStaleRead{worst}
	for _, s := range stale[:min(len(stale), 3)] {
		if s.index != worst.index {
			examples = append(examples, s)
		}
	}
	for _, s := range examples {
		op := ops[s.index]
		lines = append(lines, "e.g. "+ftDescribeStaleRead(op, s, faults.during(op.Call, ftStaleSlack)))
	}
	return lines
}

// TestFaultStaleReads checks the stale-read finder on small histories.
func TestFaultStaleReads(t *testing.T) {
	t.Parallel()
	put := func(call, ret int64, expected int64, value string, out ftOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: 0, Input: ftInput{write: true, expected: expected, value: value}, Call: call, Output: out, Return: ret}
	}
	read := func(call, ret int64, value string, rev int64, linearizable bool) porcupine.Operation {
		return porcupine.Operation{ClientId: 1, Input: ftInput{linearizable: linearizable}, Call: call, Output: ftOutput{value: value, rev: rev}, Return: ret}
	}
	ok := func(rev int64) ftOutput { return ftOutput{outcome: ftOK, rev: rev} }
	unknown := ftOutput{outcome: ftUnknown}
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		stale   []int // indexes
	}{
		{"a read after an acknowledged write sees it", []porcupine.Operation{put(0, 1, 0, "a", ok(1)), read(2, 3, "a", 1, false)}, nil},
		{"a read behind an acknowledged write", []porcupine.Operation{put(0, 1, 0, "a", ok(1)), put(2, 3, 1, "b", ok(2)), read(4, 5, "a", 1, false)}, []int{2}},
		{"a read behind another read", []porcupine.Operation{put(0, 100, 0, "a", unknown), read(2, 3, "a", 1, true), read(4, 5, "", 0, false)}, []int{2}},
		{"a read concurrent with the write may miss it", []porcupine.Operation{put(0, 1, 0, "a", ok(1)), put(2, 5, 1, "b", ok(2)), read(3, 4, "a", 1, true)}, nil},
		{"a read concurrent with the read that saw it may miss it", []porcupine.Operation{put(0, 100, 0, "a", unknown), read(2, 5, "a", 1, false), read(3, 4, "", 0, false)}, nil},
		{"a linearizable read behind is found too", []porcupine.Operation{put(0, 1, 0, "a", ok(1)), read(2, 3, "", 0, true)}, []int{1}},
	} {
		var got []int
		for _, s := range ftFindStaleReads(tc.history) {
			got = append(got, s.index)
		}
		if !slices.Equal(got, tc.stale) {
			t.Errorf("%s: stale reads at %v, want %v", tc.name, got, tc.stale)
		}
	}
}
