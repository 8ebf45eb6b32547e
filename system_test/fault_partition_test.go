package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fault test's schedule: every ftRoundEvery one fault, then the
// network heals and the cluster runs whole (every node ready) for at
// least ftSettleMin before the next. Faults come in three kinds, in the
// order partition, kill, partition, transfer, over and over, each kind
// drawn from its own shuffled deck, so that a 20-second run sees all
// three and a long one sees every fault many times. The deck order comes
// from ADDRWATCH_FAULT_SEED (random when unset; the log names it).

const (
	// ftRoundEvery is the target period between two faults.
	ftRoundEvery = 3 * time.Second
	// ftDownFor is how long a killed node stays down.
	ftDownFor = 1 * time.Second
	// ftSettleMin is how long the cluster runs whole between two faults.
	ftSettleMin = 1 * time.Second
	// A partition lasts between these: sometimes it heals before the
	// followers elect a new leader (500 ms to 1 s without heartbeats,
	// then an election), mostly after.
	ftPartitionMin, ftPartitionMax = 1 * time.Second, 2500 * time.Millisecond
	// Slow links get a delay between these, each way: below the leader's
	// 250 ms lease for a round trip, and above it.
	ftDelayMin, ftDelayMax = 50 * time.Millisecond, 250 * time.Millisecond
)

// ftFaultKind is one kind of fault. run applies it around the node that
// leads (index l) and returns what happened, for the log.
type ftFaultKind struct {
	name string
	run  func(s *ftSchedule, l int) string
}

var (
	ftPartitionKinds = []ftFaultKind{
		{"isolate the leader (drop, both ways)", func(s *ftSchedule, l int) string {
			return s.partition(ftLinkDrop, append(s.net.from(l), s.net.to(l)...))
		}},
		{"cut the leader off (connections reset, both ways)", func(s *ftSchedule, l int) string {
			return s.partition(ftLinkCut, append(s.net.from(l), s.net.to(l)...))
		}},
		{"the leader's connections to the followers stall (one way)", func(s *ftSchedule, l int) string {
			return s.partition(ftLinkDrop, s.net.from(l))
		}},
		{"the followers' connections to the leader stall (one way)", func(s *ftSchedule, l int) string {
			return s.partition(ftLinkDrop, s.net.to(l))
		}},
		{"isolate a follower (drop, both ways)", func(s *ftSchedule, l int) string {
			f := s.follower(l)
			return fmt.Sprintf("n%d: %s", f+1, s.partition(ftLinkDrop, append(s.net.from(f), s.net.to(f)...)))
		}},
		{"the followers lose each other (drop, both ways)", func(s *ftSchedule, l int) string {
			f := s.follower(l)
			return s.partition(ftLinkDrop, s.net.between(f, ftThird(l, f)))
		}},
		{"slow links around the leader", func(s *ftSchedule, l int) string {
			delay := ftDelayMin + time.Duration(s.rng.Int64N(int64(ftDelayMax-ftDelayMin)))
			return s.partition(ftLinkState{delay: delay.Round(time.Millisecond)}, append(s.net.from(l), s.net.to(l)...))
		}},
		{"every node connection reset at once", func(s *ftSchedule, l int) string {
			var all [][2]int
			for link := range s.net.links {
				all = append(all, link)
			}
			s.net.set(ftLinkCut, all...)
			s.net.heal()
			return "reset and healed"
		}},
	}
	ftKillKinds = []ftFaultKind{
		{"kill the leader (SIGKILL)", func(s *ftSchedule, l int) string {
			s.f.leaderKills++
			return s.kill(l)
		}},
		{"kill a follower (SIGKILL)", func(s *ftSchedule, l int) string {
			s.f.followerKills++
			f := s.follower(l)
			return fmt.Sprintf("n%d %s", f+1, s.kill(f))
		}},
		{"isolate a follower, then kill the leader (no quorum until it is back)", func(s *ftSchedule, l int) string {
			s.f.leaderKills++
			f := s.follower(l)
			began := time.Now()
			s.net.set(ftLinkDrop, append(s.net.from(f), s.net.to(f)...)...)
			killed := s.kill(l)
			time.Sleep(time.Until(began.Add(s.partitionFor())))
			return fmt.Sprintf("n%d isolated, leader %s, healed after %.1fs", f+1, killed, time.Since(began).Seconds())
		}},
	}
	ftTransferKinds = []ftFaultKind{
		{"leadership transfer", func(s *ftSchedule, l int) string {
			to := s.follower(l)
			return fmt.Sprintf("to n%d: %s", to+1, s.transfer(l, to))
		}},
		{"leadership transfer into a partition", (*ftSchedule).transferIntoPartition},
	}
)

