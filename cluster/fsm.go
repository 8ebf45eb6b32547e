package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/persistence"
)

// snapshotVisitTimeout bounds how long one account's actor may take to
// encode itself for a snapshot (it may be busy with a long query queue).
const snapshotVisitTimeout = 30 * time.Second

// fsm applies committed entries to the account actors. raft calls it from
// one goroutine, which runs each account's share in that account's actor.
type fsm struct {
	accounts *registry.Registry
	log      *slog.Logger
	metrics  *applyMetrics
	// slots is what the group's log said of moving slots (slotstate.go);
	// slotsMoved turns true once it says anything, so that a group whose
	// slots never moved checks no command against it.
	slots      slotState
	slotsMoved atomic.Bool
	// version is the highest feature version the applied state relies
	// on: of the commands applied, and of the snapshot restored. Snapshots
	// say it, so an older release refuses one it cannot load whole. Only
	// the FSM goroutine writes it.
	version atomic.Uint32
	// applied is the index of the last entry this FSM applied. raft's own
	// AppliedIndex moves only after it has handed a batch over, so a write
	// can be answered (its future resolves here) before raft's figure
	// covers it; Node.appliedIndex takes the larger of the two.
	applied atomic.Uint64
}

var _ raft.BatchingFSM = (*fsm)(nil)

// ApplyBatch decodes every command entry of the batch, applies them all in
// log order, and answers each entry with the slice of its commands'
// results. A cluster entry (a step of a slot's move, slotstate.go) applies
// in its place: the commands before it first, then it, then the rest. A
// command to an account whose slot is away is refused, the same on every
// replica, with a retryable error.
//
// An entry that does not decode means this node cannot know what its peers
// applied; it panics so the node stops instead of diverging.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	start := time.Now()
	responses := make([]any, len(logs))
	var pending []*actors.Command
	var places []*applied // where each pending command's answer goes
	count := 0
	flush := func() {
		if len(pending) == 0 {
			return
		}
		for i, r := range f.accounts.ApplyBatch(pending) {
			res, err := r.Outcome()
			*places[i] = applied{Result: res, err: err}
		}
		count += len(pending)
		pending, places = nil, nil
	}
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		if body, isCluster := persistence.ClusterEntry(l.Data); isCluster {
			flush()
			responses[i] = f.applyClusterEntry(l.Index, body)
			continue
		}
		cmds, err := persistence.DecodeCommands(l.Data)
		if err != nil {
			panic(fmt.Sprintf("cluster: log entry %d does not decode, stopping rather than diverge: %v", l.Index, err))
		}
		results := make([]applied, len(cmds))
		for j, c := range cmds {
			if v := uint32(c.Payload.Kind().FeatureVersion()); v > f.version.Load() {
				f.version.Store(v)
			}
			if f.slotsMoved.Load() && f.slots.away(SlotOf(c.Account)) {
				results[j] = applied{err: clustererr.ErrSlotAway}
				continue
			}
			pending, places = append(pending, c), append(places, &results[j])
		}
		responses[i] = results
	}
	flush()
	if len(logs) > 0 {
		f.applied.Store(logs[len(logs)-1].Index)
	}
	if count > 0 {
		f.metrics.observeApply(count, time.Since(start))
	}
	return responses
}

// applied is a command's answer from the FSM: its result, or the error
// that refused it (a rule's *actors.Error, or clustererr.ErrSlotAway when
// the account's slot is away and no rule ran).
type applied struct {
	actors.Result
	err error
}

// applyClusterEntry applies a cluster entry: a step of a slot's move, or
// an old log's leader announcement, which changes nothing. Its answer is
// the step's error, if any: a step that cannot apply changes nothing, on
// every replica alike.
func (f *fsm) applyClusterEntry(index uint64, body []byte) any {
	var e slotEntry
	if err := json.Unmarshal(body, &e); err != nil {
		panic(fmt.Sprintf("cluster: log entry %d does not decode, stopping rather than diverge: %v", index, err))
	}
	if e.Op == "" {
		if err := checkLegacyAnnouncement(body); err != nil {
			panic(fmt.Sprintf("cluster: log entry %d, stopping rather than diverge: %v", index, err))
		}
		return nil
	}
	switch e.Op {
	case "freeze", "install", "drop":
	default:
		// A newer release's step: this one cannot know what it does.
		panic(fmt.Sprintf("cluster: log entry %d is slot step %q, which this release does not know; stopping rather than diverge", index, e.Op))
	}
	f.slotsMoved.Store(true)
	if err := f.slots.apply(e, f.accounts); err != nil {
		f.log.Error("a slot move's step did not apply", "index", index, "err", err)
		return err
	}
	return nil
}

// Apply is the single-entry path raft uses when batching is off.
func (f *fsm) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// Snapshot encodes every account inside its own actor. raft calls it on
// the FSM goroutine, so no command applies meanwhile and the accounts form
// one consistent cut; queries keep flowing, each account pausing only for
// its own encoding. The accounts are encoded many at once (VisitAll), in
// account-ID order in the snapshot: writes wait for all of it
// (cluster/SCALE.md measures the stall).
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	encoded := make([][]byte, f.accounts.Len())
	n, err := f.accounts.VisitAll(func(i int, a *actors.Account) error {
		if i >= len(encoded) {
			return fmt.Errorf("account %s: more accounts than counted", a.ID)
		}
		b, err := persistence.EncodeAccount(a)
		encoded[i] = b
		return err
	}, snapshotVisitTimeout)
	if err != nil {
		return nil, fmt.Errorf("cluster: snapshot: %w", err)
	}
	// An account deleted between the count and the visit leaves a gap.
	encoded = slices.DeleteFunc(encoded[:n], func(b []byte) bool { return b == nil })
	meta, err := f.slots.meta()
	if err != nil {
		return nil, fmt.Errorf("cluster: snapshot: %w", err)
	}
	return &fsmSnapshot{accounts: encoded, meta: meta, version: actors.FeatureVersion(max(f.version.Load(), 1))}, nil
}

// Restore replaces every account with the snapshot's, and the state of
// moving slots with its cluster metadata. A snapshot that fails its checks
// is an error, and raft refuses to start on it. The cluster metadata of an
// old snapshot (the node directory) says nothing of slots and is dropped.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	accounts, meta, version, err := persistence.ReadSnapshotVersioned(rc)
	if err != nil {
		return fmt.Errorf("cluster: restore: %w", err)
	}
	if err := f.slots.restore(meta); err != nil {
		return fmt.Errorf("cluster: restore: %w", err)
	}
	f.slotsMoved.Store(f.slots.any())
	f.accounts.Restore(accounts)
	f.version.Store(uint32(version))
	f.log.Info("restored snapshot", "accounts", len(accounts))
	return nil
}

type fsmSnapshot struct {
	accounts [][]byte
	meta     []byte // the cluster metadata: the state of moving slots
	version  actors.FeatureVersion
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	err := s.write(sink)
	if err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) write(w io.Writer) error {
	sw, err := persistence.NewSnapshotWriterFor(w, s.version)
	if err != nil {
		return err
	}
	for _, a := range s.accounts {
		if err := sw.WriteAccount(a); err != nil {
			return err
		}
	}
	return sw.CloseWithMeta(s.meta)
}

func (s *fsmSnapshot) Release() {}
