package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/persistence"
)

// snapshotVisitTimeout bounds how long one account's actor may take to
// encode itself for a snapshot (it may be busy with a long query queue).
const snapshotVisitTimeout = 30 * time.Second

// fsm applies committed entries to the account actors. raft calls it from
// one goroutine, which runs each account's share in that account's actor.
type fsm struct {
	accounts *actors.Registry
	log      *slog.Logger
	metrics  *applyMetrics
	// version is the highest feature version the applied state relies
	// on: of the commands applied, and of the snapshot restored. Snapshots
	// say it, so an older release refuses one it cannot load whole. Only
	// the FSM goroutine writes it.
	version atomic.Uint32
}

var _ raft.BatchingFSM = (*fsm)(nil)

// ApplyBatch decodes every command entry of the batch, applies them all in
// log order, and answers each entry with the slice
// of its commands' results.
//
// An entry that does not decode means this node cannot know what its peers
// applied; it panics so the node stops instead of diverging.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	start := time.Now()
	responses := make([]any, len(logs))
	var all []*actors.Command
	bounds := make([][2]int, len(logs))
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		if body, isDirectory := persistence.ClusterEntry(l.Data); isDirectory {
			if err := checkLegacyAnnouncement(body); err != nil {
				panic(fmt.Sprintf("cluster: log entry %d, stopping rather than diverge: %v", l.Index, err))
			}
			continue
		}
		cmds, err := persistence.DecodeCommands(l.Data)
		if err != nil {
			panic(fmt.Sprintf("cluster: log entry %d does not decode, stopping rather than diverge: %v", l.Index, err))
		}
		bounds[i] = [2]int{len(all), len(all) + len(cmds)}
		all = append(all, cmds...)
		for _, c := range cmds {
			if v := uint32(c.Payload.Kind().FeatureVersion()); v > f.version.Load() {
				f.version.Store(v)
			}
		}
	}
	if len(all) == 0 {
		return responses
	}
	results := f.accounts.ApplyBatch(all)
	for i, l := range logs {
		if _, isDirectory := persistence.ClusterEntry(l.Data); l.Type == raft.LogCommand && !isDirectory {
			responses[i] = results[bounds[i][0]:bounds[i][1]]
		}
	}
	f.metrics.observeApply(len(all), time.Since(start))
	return responses
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
	return &fsmSnapshot{accounts: encoded, version: actors.FeatureVersion(max(f.version.Load(), 1))}, nil
}

// Restore replaces every account with the snapshot's. A snapshot that fails
// its checks is an error, and raft refuses to start on it. The cluster
// metadata of an old snapshot (the node directory) is dropped.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	accounts, _, version, err := persistence.ReadSnapshotVersioned(rc)
	if err != nil {
		return fmt.Errorf("cluster: restore: %w", err)
	}
	f.accounts.Restore(accounts)
	f.version.Store(uint32(version))
	f.log.Info("restored snapshot", "accounts", len(accounts))
	return nil
}

type fsmSnapshot struct {
	accounts [][]byte
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
	return sw.Close()
}

func (s *fsmSnapshot) Release() {}