// ftFaults is what the schedule did.
type ftFaults struct {
	seed                       uint64
	rounds                     int
	leaderKills, followerKills int
	partitions, transfers      int
	// intoPartition counts the transfers into a partition; splits counts
	// those after which the old
	// leader was seen to say it led while the new one did, and
	// splitLongest is the longest time between the first and the last
	// time both were seen to (polled every few milliseconds).
	intoPartition, splits int
	splitLongest          time.Duration
	// windows are the faults as they happened, for naming the fault
	// behind an anomaly.
	windows []ftWindow
	log     []string
}

// ftWindow is one fault from its start until the network healed (in the
// recorder's time).
type ftWindow struct {
	from, to int64
	kind     string // the fault's kind
	what     string // the kind, the leader and the start
}

const ftNoFault = "no fault"

// during names the faults in effect at t (or healed less than slack
// before it).
func (f *ftFaults) during(t int64, slack time.Duration) string {
	return f.names(t, slack, func(w ftWindow) string { return w.what })
}

// kindsDuring is during with the faults' kinds only.
func (f *ftFaults) kindsDuring(t int64, slack time.Duration) string {
	return f.names(t, slack, func(w ftWindow) string { return w.kind })
}

func (f *ftFaults) names(t int64, slack time.Duration, name func(ftWindow) string) string {
	var names []string
	for _, w := range f.windows {
		if w.from <= t && t <= w.to+int64(slack) {
			names = append(names, name(w))
		}
	}
	if len(names) == 0 {
		return ftNoFault
	}
	return strings.Join(names, "; ")
}

// ftSchedule runs the faults.
type ftSchedule struct {
	t     *testing.T
	nodes []*server
	net   *ftNet
	rec   *ftRecorder
	load  *http.Client // the clients', whose idle connections to a killed node go
	ctl   *http.Client // the schedule's own
	rng   *rand.Rand
	f     ftFaults
	// sharded aims the faults at group 0 of a sharded cluster: its
	// transfers name the group.
	sharded bool
}

// ftStartFaultCluster starts three nodes of the faultinject build over
// mutual TLS, each link between them through its own proxy, each node
// also with extra.
func ftStartFaultCluster(t *testing.T, extra ...string) ([]*server, *ftNet) {
	t.Helper()
	binary := faultInjectBinary(t)
	nodes := newClusterNodes(t, 3)
	links := newFtNet(t, nodes)
	for _, s := range nodes {
		s.binary = binary
	}
	launchCluster(t, nodes, clusterTLSArgs(t, len(nodes), extra...))
	return nodes, links
}

// ftSeed is ADDRWATCH_FAULT_SEED, or a fresh random seed.
func ftSeed(t *testing.T) uint64 {
	t.Helper()
	v := os.Getenv("ADDRWATCH_FAULT_SEED")
	if v == "" {
		return rand.Uint64()
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("ADDRWATCH_FAULT_SEED=%q: want an unsigned integer", v)
	}
	return seed
}

