package system_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestFaultLinearizable is the process-level fault test. Three addrwatchd
// processes talk mutual TLS to each other, each link between two nodes
// through a proxy of the test's (fault_proxy_test.go), and serve a
// concurrent read/write load while the test injects a fault every few
// seconds (fault_partition_test.go): network partitions, both ways and one
// way (held connections, reset connections, slow links; around the leader,
// a follower, or between the followers), SIGKILL of the leader or of a
// follower (restarted on its data dir), a follower cut off while the
// leader is killed, and leadership transfers, one of them into a partition
// that leaves the old leader believing it leads. When the faults stop the
// network heals, the test waits for every node to apply the same log,
// reads every register with each node in turn as the leader, and then
// checks that
//
//   - the recorded client history is linearizable (porcupine), leaving out
//     only stale default reads (below), and
//   - every acknowledged write is present on all three nodes.
//
// It runs for ADDRWATCH_FAULT_SECONDS (default 20) of faults on the WAL,
// the log store of new data dirs (subtest wal), then for two thirds of
// that on raft-boltdb, the one older data dirs keep (subtest bolt), and on
// a cluster sharded over three raft groups (subtest sharded, ftVariant):
// enough for one round of each kind of fault, and `make test` stays short. `make
// soak` runs both longer. ADDRWATCH_FAULT_SEED replays a run's order of
// faults (the log names the seed; timing still differs).
//
// # Default reads and linearizable reads
//
// Half the load's reads ask for X-Addrwatch-Read-Consistency:
// linearizable, half take the default. They are held to different
// promises, those of cluster/DESIGN.md "Reads":
//
//   - a linearizable read must never be stale: its node confirmed with a
//     quorum that it led. A stale one fails the test, and it stays in the
//     history porcupine checks;
//   - a default read is a leader read under a 250 ms lease: a leader that
//     a partition has deposed may answer from its older state until its
//     lease runs out, if a new leader has been elected meanwhile. Only a
//     leadership transfer elects one that fast (an election otherwise
//     waits 500 ms to 1 s without heartbeats), which is why the schedule
//     has a transfer into a partition. A default read that returned an
//     older revision than the clients had already seen before it was sent
//     is a stale read (fault_reads_test.go). One sent while no partition
//     was in effect (or had healed within a second) fails the test; the
//     others are what the design allows: the test leaves them out of the
//     linearizability check and reports how many there were, how far
//     behind, through which node and during which fault. Any other anomaly
//     of a default read (a value never written, a write that never
//     committed, a revision that skips) fails the test as before.
//
// # The object under test
//
// Each client owns one register: a row of its own Sheet, on its own account
// (so clients never contend for a Sheet revision), keyed by Address plus
// Blockchain. A write is one PUT upsert of that row carrying the client's
// last known revision as expected_revision and a value unique to the
// attempt in the fifth cell; a read is one GET filtered by address and
// chain. Every client writes only its own register but reads everybody's,
// so reads by other clients run concurrently with the owner's writes.
//
// The model is a compare-and-set register whose state is (fifth cell,
// revision), one porcupine partition per register. Each HTTP request is one
// operation:
//
//   - 200 PUT: the revision matched and the answer is revision+1;
//   - 409 STALE_VERSION: the revision did not match, nothing changed;
//   - 503, a timeout or a broken connection: the outcome is unknown. The
//     operation gets a return time after everything else in the history
//     (porcupine's usual encoding of "may take effect at any later time,
//     or never"), and its step applies the write when the revision matches
//     and is a no-op when it does not. That covers both fates: a write that
//     never applied is linearized where the revision has moved on (or at
//     the very end, where nothing observes it);
//   - a refused connection (the node is down): nothing was sent, so
//     nothing is recorded;
//   - 200 GET: the answer must be the register's current value and
//     revision. A failed read is dropped: it constrains nothing.
//
// Because the revision is part of the state, an acknowledged write that was
// lost, a stale read, a write applied twice and a stale-revision write that
// applied late are all non-linearizable histories.
func TestFaultLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault test starts and kills server processes")
	}
	t.Parallel()
	duration := ftDuration(t)
	// One after the other: side by side, two clusters under load on two
	// cores would slow each other into faults of their own.
	t.Run("wal", func(t *testing.T) { testFaultLinearizable(t, ftVariant{raftLog: "wal"}, duration) })
	t.Run("bolt", func(t *testing.T) {
		testFaultLinearizable(t, ftVariant{raftLog: "bolt"}, (duration * 2 / 3).Round(time.Second))
	})
	t.Run("sharded", func(t *testing.T) {
		testFaultLinearizable(t, ftVariant{raftLog: "wal", groups: 3}, (duration * 2 / 3).Round(time.Second))
	})
}

// ftVariant is the cluster a fault test runs on.
type ftVariant struct {
	raftLog string // every node's --raft-log
	// groups, when set, shards the accounts over that many raft groups
	// (--groups). The faults then aim at group 0's leader (a transfer
	// moves group 0), the registers' slots move between groups all along
	// (ftStartMoves), and the final reads go through every node to each
	// register's group leader instead of making each node the leader in
	// turn: with every node leading some group, a node that led them all
	// would soon hand groups back. That every node holds the same copy
	// follows from equal applied indexes in every group.
	groups int
}

func (v ftVariant) String() string {
	if v.groups > 0 {
		return fmt.Sprintf("%s raft log, %d groups", v.raftLog, v.groups)
	}
	return v.raftLog + " raft log"
}

