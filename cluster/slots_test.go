package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/hashicorp/raft"
)

// TestSlotOfIsStable pins the hash: a change would move every account of
// every sharded cluster to another group, so it must fail here first.
func TestSlotOfIsStable(t *testing.T) {
	for account, want := range map[string]Slot{
		"":                 805,
		"a":                3212,
		"acct-1":           3580,
		"ubzsol7pg62goqx4": 3247,
		"yywj5eoolhijnex2": 3578,
	} {
		if got := SlotOf(account); got != want {
			t.Errorf("SlotOf(%q) = %d, want %d", account, got, want)
		}
	}
}

// TestNewDirectoryDealsSlotsEvenly: a new directory gives each group an
// equal share of the slots (to one slot), and accounts follow: 30,000
// account IDs land within 10% of an even share on each of 3 groups.
func TestNewDirectoryDealsSlotsEvenly(t *testing.T) {
	for _, groups := range []int{1, 3, 4, 7, MaxGroups} {
		d, err := NewDirectory(groups)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.check(); err != nil {
			t.Fatalf("%d groups: %v", groups, err)
		}
		for g, n := range d.Counts() {
			if n < SlotCount/groups || n > SlotCount/groups+1 {
				t.Errorf("%d groups: group %d has %d slots", groups, g, n)
			}
		}
	}
	d, _ := NewDirectory(3)
	per := make([]int, 3)
	const accounts = 30000
	for i := range accounts {
		g, err := d.GroupOf(fmt.Sprintf("acct%011d", i))
		if err != nil {
			t.Fatal(err)
		}
		per[g]++
	}
	for g, n := range per {
		if n < accounts/3*9/10 || n > accounts/3*11/10 {
			t.Errorf("group %d holds %d of %d accounts: %v", g, n, accounts, per)
		}
	}
}

func TestDirectoryRefusesWhatNoNodeCouldRouteBy(t *testing.T) {
	for _, groups := range []int{0, -1, MaxGroups + 1} {
		if _, err := NewDirectory(groups); err == nil {
			t.Errorf("NewDirectory(%d) accepted", groups)
		}
	}
	if _, err := (Directory{}).GroupOf("a"); !errors.Is(err, ErrNoDirectory) {
		t.Errorf("GroupOf on no directory: %v", err)
	}
	d, _ := NewDirectory(2)
	d.Slots[17] = 2
	if err := d.check(); err == nil {
		t.Error("a slot in group 2 of 2 passed the check")
	}
	if err := (Directory{Groups: 2, Slots: make([]uint16, 10)}).check(); err == nil {
		t.Error("a directory of 10 slots passed the check")
	}
}

func metaEntry(t *testing.T, index uint64, c metaCommand) *raft.Log {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: b}
}

// TestMetaFSMFirstDirectoryWins: every node of a new cluster may propose
// the directory; the first committed applies and later ones change
// nothing, so no node routes by a directory its peers do not have.
func TestMetaFSMFirstDirectoryWins(t *testing.T) {
	f := &metaFSM{}
	three, _ := NewDirectory(3)
	four, _ := NewDirectory(4)
	if res := f.Apply(metaEntry(t, 1, metaCommand{Op: "directory", Directory: &three})); res != nil {
		t.Fatalf("first directory: %v", res)
	}
	if res := f.Apply(metaEntry(t, 2, metaCommand{Op: "directory", Directory: &four})); !errors.Is(res.(error), errDirectorySet) {
		t.Fatalf("second directory: %v", res)
	}
	if d := f.dir.Load(); d == nil || d.Groups != 3 {
		t.Fatalf("directory after two: %+v", d)
	}

	bad := three
	bad.Slots = append([]uint16(nil), three.Slots...)
	bad.Slots[0] = 9
	g := &metaFSM{}
	if res := g.Apply(metaEntry(t, 1, metaCommand{Op: "directory", Directory: &bad})); res == nil || g.dir.Load() != nil {
		t.Fatalf("a directory naming group 9 of 3 applied: %v", res)
	}
}

func TestMetaFSMStopsOnWhatItCannotApply(t *testing.T) {
	for name, data := range map[string][]byte{"not JSON": []byte("{"), "unknown op": []byte(`{"op":"split"}`)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: applied without a panic", name)
				}
			}()
			(&metaFSM{}).Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: data})
		}()
	}
}

type bufferSink struct {
	bytes.Buffer
	closed bool
}

func (s *bufferSink) ID() string    { return "buffer" }
func (s *bufferSink) Cancel() error { return nil }
func (s *bufferSink) Close() error  { s.closed = true; return nil }

func TestMetaFSMSnapshotRoundTrip(t *testing.T) {
	f := &metaFSM{}
	d, _ := NewDirectory(5)
	f.Apply(metaEntry(t, 1, metaCommand{Op: "directory", Directory: &d}))
	f.Apply(metaEntry(t, 2, metaCommand{Op: "reserve_login", Login: "owner", Account: "acct-1", At: 7}))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink bufferSink
	if err := snap.Persist(&sink); err != nil || !sink.closed {
		t.Fatalf("Persist: %v, closed %v", err, sink.closed)
	}
	g := &metaFSM{}
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if got := g.dir.Load(); got == nil || got.Groups != 5 || got.Slots[4095] != d.Slots[4095] {
		t.Fatalf("restored %+v", got)
	}
	if held, found := g.logins.holder("owner"); !found || held != (loginReservation{Account: "acct-1", At: 7}) {
		t.Fatalf("restored login: %+v %v", held, found)
	}
	if err := g.Restore(io.NopCloser(bytes.NewReader([]byte(`{"directory":{"groups":2,"slots":[0]}}`)))); err == nil {
		t.Error("a snapshot with a directory of one slot restored")
	}
}

// TestNodeMuxRoutesGroupStreams: group streams share the node listener;
// each reaches its own group's listener, and one for a group this node
// does not run is refused.
func TestNodeMuxRoutesGroupStreams(t *testing.T) {
	addr := freeRaftAddr(t)
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mux, err := listenNodes(addr, tcp, nil, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer mux.close()
	d := newNodeDialer(nil, nil)
	for _, id := range []uint16{1, 7, metaGroupID} {
		ln := mux.group(id)
		c, err := d.openGroup(addr, id, testTimeout)
		if err != nil {
			t.Fatalf("group %d: %v", id, err)
		}
		echoOnce(t, ln, c)
	}
	if c, err := d.openGroup(addr, 8, testTimeout); err == nil {
		c.Close()
		t.Fatal("a stream for group 8, which this node does not run, was accepted")
	}
	if got := mux.refused.Load(); got != 1 {
		t.Errorf("%d refusals counted, want 1", got)
	}
}
