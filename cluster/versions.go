package cluster

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/cluster/clustererr"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
)

// Rolling upgrades. A cluster being upgraded runs two releases at once, and
// the older cannot apply a command kind the newer introduced: it would stop
// on the entry (persistence.DecodeCommands) rather than diverge. So the
// leader proposes a command only when every voter supports the feature
// version of its kind (actors.Kind.FeatureVersion); until then the write
// is refused with 503 and the reason, and nothing enters the log.
//
// The leader learns each voter's version by asking it: a node connection
// of the version stream is answered with the node's supported version and
// closed. The leader asks every voter about once a second while it leads.
// A voter it has never heard from counts as version 1, which every release
// supports; a voter that stops answering keeps the version it last gave,
// so a node restarting onto the same release does not close the gate, and
// one restarted onto an older release reports its lower version on the
// next ask, within a second.

// versionPollEvery is how often the leader asks its voters.
const versionPollEvery = time.Second

// versionAskTimeout bounds one ask.
const versionAskTimeout = 2 * time.Second

// serveVersions answers every connection of the version stream with this
// node's supported version.
func serveVersions(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(versionAskTimeout))
			c.Write(binary.AppendUvarint(nil, uint64(actors.SupportedFeatureVersion())))
		}()
	}
}

// askVersion asks the node at addr for its supported version.
func askVersion(d *nodeDialer, addr string) (actors.FeatureVersion, error) {
	c, err := d.open(addr, streamVersion, versionAskTimeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(versionAskTimeout))
	b, err := io.ReadAll(io.LimitReader(c, binary.MaxVarintLen64))
	if err != nil {
		return 0, err
	}
	v, n := binary.Uvarint(b)
	if n <= 0 || v < 1 || v > 1<<31 {
		return 0, fmt.Errorf("node %s answered a bad feature version %x", addr, b)
	}
	return actors.FeatureVersion(v), nil
}

// voterVersions is what the leader knows of its voters' versions.
type voterVersions struct {
	mu    sync.Mutex
	known map[raft.ServerID]actors.FeatureVersion
}

func newVoterVersions() *voterVersions {
	return &voterVersions{known: map[raft.ServerID]actors.FeatureVersion{}}
}

func (v *voterVersions) set(id raft.ServerID, version actors.FeatureVersion) {
	v.mu.Lock()
	v.known[id] = version
	v.mu.Unlock()
}

// lowest returns the lowest version among voters (1 for one never heard
// from) and the voters below want, for the refusal's message.
func (v *voterVersions) lowest(voters []raft.ServerID, want actors.FeatureVersion) (actors.FeatureVersion, []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	low := actors.SupportedFeatureVersion()
	var behind []string
	for _, id := range voters {
		got, heard := v.known[id]
		if !heard {
			got = 1
		}
		low = min(low, got)
		if got < want {
			behind = append(behind, fmt.Sprintf("%s (version %d)", id, got))
		}
	}
	sort.Strings(behind)
	return low, behind
}

// pollVersions asks every other voter for its version while this node
// leads, about once a second, until the node closes.
func (n *Node) pollVersions() {
	t := time.NewTicker(versionPollEvery)
	defer t.Stop()
	for {
		select {
		case <-n.done:
			return
		case <-t.C:
		}
		if n.raft.State() != raft.Leader {
			continue
		}
		n.askVoters()
	}
}

// askVoters asks every other voter of the current configuration, at once.
func (n *Node) askVoters() {
	future := n.raft.GetConfiguration()
	if future.Error() != nil {
		return
	}
	var wg sync.WaitGroup
	for _, s := range future.Configuration().Servers {
		if s.Suffrage != raft.Voter || string(s.ID) == n.cfg.NodeID {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := askVersion(n.dialer, string(s.Address)); err == nil {
				n.versions.set(s.ID, v)
			}
		}()
	}
	wg.Wait()
}

// voters returns the IDs of the current configuration's voters.
func (n *Node) voters() []raft.ServerID {
	future := n.raft.GetConfiguration()
	if future.Error() != nil {
		return nil
	}
	var ids []raft.ServerID
	for _, s := range future.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// gate refuses a command whose kind needs a feature version some voter
// does not support yet, with the reason: a 503 the client may retry once
// the upgrade is through.
func (n *Node) gate(cmd *actors.Command) error {
	want := cmd.Payload.Kind().FeatureVersion()
	if want <= 1 {
		return nil
	}
	var others []raft.ServerID
	for _, id := range n.voters() {
		if string(id) != n.cfg.NodeID {
			others = append(others, id)
		}
	}
	return n.versions.admitOver(actors.FeatureVersion(n.fsm.version.Load()), others, want)
}

// admitOver is admit on a log whose applied entries already rely on
// version applied: a kind of that version or older is admitted whatever
// the voters said, since a voter older than applied could not apply the
// log as it is anyway. It is what lets a new leader go on proposing what
// the old one did while the old one is down (a voter never heard from
// counts as version 1: without this, a leader killed in a three-node
// cluster would hold every newer kind back until it came back).
func (v *voterVersions) admitOver(applied actors.FeatureVersion, others []raft.ServerID, want actors.FeatureVersion) error {
	if want <= applied && want <= actors.SupportedFeatureVersion() {
		return nil
	}
	return v.admit(others, want)
}

// admit returns nil when this node and every one of the other voters
// support version want, and otherwise the refusal naming who does not. The
// refusal is a *clustererr.VersionError, also clustererr.ErrFeatureNotAdmitted, for a caller that can say
// the same with older kinds (a label import, httpd/labels.go).
func (v *voterVersions) admit(others []raft.ServerID, want actors.FeatureVersion) error {
	if want > actors.SupportedFeatureVersion() {
		return &clustererr.VersionError{Want: uint32(want)}
	}
	if low, behind := v.lowest(others, want); low < want {
		return &clustererr.VersionError{Want: uint32(want), Behind: behind}
	}
	return nil
}

// FeatureVersions reports this node's supported version and, on the
// leader, what it knows of every voter's (for /admin/v1/cluster).
func (n *Node) FeatureVersions() (supported actors.FeatureVersion, voters map[string]actors.FeatureVersion) {
	voters = map[string]actors.FeatureVersion{}
	n.versions.mu.Lock()
	for id, v := range n.versions.known {
		voters[string(id)] = v
	}
	n.versions.mu.Unlock()
	voters[n.cfg.NodeID] = actors.SupportedFeatureVersion()
	return actors.SupportedFeatureVersion(), voters
}