// ftRunFaults runs the schedule for duration, then heals the network.
func ftRunFaults(t *testing.T, nodes []*server, links *ftNet, rec *ftRecorder, load *http.Client, duration time.Duration, seed uint64, sharded bool) ftFaults {
	t.Helper()
	s := &ftSchedule{t: t, nodes: nodes, net: links, rec: rec, load: load, ctl: &http.Client{Timeout: 30 * time.Second},
		rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), f: ftFaults{seed: seed}, sharded: sharded}
	defer links.heal()
	decks := map[string]*ftDeck{}
	for name, kinds := range map[string][]ftFaultKind{"partition": ftPartitionKinds, "kill": ftKillKinds, "transfer": ftTransferKinds} {
		decks[name] = &ftDeck{kinds: kinds, rng: s.rng}
	}
	order := []string{"partition", "kill", "partition", "transfer"}
	deadline := time.Now().Add(duration)
	next := time.Now().Add(ftRoundEvery)
	for round := 0; next.Before(deadline); round++ {
		time.Sleep(time.Until(next))
		kind := decks[order[round%len(order)]].draw()
		l, err := ftLeader(nodes, s.ctl)
		if err != nil {
			t.Fatalf("round %d (%s): %v", round+1, kind.name, err)
		}
		at := rec.now()
		what := kind.run(s, l)
		links.heal()
		s.f.windows = append(s.f.windows, ftWindow{from: at, to: rec.now(), kind: kind.name, what: fmt.Sprintf("%s (leader n%d, t=%.1fs)", kind.name, l+1, time.Duration(at).Seconds())})
		s.f.rounds++
		s.waitWhole(kind.name)
		s.f.log = append(s.f.log, fmt.Sprintf("t=%.1fs %s, leader n%d: %s", time.Duration(at).Seconds(), kind.name, l+1, what))
		next = next.Add(ftRoundEvery)
		if settled := time.Now().Add(ftSettleMin); next.Before(settled) {
			next = settled
		}
	}
	time.Sleep(time.Until(deadline))
	return s.f
}

// ftDeck deals kinds in a shuffled order, reshuffling when it runs out.
type ftDeck struct {
	kinds []ftFaultKind
	rng   *rand.Rand
	left  []ftFaultKind
}

func (d *ftDeck) draw() ftFaultKind {
	if len(d.left) == 0 {
		d.left = append([]ftFaultKind(nil), d.kinds...)
		d.rng.Shuffle(len(d.left), func(i, j int) { d.left[i], d.left[j] = d.left[j], d.left[i] })
	}
	k := d.left[0]
	d.left = d.left[1:]
	return k
}

// ftThird is the node of the three that is neither a nor b.
func ftThird(a, b int) int { return 3 - a - b }

// follower picks one of the nodes other than l.
func (s *ftSchedule) follower(l int) int {
	return (l + 1 + s.rng.IntN(len(s.nodes)-1)) % len(s.nodes)
}

func (s *ftSchedule) partitionFor() time.Duration {
	return ftPartitionMin + time.Duration(s.rng.Int64N(int64(ftPartitionMax-ftPartitionMin)))
}

// partition puts links in state for a while; the schedule heals them.
func (s *ftSchedule) partition(state ftLinkState, links [][2]int) string {
	s.f.partitions++
	d := s.partitionFor()
	s.net.set(state, links...)
	time.Sleep(d)
	var names []string
	for _, l := range links {
		names = append(names, s.net.links[l].name)
	}
	return fmt.Sprintf("%s on %s for %.1fs", state, strings.Join(names, " "), d.Seconds())
}

// kill kills node i with SIGKILL and restarts it after ftDownFor.
func (s *ftSchedule) kill(i int) string {
	victim := s.nodes[i]
	victim.kill()
	// A pooled connection to the dead process would turn the next
	// request into an unknown outcome for no reason.
	s.load.CloseIdleConnections()
	time.Sleep(ftDownFor)
	ftSaveLogs(victim)
	restart := time.Now()
	victim.start(victim.extra...)
	return fmt.Sprintf("killed, back in %.1fs", time.Since(restart).Seconds())
}