// testFaultLinearizable is the fault test on the variant's cluster, for
// duration of faults.
func testFaultLinearizable(t *testing.T, v ftVariant, duration time.Duration) {
	seed := ftSeed(t)
	args := []string{"--raft-log", v.raftLog}
	if v.groups > 0 {
		args = append(args, "--groups", strconv.Itoa(v.groups))
	}
	nodes, links := ftStartFaultCluster(t, args...)
	for _, s := range nodes {
		s.expectRaftLog(v.raftLog)
	}
	if v.groups > 0 {
		// The nodes hand leaders over in their first seconds; the setup
		// below does not retry what a transfer would refuse.
		ftAwaitBalanced(t, nodes)
	}
	regs := ftSetup(t, nodes)
	ftKeepLogsOnFailure(t, nodes)
	if v.groups > 0 {
		st, err := ftStatus(ftHTTPClient(), nodes[0])
		var spread []int
		for _, g := range st.Groups {
			spread = append(spread, g.Accounts)
		}
		t.Logf("registers' accounts per group: %v (%v)", spread, err)
	}

	rec := &ftRecorder{start: time.Now()}
	hc := ftHTTPClient()
	stopLoad := ftStartLoad(t, nodes, regs, rec, hc)
	stopMoves := func() ftMoves { return ftMoves{} }
	if v.groups > 0 {
		stopMoves = ftStartMoves(nodes, regs, v.groups, seed)
	}
	faults := ftRunFaults(t, nodes, links, rec, hc, duration, seed, v.groups > 0)
	moves := stopMoves()
	stopLoad()
	st := rec.stats()
	outage, outageAt := rec.longestWriteOutage()
	t.Logf("fault test on the %s: %s of faults (seed %d), load ran %.1fs with %d clients over %d registers, nodes over mutual TLS through a proxy per link", v, duration, faults.seed, time.Duration(rec.now()).Seconds(), ftClientCount, len(regs))
	t.Logf("  faults: %d rounds: %d partitions, %d leader kills, %d follower kills, %d leadership transfers (%d into a partition)", faults.rounds, faults.partitions, faults.leaderKills, faults.followerKills, faults.transfers, faults.intoPartition)
	for _, line := range faults.log {
		t.Logf("    %s", line)
	}
	if v.groups > 0 {
		t.Logf("  slot moves of the registers' accounts during the faults: %d asked, %d begun (202), %d refused (%s)", moves.asked, moves.begun, moves.asked-moves.begun, moves.refusals())
	}
	t.Logf("  writes: %d acknowledged, %d unknown outcome (503/timeout/broken connection), %d stale (409); %d connections refused by a dead node and sent to the next one", st.acked, st.unknown, st.stale, st.refused)
	t.Logf("  reads: %d answered (%d linearizable), %d failed and dropped", st.reads, st.linearizableReads, st.readsFailed)
	t.Logf("  longest write outage (gap between consecutive acknowledged writes, all clients): %s, ending at t=%.2fs", outage.Round(time.Millisecond), time.Duration(outageAt).Seconds())

	ftWaitConverged(t, nodes, "after the faults")
	var finals [][]ftFinal
	if v.groups > 0 {
		finals = ftReadThroughEveryNode(t, nodes, regs, rec, hc)
	} else {
		finals = ftReadOnEveryLeader(t, nodes, regs, rec, hc)
	}
	ftWaitConverged(t, nodes, "after the final reads")
	if unused := links.unused(); len(unused) > 0 {
		t.Errorf("links that never carried a connection (node traffic did not go through the proxies): %v", unused)
	}

	lost := ftCheckAcknowledged(t, regs, rec, finals)
	ftCheckStaleAnswers(t, rec)
	ops := rec.operations()
	staleDefaults := ftCheckStaleReads(t, ops, &faults)
	result, took, vis := ftCheckLinearizable(t, ftWithout(ops, staleDefaults))
	how := "with each node as the leader"
	if v.groups > 0 {
		how = "answered by its group's leader, every group's applied index equal on all nodes"
	}
	t.Logf("  lost acknowledged writes: %d (%d final reads: every register through every node, %s)", lost, rec.finalReads.Load(), how)
	t.Logf("  transfers into a partition: %d; after %d of them the old leader was seen to say it led while the new one did, for up to %s", faults.intoPartition, faults.splits, faults.splitLongest.Round(time.Millisecond))
	t.Logf("  stale default reads (a deposed leader's answer, within its lease; left out of the check below): %d", len(staleDefaults))
	for _, line := range ftDescribeStaleReads(ops, staleDefaults, &faults) {
		t.Logf("    %s", line)
	}
	t.Logf("  linearizability (porcupine, %d operations): %s in %s%s", len(ops)-len(staleDefaults), result, took.Round(time.Millisecond), vis)
}

// ftStartLoad starts the fault test's clients, one per register, and
// returns the function that stops them and waits until they are gone.
func ftStartLoad(t *testing.T, nodes []*server, regs []*ftRegister, rec *ftRecorder, hc *http.Client) (stopLoad func()) {
	stop := make(chan struct{})
	var stopOnce sync.Once
	var wg sync.WaitGroup
	stopLoad = func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	// Clients must be gone before the cluster's cleanup stops the nodes,
	// even when the test fails early; cleanups run last-registered first.
	t.Cleanup(stopLoad)
	for i := range ftClientCount {
		c := &ftClient{t: t, id: i, own: regs[i], regs: regs, nodes: nodes, next: i, hc: hc, rec: rec, stop: stop,
			rng: rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))}
		wg.Add(1)
		go func() { defer wg.Done(); c.run() }()
	}
	return stopLoad
}

// TestFaultModel checks the fault test's model on small histories, so that
// a model that accepts everything cannot pass for a correct cluster.
func TestFaultModel(t *testing.T) {
	t.Parallel()
	put := func(client int, call, ret int64, expected int64, value string, out ftOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: ftInput{write: true, expected: expected, value: value}, Call: call, Output: out, Return: ret}
	}
	get := func(client int, call, ret int64, value string, rev int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: ftInput{}, Call: call, Output: ftOutput{value: value, rev: rev}, Return: ret}
	}
	ok := func(rev int64) ftOutput { return ftOutput{outcome: ftOK, rev: rev} }
	stale, unknown := ftOutput{outcome: ftStale}, ftOutput{outcome: ftUnknown}
	const end = 1000 // an unknown outcome's return: after everything
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    bool
	}{
		{"acknowledged writes then a read", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(1)), put(0, 2, 3, 1, "b", ok(2)), get(1, 4, 5, "b", 2)}, true},
		{"a stale read", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(1)), put(0, 2, 3, 1, "b", ok(2)), get(1, 4, 5, "a", 1)}, false},
		{"a concurrent read may see either", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(1)), put(0, 2, 5, 1, "b", ok(2)), get(1, 3, 4, "a", 1)}, true},
		{"a lost acknowledged write", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(1)), get(1, 2, 3, "", 0)}, false},
		{"a revision that skips", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(2))}, false},
		{"a stale answer, nothing changed", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(1)), put(0, 2, 3, 0, "b", stale), get(1, 4, 5, "a", 1)}, true},
		{"a stale answer for a write that applied", []porcupine.Operation{put(0, 0, 1, 0, "a", ok(1)), put(0, 2, 3, 1, "b", stale), get(1, 4, 5, "b", 2)}, false},
		{"an unknown outcome that applied", []porcupine.Operation{put(0, 0, end, 0, "a", unknown), get(0, 2, 3, "a", 1), put(0, 4, 5, 1, "b", ok(2))}, true},
		{"an unknown outcome that did not", []porcupine.Operation{put(0, 0, end, 0, "a", unknown), get(0, 2, 3, "", 0), put(0, 4, 5, 0, "b", ok(1)), get(1, 6, 7, "b", 1)}, true},
		{"an unknown outcome applied late", []porcupine.Operation{put(0, 0, end, 0, "a", unknown), get(0, 2, 3, "", 0), get(1, 4, 5, "a", 1)}, true},
		{"an unknown outcome applied over a newer write", []porcupine.Operation{put(0, 0, end, 0, "a", unknown), put(0, 2, 3, 0, "b", ok(1)), get(1, 4, 5, "a", 2)}, false},
		// Partitions: a deposed leader took a write it never committed
		// (unknown), the new leader acknowledged another at the same
		// revision; a read of the first one read what never committed.
		{"a read of a write that never committed", []porcupine.Operation{put(0, 0, end, 0, "x", unknown), put(0, 2, 3, 0, "y", ok(1)), get(1, 4, 5, "x", 1)}, false},
		{"a deposed leader's write that never committed, then the new leader's", []porcupine.Operation{put(0, 0, end, 0, "x", unknown), put(0, 2, 3, 0, "y", ok(1)), get(1, 4, 5, "y", 1)}, true},
	} {
		if got := porcupine.CheckOperations(ftModel, tc.history); got != tc.want {
			t.Errorf("%s: linearizable %v, want %v", tc.name, got, tc.want)
		}
	}
}

const (
	// ftClientCount is the number of concurrent clients, one register each.
	ftClientCount = 8
	// ftSecondsDefault is the fault duration when ADDRWATCH_FAULT_SECONDS
	// is unset: short enough for `make test`.
	ftSecondsDefault = 20
	// ftRequestTimeout bounds one client request: a follower waits up to
	// 5 s for a leader and the leader bounds a request at 15 s.
	ftRequestTimeout = 25 * time.Second
	// ftConvergeTimeout bounds the wait for equal applied indexes.
	ftConvergeTimeout = 30 * time.Second
	// ftCheckTimeout bounds porcupine's search.
	ftCheckTimeout = 5 * time.Minute
	// ftChain is the Blockchain cell of every register's row.
	ftChain = "fault-test"
)

func ftDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("ADDRWATCH_FAULT_SECONDS")
	if v == "" {
		return ftSecondsDefault * time.Second
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("ADDRWATCH_FAULT_SECONDS=%q: want a positive number of seconds", v)
	}
	return time.Duration(n) * time.Second
}

// ftRegister is one client's row: its account's write key, its Sheet and
// the row's Address cell.
type ftRegister struct {
	index   int
	key     string
	spaceID string
	address string
}

func (r *ftRegister) path() string { return "/v1/bookmark-spaces/" + r.spaceID + "/sheet" }

// ftSetup creates, through different nodes, one extended-plan account per
// client with a write key and a Sheet Space granted write, and checks that
// each register starts empty at revision 0 (the model's initial state).
// A step the cluster answers with a 503 (a sharded cluster still moving
// leaders in its first seconds, a write whose outcome is unknown) starts
// that client's setup again with a new account, as an operator would
// rather than guess what applied; the faults begin only after.
func ftSetup(t *testing.T, nodes []*server) []*ftRegister {
	t.Helper()
	regs := make([]*ftRegister, ftClientCount)
	for i := range regs {
		via := nodes[i%len(nodes)]
		for attempt := 1; regs[i] == nil; attempt++ {
			reg, unsettled := ftSetupOne(t, via, i)
			if unsettled != "" {
				if attempt == 5 {
					t.Fatalf("setup of client %d through %s: still %s after %d attempts", i, via.URL, unsettled, attempt)
				}
				t.Logf("setup of client %d: %s; starting it again", i, unsettled)
				time.Sleep(time.Second)
				continue
			}
			regs[i] = reg
		}
	}
	return regs
}

// ftSetupOne is one try of ftSetup's client i: the register, or what
// the cluster answered when it answered 503.
func ftSetupOne(t *testing.T, via *server, i int) (*ftRegister, string) {
	t.Helper()
	unsettled := func(what string, r response) string {
		if r.Status == http.StatusServiceUnavailable {
			return fmt.Sprintf("%s: 503 %s", what, r.Body)
		}
		return ""
	}
	a := via.createAccount(t, "extended")
	reg := &ftRegister{index: i, key: via.createKey(t, a, "write"), address: fmt.Sprintf("fault-register-%d", i)}
	r := do(t, "GET", via.URL+"/owner/v1/bookmark-spaces", a.OwnerSecret, nil)
	if u := unsettled("the Space list", r); u != "" {
		return nil, u
	}
	expect(t, r, http.StatusOK, "")
	var list struct {
		Revision string `json:"bookmark_revision"`
	}
	if err := json.Unmarshal(r.Body, &list); err != nil || list.Revision == "" {
		t.Fatalf("Space list: %v %s", err, r.Body)
	}
	r = do(t, "POST", via.URL+"/owner/v1/bookmark-spaces", a.OwnerSecret, map[string]any{"expected_bookmark_revision": list.Revision, "name": "Fault grid", "type": "sheet"})
	if u := unsettled("creating the Sheet Space", r); u != "" {
		return nil, u
	}
	expect(t, r, http.StatusCreated, "")
	var created struct {
		Space struct {
			ID string `json:"id"`
		} `json:"space"`
	}
	if err := json.Unmarshal(r.Body, &created); err != nil || created.Space.ID == "" {
		t.Fatalf("Sheet Space: %v %s", err, r.Body)
	}
	reg.spaceID = created.Space.ID
	r = do(t, "PUT", via.URL+"/owner/v1/grants/bookmark-spaces/"+reg.spaceID, a.OwnerSecret, map[string]any{"level": "write"})
	if u := unsettled("the grant", r); u != "" {
		return nil, u
	}
	expect(t, r, http.StatusOK, "")
	r = do(t, "GET", via.URL+reg.path()+"?"+ftFilter(reg), reg.key, nil)
	if u := unsettled("the first read", r); u != "" {
		return nil, u
	}
	expect(t, r, http.StatusOK, "")
	value, rev, err := ftDecodeRead(r.Body)
	if err != nil || value != "" || rev != 0 {
		t.Fatalf("a new Sheet reads %q at revision %d (%v): %s", value, rev, err, r.Body)
	}
	return reg, ""
}