// transfer asks leader l to hand leadership to node to, and says how that
// went.
func (s *ftSchedule) transfer(l, to int) string {
	s.f.transfers++
	began := time.Now()
	in := map[string]any{"id": fmt.Sprintf("n%d", to+1)}
	if s.sharded {
		in["group"] = 0
	}
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest("POST", s.nodes[l].AdminURL+"/admin/v1/cluster/transfer", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.nodes[l].AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.ctl.Do(req)
	if err != nil {
		return fmt.Sprintf("no answer (%v)", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return fmt.Sprintf("done in %s", time.Since(began).Round(time.Millisecond))
	}
	return fmt.Sprintf("answered %d %s after %s", resp.StatusCode, bytes.TrimSpace(answer), time.Since(began).Round(time.Millisecond))
}

// transferIntoPartition is the one schedule in which a deposed leader may
// go on answering default reads: the only one in which a new leader is
// elected before the old one's lease (250 ms) has run out, since a
// transfer's target stands for election at once, not after 500 ms to 1 s
// without heartbeats.
//
// The old leader L keeps only its own connections to the target T (the
// transfer needs them: L brings T's log up to date, then tells it to
// stand); every other link of L's is cut. As soon as T stands (its term
// passes L's), L's connections to T are cut too, so that no answer with
// the new term reaches L: it keeps leading until its lease runs out,
// while T and the third node elect T and serve. The round reports how long
// both said they led.
//
// Cut, not held: with held links every client would soon wait in a
// request a follower forwards to L, and none would ask L anything while
// it is deposed. Cut, a follower's forward fails at once and it waits for
// the next leader, so the load keeps reaching every node.
func (s *ftSchedule) transferIntoPartition(l int) string {
	s.f.intoPartition++
	to := s.follower(l)
	other := ftThird(l, to)
	began := time.Now()
	d := s.partitionFor()
	s.net.set(ftLinkCut, s.net.between(l, other)...)
	s.net.set(ftLinkCut, [2]int{to, l})
	before, err := ftStatus(s.ctl, s.nodes[l])
	if err != nil {
		return fmt.Sprintf("no status from n%d: %v", l+1, err)
	}
	result := make(chan string, 1)
	go func() { result <- s.transfer(l, to) }()
	stood := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if st, err := ftStatus(s.ctl, s.nodes[to]); err == nil && st.Term > before.Term {
			stood = true
			break
		}
	}
	s.net.set(ftLinkCut, [2]int{l, to})
	// Watch both until the partition heals: for how long did L still say
	// it led once T did?
	var first, last time.Time
	for time.Since(began) < d {
		old, err1 := ftStatus(s.ctl, s.nodes[l])
		neu, err2 := ftStatus(s.ctl, s.nodes[to])
		if err1 == nil && err2 == nil && old.State == "leader" && neu.State == "leader" && neu.Term > old.Term {
			if first.IsZero() {
				first = time.Now()
			}
			last = time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.net.heal()
	how := <-result
	if !stood {
		return fmt.Sprintf("to n%d: n%d did not stand within 5s; transfer %s", to+1, to+1, how)
	}
	split := "only one said it led at a time"
	if !first.IsZero() {
		s.f.splits++
		s.f.splitLongest = max(s.f.splitLongest, last.Sub(first))
		split = fmt.Sprintf("both said they led, seen for %s", last.Sub(first).Round(time.Millisecond))
	}
	return fmt.Sprintf("to n%d, n%d then cut off for %.1fs; %s; transfer %s", to+1, l+1, d.Seconds(), split, how)
}

// waitWhole waits until every node is ready (a leader serves, followers
// have caught up).
func (s *ftSchedule) waitWhole(after string) {
	s.t.Helper()
	deadline := time.Now().Add(ftConvergeTimeout)
	for i, n := range s.nodes {
		for !ftReady(s.ctl, n) {
			if time.Now().After(deadline) {
				s.t.Fatalf("after %s: n%d not ready in %s", after, i+1, ftConvergeTimeout)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
}