func ftFilter(reg *ftRegister) string {
	return "address=" + url.QueryEscape(reg.address) + "&chain=" + ftChain
}

// ftDecodeRead returns the register's value (the fifth cell, "" when the
// row does not exist) and the Sheet's revision from a filtered GET.
func ftDecodeRead(body []byte) (string, int64, error) {
	var v struct {
		Revision *int64 `json:"revision"`
		Rows     []struct {
			Cells []string `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", 0, err
	}
	if v.Revision == nil {
		return "", 0, errors.New("no revision")
	}
	switch {
	case len(v.Rows) == 0:
		return "", *v.Revision, nil
	case len(v.Rows) > 1 || len(v.Rows[0].Cells) != 5:
		return "", 0, fmt.Errorf("%d rows for one register", len(v.Rows))
	}
	return v.Rows[0].Cells[4], *v.Revision, nil
}

// ftHTTPClient returns the load's client. Requests that carry a body are
// sent with GetBody unset (see ftClient.send) so that net/http never
// replays a PUT on a fresh connection after the first copy may have
// reached a server: every PUT is sent at most once.
func ftHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4 * ftClientCount
	return &http.Client{Timeout: ftRequestTimeout, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// The porcupine model: a compare-and-set register per Sheet row.

type ftInput struct {
	reg          int
	write        bool
	expected     int64  // write: expected_revision
	value        string // write: the fifth cell
	linearizable bool   // read: asked for linearizable consistency
}

type ftOutcome uint8

const (
	ftOK ftOutcome = iota
	ftStale
	ftUnknown
)

type ftOutput struct {
	outcome ftOutcome
	value   string // read: the fifth cell
	rev     int64  // read: the revision; acknowledged write: the new revision
	node    string // which node the client sent it to (for the visualization)
}

type ftState struct {
	value string
	rev   int64
}

var ftModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byReg := map[int][]porcupine.Operation{}
		for _, op := range history {
			r := op.Input.(ftInput).reg
			byReg[r] = append(byReg[r], op)
		}
		var out [][]porcupine.Operation
		for r := range ftClientCount {
			if len(byReg[r]) > 0 {
				out = append(out, byReg[r])
			}
		}
		return out
	},
	Init: func() any { return ftState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(ftState), input.(ftInput), output.(ftOutput)
		if !in.write {
			return out.value == s.value && out.rev == s.rev, s
		}
		switch out.outcome {
		case ftOK:
			if s.rev != in.expected || out.rev != s.rev+1 {
				return false, s
			}
			return true, ftState{value: in.value, rev: out.rev}
		case ftStale:
			return s.rev != in.expected, s
		}
		// Unknown: a compare-and-set that applies when it can; not
		// applying at all is linearizing it after the revision moved.
		if s.rev == in.expected {
			return true, ftState{value: in.value, rev: s.rev + 1}
		}
		return true, s
	},
	Hash: func(state any) uint64 {
		s := state.(ftState)
		h := fnv.New64a()
		h.Write([]byte(s.value))
		return h.Sum64() ^ uint64(s.rev)*0x9e3779b97f4a7c15
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(ftInput), output.(ftOutput)
		if !in.write {
			kind := "read"
			if in.linearizable {
				kind = "linearizable read"
			}
			return fmt.Sprintf("r%d %s -> %q @%d (%s)", in.reg, kind, out.value, out.rev, out.node)
		}
		switch out.outcome {
		case ftOK:
			return fmt.Sprintf("r%d put(%q, exp %d) -> ok @%d (%s)", in.reg, in.value, in.expected, out.rev, out.node)
		case ftStale:
			return fmt.Sprintf("r%d put(%q, exp %d) -> stale (%s)", in.reg, in.value, in.expected, out.node)
		}
		return fmt.Sprintf("r%d put(%q, exp %d) -> unknown (%s)", in.reg, in.value, in.expected, out.node)
	},
	DescribeState: func(state any) string {
		s := state.(ftState)
		return fmt.Sprintf("%q @%d", s.value, s.rev)
	},
}

// ftRecorder collects the history and the load's counters.
type ftRecorder struct {
	start time.Time

	mu      sync.Mutex
	ops     []porcupine.Operation
	unknown []int   // indexes in ops of writes with an unknown outcome
	acks    []int64 // return times of acknowledged writes

	acked, stale, unknownN, refused, reads, linearizableReads, readsFailed, finalReads atomic.Int64
}

// now is the time since the start of the load in nanoseconds (monotonic).
func (r *ftRecorder) now() int64 { return int64(time.Since(r.start)) }

func (r *ftRecorder) add(op porcupine.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in, out := op.Input.(ftInput), op.Output.(ftOutput)
	if in.write && out.outcome == ftUnknown {
		r.unknown = append(r.unknown, len(r.ops))
	}
	if in.write && out.outcome == ftOK {
		r.acks = append(r.acks, op.Return)
	}
	r.ops = append(r.ops, op)
}

// operations returns the history, each unknown outcome's return moved
// past the end of everything else.
func (r *ftRecorder) operations() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := slices.Clone(r.ops)
	var end int64
	for _, op := range ops {
		end = max(end, op.Return)
	}
	for _, i := range r.unknown {
		ops[i].Return = end + 1
	}
	return ops
}

type ftStats struct{ acked, stale, unknown, refused, reads, linearizableReads, readsFailed int64 }

func (r *ftRecorder) stats() ftStats {
	return ftStats{acked: r.acked.Load(), stale: r.stale.Load(), unknown: r.unknownN.Load(), refused: r.refused.Load(),
		reads: r.reads.Load(), linearizableReads: r.linearizableReads.Load(), readsFailed: r.readsFailed.Load()}
}

// longestWriteOutage is the longest time between two consecutive
// acknowledged writes of any client, and when it ended.
func (r *ftRecorder) longestWriteOutage() (time.Duration, int64) {
	r.mu.Lock()
	acks := slices.Clone(r.acks)
	r.mu.Unlock()
	slices.Sort(acks)
	var longest, at int64
	for i := 1; i < len(acks); i++ {
		if gap := acks[i] - acks[i-1]; gap > longest {
			longest, at = gap, acks[i]
		}
	}
	return time.Duration(longest), at
}

// ftClient is one sequential client: it writes its own register and reads
// everybody's, sending each request to the next node round-robin.
type ftClient struct {
	t     *testing.T
	id    int
	own   *ftRegister
	regs  []*ftRegister
	nodes []*server
	next  int
	hc    *http.Client
	rec   *ftRecorder
	stop  chan struct{}
	rng   *rand.Rand

	rev     int64 // the last revision of its own register it knows
	seq     int
	refresh bool // re-read its own register before the next write
	final   bool // the checker's reads after the load
	// failure describes the last read that failed (node, time taken and
	// why), for the checker's report when a register cannot be read.
	failure string
}

func (c *ftClient) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

func (c *ftClient) run() {
	for !c.stopped() {
		switch {
		case c.refresh:
			// After a stale or unknown write, learn the revision first.
			if _, answered := c.read(c.own, ftNoConsistency); answered {
				c.refresh = false
			}
		case c.rng.IntN(2) == 0:
			c.write()
		default:
			consistency := ftNoConsistency
			if c.rng.IntN(2) == 0 {
				consistency = "linearizable"
			}
			c.read(c.regs[c.rng.IntN(len(c.regs))], consistency)
		}
	}
}

const ftNoConsistency = ""

// errFtNotSent means every node refused the connection: nothing was sent.
var errFtNotSent = errors.New("no node accepted the connection")

// send sends one request to the next node that accepts a connection. A
// refused connection means the request never left, so it moves on to the
// next node; any other failure is returned as is.
func (c *ftClient) send(method string, reg *ftRegister, query string, body []byte, consistency string) (status int, answer []byte, node string, err error) {
	for attempt := 0; ; attempt++ {
		if c.stopped() {
			return 0, nil, "", errFtNotSent
		}
		if attempt > 0 && attempt%len(c.nodes) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		n := c.next % len(c.nodes)
		c.next++
		s := c.nodes[n]
		target := s.URL + reg.path()
		if query != "" {
			target += "?" + query
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, target, rd)
		if err != nil {
			return 0, nil, "", err
		}
		// Never replayed by net/http: see ftHTTPClient.
		req.GetBody = nil
		req.Header.Set("Authorization", "Bearer "+reg.key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if consistency != "" {
			req.Header.Set("X-Addrwatch-Read-Consistency", consistency)
		}
		node = fmt.Sprintf("n%d", n+1)
		resp, err := c.hc.Do(req)
		if err != nil {
			if ftRefused(err) {
				c.rec.refused.Add(1)
				continue
			}
			return 0, nil, node, err
		}
		answer, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, nil, node, err
		}
		return resp.StatusCode, answer, node, nil
	}
}

// ftRefused reports a failed dial: the request was never sent.
func ftRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// write is one PUT of a fresh value with the last known revision.
func (c *ftClient) write() {
	c.seq++
	in := ftInput{reg: c.own.index, write: true, expected: c.rev, value: fmt.Sprintf("c%d-%d", c.id, c.seq)}
	body, err := json.Marshal(map[string]any{"expected_revision": in.expected, "cells": []string{c.own.address, ftChain, "", "", in.value}})
	if err != nil {
		panic(err)
	}
	call := c.rec.now()
	status, answer, node, err := c.send("PUT", c.own, "", body, ftNoConsistency)
	ret := c.rec.now()
	if errors.Is(err, errFtNotSent) {
		return // stopping
	}
	out := ftOutput{outcome: ftUnknown, node: node}
	switch {
	case err != nil || status == http.StatusServiceUnavailable:
		c.refresh = true
	case status == http.StatusOK:
		var v struct {
			Revision int64    `json:"revision"`
			Cells    []string `json:"cells"`
		}
		if jerr := json.Unmarshal(answer, &v); jerr != nil || len(v.Cells) != 5 || v.Cells[4] != in.value {
			c.t.Errorf("client %d: PUT via %s answered 200 %s", c.id, node, answer)
			c.refresh = true
			break
		}
		out.outcome, out.rev = ftOK, v.Revision
		c.rev = v.Revision
	case status == http.StatusConflict && ftCode(answer) == "STALE_VERSION":
		out.outcome = ftStale
		c.refresh = true
	default:
		// Recorded as unknown so the history stays checkable; the test
		// fails on it regardless.
		c.t.Errorf("client %d: PUT via %s answered %d %s", c.id, node, status, answer)
		c.refresh = true
	}
	switch out.outcome {
	case ftOK:
		c.rec.acked.Add(1)
	case ftStale:
		c.rec.stale.Add(1)
	default:
		c.rec.unknownN.Add(1)
	}
	c.rec.add(porcupine.Operation{ClientId: c.id, Input: in, Call: call, Output: out, Return: ret})
}

// read is one filtered GET of reg; it reports whether it was answered.
func (c *ftClient) read(reg *ftRegister, consistency string) (ftOutput, bool) {
	call := c.rec.now()
	status, answer, node, err := c.send("GET", reg, ftFilter(reg), nil, consistency)
	ret := c.rec.now()
	if err != nil || status == http.StatusServiceUnavailable {
		c.failure = fmt.Sprintf("via %s after %s: status %d %s, err %v", node, time.Duration(ret-call).Round(time.Millisecond), status, answer, err)
		c.rec.readsFailed.Add(1)
		return ftOutput{}, false
	}
	value, rev, derr := ftDecodeRead(answer)
	if status != http.StatusOK || derr != nil {
		c.t.Errorf("client %d: GET register %d via %s answered %d %s (%v)", c.id, reg.index, node, status, answer, derr)
		c.rec.readsFailed.Add(1)
		return ftOutput{}, false
	}
	linearizable := consistency == "linearizable"
	switch {
	case c.final:
		c.rec.finalReads.Add(1)
	case linearizable:
		c.rec.linearizableReads.Add(1)
		fallthrough
	default:
		c.rec.reads.Add(1)
	}
	out := ftOutput{value: value, rev: rev, node: node}
	c.rec.add(porcupine.Operation{ClientId: c.id, Input: ftInput{reg: reg.index, linearizable: linearizable}, Call: call, Output: out, Return: ret})
	if reg == c.own {
		c.rev = rev
	}
	return out, true
}

func ftCode(body []byte) string {
	var e struct {
		Code string `json:"code"`
	}
	json.Unmarshal(body, &e)
	return e.Code
}

// The cluster's state.

// ftNodeStatus is a node's own view from GET /admin/v1/cluster. On a
// sharded node (--groups) the top-level fields are group 0's, the group
// the schedule's faults are aimed at, and Groups has every group's.
type ftNodeStatus struct {
	State        string `json:"state"`
	Leader       string `json:"leader"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"applied_index"`
	Groups       []struct {
		State        string `json:"state"`
		Leader       string `json:"leader"`
		Term         uint64 `json:"term"`
		AppliedIndex uint64 `json:"applied_index"`
		Accounts     int    `json:"accounts"`
	} `json:"groups"`
}

// applied is every group's applied index, in group order.
func (st ftNodeStatus) applied() []uint64 {
	if len(st.Groups) == 0 {
		return []uint64{st.AppliedIndex}
	}
	var indexes []uint64
	for _, g := range st.Groups {
		indexes = append(indexes, g.AppliedIndex)
	}
	return indexes
}

func ftStatus(hc *http.Client, s *server) (ftNodeStatus, error) {
	req, err := http.NewRequest("GET", s.AdminURL+"/admin/v1/cluster", nil)
	if err != nil {
		return ftNodeStatus{}, err
	}
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	resp, err := hc.Do(req)
	if err != nil {
		return ftNodeStatus{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return ftNodeStatus{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return ftNodeStatus{}, fmt.Errorf("status %d %s", resp.StatusCode, body)
	}
	var st ftNodeStatus
	if err := json.Unmarshal(body, &st); err != nil {
		return st, err
	}
	if len(st.Groups) > 0 {
		g := st.Groups[0]
		st.State, st.Leader, st.Term, st.AppliedIndex = g.State, g.Leader, g.Term, g.AppliedIndex
	}
	return st, nil
}

// ftLeader returns the index of the node that leads by its own account
// (the one of the highest term, should two still think so).
func ftLeader(nodes []*server, hc *http.Client) (int, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		leader, term := -1, uint64(0)
		for i, s := range nodes {
			if st, err := ftStatus(hc, s); err == nil && st.State == "leader" && st.Term >= term {
				leader, term = i, st.Term
			}
		}
		if leader >= 0 {
			return leader, nil
		}
		if time.Now().After(deadline) {
			return 0, errors.New("no node has led for 15s")
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// ftWaitConverged waits until every node reports the same applied index,
// in every group of a sharded cluster.
func ftWaitConverged(t *testing.T, nodes []*server, when string) {
	t.Helper()
	hc := ftHTTPClient()
	deadline := time.Now().Add(ftConvergeTimeout)
	for {
		var indexes [][]uint64
		var errs []string
		for _, s := range nodes {
			st, err := ftStatus(hc, s)
			if err != nil {
				errs = append(errs, err.Error())
			}
			indexes = append(indexes, st.applied())
		}
		same := !slices.ContainsFunc(indexes, func(i []uint64) bool { return !slices.Equal(i, indexes[0]) })
		if len(errs) == 0 && !slices.Contains(indexes[0], 0) && same {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: nodes did not converge in %s: applied indexes %v, errors %v", when, ftConvergeTimeout, indexes, errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ftFinal is the state of one register as read with one node leading.
type ftFinal struct {
	leader string
	value  string
	rev    int64
}

// ftReadOnEveryLeader makes each node the leader in turn (leadership
// transfer) and reads every register through each of the three nodes with
// linearizable reads: reads are answered by the leader from its own applied
// state, so this reads every node's copy. The reads join the history.
func ftReadOnEveryLeader(t *testing.T, nodes []*server, regs []*ftRegister, rec *ftRecorder, hc *http.Client) [][]ftFinal {
	t.Helper()
	finals := make([][]ftFinal, len(regs))
	checker := &ftClient{t: t, id: ftClientCount, nodes: nodes, hc: hc, rec: rec, stop: make(chan struct{}), final: true}
	for i := range nodes {
		id := fmt.Sprintf("n%d", i+1)
		ftMakeLeader(t, nodes, hc, i)
		for _, reg := range regs {
			finals[reg.index] = append(finals[reg.index], ftReadRound(t, checker, reg, id+" leading", func(ftOutput) string { return id })...)
		}
	}
	return finals
}

// ftMoves counts the slot moves a sharded fault test asked for.
type ftMoves struct {
	asked, begun int
	refused      map[int]int // by status
}

func (m ftMoves) refusals() string {
	var parts []string
	for status, n := range m.refused {
		parts = append(parts, fmt.Sprintf("%d× %d", n, status))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// ftStartMoves moves the slot of a random register's account to a random
// group, through a random node, every ftMoveEvery while the faults run,
// so that moves meet kills and partitions. A move refused (no meta
// leader, a node down, a slot already there or moving) is counted and
// left. It returns the function that stops the moves and counts them.
func ftStartMoves(nodes []*server, regs []*ftRegister, groups int, seed uint64) func() ftMoves {
	rng := rand.New(rand.NewPCG(seed^0x6d6f7665, seed))
	hc := &http.Client{Timeout: 10 * time.Second}
	stop, done := make(chan struct{}), make(chan ftMoves, 1)
	go func() {
		m := ftMoves{refused: map[int]int{}}
		t := time.NewTicker(ftMoveEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				done <- m
				return
			case <-t.C:
			}
			reg, via := regs[rng.IntN(len(regs))], nodes[rng.IntN(len(nodes))]
			body, _ := json.Marshal(map[string]any{"account": strings.Split(reg.key, ".")[1], "to": rng.IntN(groups)})
			req, _ := http.NewRequest("POST", via.AdminURL+"/admin/v1/cluster/slots/move", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+via.AdminToken)
			req.Header.Set("Content-Type", "application/json")
			m.asked++
			resp, err := hc.Do(req)
			if err != nil {
				m.refused[0]++
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusAccepted {
				m.begun++
			} else {
				m.refused[resp.StatusCode]++
			}
		}
	}()
	return func() ftMoves {
		close(stop)
		return <-done
	}
}

// ftMoveEvery spaces the sharded fault test's slot moves.
const ftMoveEvery = 1500 * time.Millisecond

// ftReadThroughEveryNode reads every register linearizably through each
// of the three nodes, as each register's group leader answers, for a
// sharded cluster (see ftVariant). The reads join the history.
func ftReadThroughEveryNode(t *testing.T, nodes []*server, regs []*ftRegister, rec *ftRecorder, hc *http.Client) [][]ftFinal {
	t.Helper()
	finals := make([][]ftFinal, len(regs))
	checker := &ftClient{t: t, id: ftClientCount, nodes: nodes, hc: hc, rec: rec, stop: make(chan struct{}), final: true}
	for _, reg := range regs {
		finals[reg.index] = ftReadRound(t, checker, reg, "its group's leader answering", func(out ftOutput) string { return out.node })
	}
	return finals
}

// ftReadRound reads reg once through each node (the checker's client
// picks them in turn), retrying each read until it is answered, and fails
// the test unless all answers agree. leader names who answered a read.
func ftReadRound(t *testing.T, checker *ftClient, reg *ftRegister, when string, leader func(ftOutput) string) []ftFinal {
	t.Helper()
	var round []ftFinal
	var seen []string
	for range checker.nodes {
		deadline := time.Now().Add(ftConvergeTimeout)
		out, answered := checker.read(reg, "linearizable")
		for ; !answered; out, answered = checker.read(reg, "linearizable") {
			if time.Now().After(deadline) {
				t.Fatalf("register %d could not be read with %s; the last failure: %s", reg.index, when, checker.failure)
			}
			time.Sleep(50 * time.Millisecond)
		}
		round = append(round, ftFinal{leader: leader(out), value: out.value, rev: out.rev})
		seen = append(seen, fmt.Sprintf("%q@%d via %s", out.value, out.rev, out.node))
	}
	if !ftSame(round) {
		t.Errorf("register %d with %s reads differently through the nodes: %v", reg.index, when, seen)
	}
	return round
}

// ftAwaitBalanced waits until the group leaders of a sharded cluster are
// spread over its nodes as the nodes spread them themselves: every group
// led, and no node leading two groups more than another.
func ftAwaitBalanced(t *testing.T, nodes []*server) {
	t.Helper()
	hc := ftHTTPClient()
	deadline := time.Now().Add(ftConvergeTimeout)
	for {
		st, err := ftStatus(hc, nodes[0])
		led := map[string]int{}
		for i := range nodes {
			led[fmt.Sprintf("n%d", i+1)] = 0
		}
		for _, g := range st.Groups {
			led[g.Leader]++
		}
		counts := slices.Collect(maps.Values(led))
		if err == nil && len(st.Groups) > 0 && led[""] == 0 && slices.Max(counts)-slices.Min(counts) <= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group leaders did not spread over the nodes in %s: %+v, %v", ftConvergeTimeout, st.Groups, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ftSame(fs []ftFinal) bool {
	for _, f := range fs[1:] {
		if f.value != fs[0].value || f.rev != fs[0].rev {
			return false
		}
	}
	return true
}

// ftMakeLeader transfers leadership to nodes[i] and waits until it serves.
func ftMakeLeader(t *testing.T, nodes []*server, hc *http.Client, i int) {
	t.Helper()
	id := fmt.Sprintf("n%d", i+1)
	deadline := time.Now().Add(ftConvergeTimeout)
	for {
		st, err := ftStatus(hc, nodes[i])
		if err == nil && st.State == "leader" {
			if ftReady(hc, nodes[i]) {
				return
			}
		} else if err == nil {
			body, _ := json.Marshal(map[string]string{"id": id})
			req, _ := http.NewRequest("POST", nodes[i].AdminURL+"/admin/v1/cluster/transfer", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+nodes[i].AdminToken)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become the leader in %s", id, ftConvergeTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ftReady(hc *http.Client, s *server) bool {
	resp, err := hc.Get(s.AdminURL + "/readyz")
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Checks.

// ftCheckAcknowledged checks every node's final copy of each register
// against the acknowledged writes: it must hold the last acknowledged write
// (revision and value), or a later write whose outcome was unknown, applied
// on top of it. Revisions move by exactly one per applied write and each
// acknowledged write answered its own revision, so a final revision below an
// acknowledged one means that write is gone. It returns the number of
// acknowledged writes missing on some node.
func ftCheckAcknowledged(t *testing.T, regs []*ftRegister, rec *ftRecorder, finals [][]ftFinal) int {
	t.Helper()
	type ack struct {
		value string
		rev   int64
	}
	acked := make([][]ack, len(regs))
	unknownAfter := make([]map[string]bool, len(regs)) // values of unknown writes issued after the last ack
	rec.mu.Lock()
	for _, op := range rec.ops {
		in, out := op.Input.(ftInput), op.Output.(ftOutput)
		if !in.write {
			continue
		}
		switch out.outcome {
		case ftOK:
			acked[in.reg] = append(acked[in.reg], ack{in.value, out.rev})
			unknownAfter[in.reg] = nil
		case ftUnknown:
			if unknownAfter[in.reg] == nil {
				unknownAfter[in.reg] = map[string]bool{}
			}
			unknownAfter[in.reg][in.value] = true
		}
	}
	rec.mu.Unlock()
	lost := 0
	for r := range regs {
		var last ack
		if n := len(acked[r]); n > 0 {
			last = acked[r][n-1]
		}
		for _, f := range finals[r] {
			missing := 0
			for _, a := range acked[r] {
				if a.rev > f.rev {
					missing++
				}
			}
			explained := (f.rev == last.rev && f.value == last.value) || (f.rev > last.rev && unknownAfter[r][f.value])
			if missing == 0 && !explained {
				missing = 1 // the last acknowledged write was overwritten by nothing we sent
			}
			if missing > 0 {
				t.Errorf("register %d with %s leading holds %q@%d; the last acknowledged write is %q@%d: %d acknowledged writes missing", r, f.leader, f.value, f.rev, last.value, last.rev, missing)
				lost += missing
			}
		}
	}
	return lost
}

// ftCheckStaleAnswers names the plainest non-linearizable case porcupine
// would only report as a whole: a PUT answered 409 STALE_VERSION ("nothing
// changed") whose value some read later returned.
func ftCheckStaleAnswers(t *testing.T, rec *ftRecorder) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	stale := map[string]porcupine.Operation{}
	for _, op := range rec.ops {
		if in := op.Input.(ftInput); in.write && op.Output.(ftOutput).outcome == ftStale {
			stale[in.value] = op
		}
	}
	for _, op := range rec.ops {
		out := op.Output.(ftOutput)
		if op.Input.(ftInput).write || out.value == "" {
			continue
		}
		w, found := stale[out.value]
		if !found {
			continue
		}
		delete(stale, out.value) // once per write
		in, wout := w.Input.(ftInput), w.Output.(ftOutput)
		t.Errorf("register %d: PUT %q (expected_revision %d) sent via %s at t=%.3fs was answered 409 STALE_VERSION at t=%.3fs, yet client %d read it via %s at revision %d (read at t=%.3fs..%.3fs): the write was applied",
			in.reg, in.value, in.expected, wout.node, time.Duration(w.Call).Seconds(), time.Duration(w.Return).Seconds(), op.ClientId, out.node, out.rev, time.Duration(op.Call).Seconds(), time.Duration(op.Return).Seconds())
	}
}

// ftCheckLinearizable runs porcupine over the history. On failure it writes
// the visualization to a file that outlives the test and names it.
func ftCheckLinearizable(t *testing.T, ops []porcupine.Operation) (porcupine.CheckResult, time.Duration, string) {
	t.Helper()
	began := time.Now()
	result, info := porcupine.CheckOperationsVerbose(ftModel, ops, ftCheckTimeout)
	took := time.Since(began)
	if result == porcupine.Ok {
		return result, took, ""
	}
	f, err := os.CreateTemp("", "addrwatch-fault-*.html")
	if err != nil {
		t.Errorf("history is %s (and the visualization could not be written: %v)", result, err)
		return result, took, ""
	}
	f.Close()
	if err := porcupine.VisualizePath(ftModel, info, f.Name()); err != nil {
		t.Errorf("history is %s (and the visualization could not be written: %v)", result, err)
		return result, took, ""
	}
	if result == porcupine.Illegal {
		t.Errorf("the client history is NOT linearizable; porcupine's visualization: %s; the failing registers' histories: %s", f.Name(), ftDumpIllegal(ops))
	} else {
		t.Errorf("the linearizability check did not finish in %s; partial visualization: %s", ftCheckTimeout, f.Name())
	}
	return result, took, "; visualization " + f.Name()
}

// ftDumpIllegal writes, for each register whose history alone is not
// linearizable, its operations in call order to a text file, and names it.
func ftDumpIllegal(ops []porcupine.Operation) string {
	f, err := os.CreateTemp("", "addrwatch-fault-*.txt")
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	for _, part := range ftModel.Partition(ops) {
		if porcupine.CheckOperations(ftModel, part) {
			continue
		}
		slices.SortFunc(part, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
		fmt.Fprintf(f, "register %d: %d operations (times in ms since the load started)\n", part[0].Input.(ftInput).reg, len(part))
		for _, op := range part {
			fmt.Fprintf(f, "  [%10.3f, %10.3f] client %d: %s\n", float64(op.Call)/1e6, float64(op.Return)/1e6, op.ClientId, ftModel.DescribeOperation(op.Input, op.Output))
		}
	}
	return f.Name()
}

// Logs.

var ftEarlierLogs sync.Map // *server → *strings.Builder: output of killed incarnations

// ftSaveLogs keeps a killed process's output before a restart replaces it.
func ftSaveLogs(s *server) {
	b, _ := ftEarlierLogs.LoadOrStore(s, &strings.Builder{})
	fmt.Fprintf(b.(*strings.Builder), "%s\n----- killed with SIGKILL -----\n", s.logs.String())
}

// ftKeepLogsOnFailure writes every node's output (all incarnations) to a
// directory that outlives the test when the test fails.
func ftKeepLogsOnFailure(t *testing.T, nodes []*server) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dir, err := os.MkdirTemp("", "addrwatch-fault-logs-*")
		if err != nil {
			return
		}
		for i, s := range nodes {
			var all strings.Builder
			if b, found := ftEarlierLogs.Load(s); found {
				all.WriteString(b.(*strings.Builder).String())
			}
			all.WriteString(s.logs.String())
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%d.log", i+1)), []byte(all.String()), 0o644)
		}
		t.Logf("node logs: %s", dir)
	})
}
