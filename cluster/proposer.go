package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/addrwatch/addrwatch/cluster/clustererr"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/persistence"
)

const (
	// proposalBatchMax bounds the commands that share one raft entry.
	proposalBatchMax = 256
	// proposalQueueMax bounds commands waiting to be batched.
	proposalQueueMax = 4096
	// raftApplyTimeout bounds how long a batch may wait to enter raft.
	raftApplyTimeout = 10 * time.Second
	// entriesInFlight is how many entries may be between raft.Apply and
	// their apply here at once. One: every entry costs a log append and
	// its sync on the leader and then on a follower, in series, plus an
	// RPC each way, whatever its size, so while one entry is in flight the
	// next is better off gathering commands than going out as a second,
	// smaller entry. Measured on three local nodes (2 cores) with bolt,
	// two fdatasyncs per append: one in flight 6.5-6.9k writes/s at 32
	// connections, two 6.1k, no bound (about one command per entry) 4.8k.
	// With raft-wal, one sync per append, two in flight, and an adaptive
	// second entry (sent only once 16 commands wait for it), were both
	// slower than one: the CPU the commands cost, not the disk, bounds the
	// rate; see DESIGN.md.
	entriesInFlight = 1
)

// ErrNotLeader means this node cannot accept the request; the caller may
// forward it to the leader.
var ErrNotLeader = clustererr.ErrNotLeader

// ErrOutcomeUnknown means the command was handed to raft but leadership was
// lost before it was known to commit: it may or may not have applied.
var ErrOutcomeUnknown = clustererr.ErrOutcomeUnknown

type proposal struct {
	record []byte // the command, encoded by its caller
	done   chan proposalResult
}

type proposalResult struct {
	res actors.Result
	err error
}

// proposer group-commits: it takes whatever commands are waiting (up to
// proposalBatchMax), joins their encodings into one log entry and hands
// that to raft.
// At most entriesInFlight entries are out at once, so under load the
// commands that arrive while an entry commits share the next one; alone,
// a command goes at once.
type proposer struct {
	raft     *raft.Raft
	queue    chan *proposal
	inFlight chan struct{} // a slot per entry handed to raft and not yet applied
	stop     chan struct{}
	metrics  *applyMetrics
}

func newProposer(r *raft.Raft, m *applyMetrics) *proposer {
	p := &proposer{raft: r, queue: make(chan *proposal, proposalQueueMax), inFlight: make(chan struct{}, entriesInFlight),
		stop: make(chan struct{}), metrics: m}
	go p.run()
	return p
}

func (p *proposer) propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	record, err := persistence.EncodeCommand(cmd)
	if err != nil {
		return actors.Result{}, err
	}
	pr := &proposal{record: record, done: make(chan proposalResult, 1)}
	select {
	case p.queue <- pr:
	case <-ctx.Done():
		return actors.Result{}, ctx.Err()
	case <-p.stop:
		return actors.Result{}, ErrNotLeader
	}
	select {
	case r := <-pr.done:
		return r.res, r.err
	case <-ctx.Done():
		return actors.Result{}, ErrOutcomeUnknown
	}
}

func (p *proposer) run() {
	defer p.refuseQueued()
	batch := make([]*proposal, 0, proposalBatchMax)
	for {
		select {
		case first := <-p.queue:
			// Wait for a slot before draining, so that everything
			// arriving meanwhile joins this entry.
			select {
			case p.inFlight <- struct{}{}:
			case <-p.stop:
				first.done <- proposalResult{err: ErrNotLeader}
				return
			}
			batch = append(batch[:0], first)
		drain:
			for len(batch) < proposalBatchMax {
				select {
				case next := <-p.queue:
					batch = append(batch, next)
				default:
					break drain
				}
			}
			p.submit(batch)
		case <-p.stop:
			return
		}
	}
}

// submit hands one batch to raft and answers its proposals when it has
// applied, on a goroutine of its own that then frees the batch's slot.
func (p *proposer) submit(batch []*proposal) {
	own := append([]*proposal(nil), batch...)
	records := make([][]byte, len(own))
	for i, pr := range own {
		records[i] = pr.record
	}
	data := persistence.JoinCommands(records)
	p.metrics.observeBatch(len(own))
	handed := time.Now()
	future := p.raft.Apply(data, raftApplyTimeout)
	go func() {
		defer func() { <-p.inFlight }()
		err := future.Error()
		p.metrics.observeEntry(time.Since(handed))
		if err != nil {
			answerAll(own, proposalResult{err: applyError(err)})
			return
		}
		results, isResults := future.Response().([]applied)
		if !isResults || len(results) != len(own) {
			answerAll(own, proposalResult{err: errors.New("cluster: apply returned no results")})
			return
		}
		for i, pr := range own {
			pr.done <- proposalResult{res: results[i].Result, err: results[i].err}
		}
	}()
}

// applyError tells a write that never entered the log (safe to retry) from
// one whose fate is unknown.
func applyError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrRaftShutdown):
		// A shutdown can come after the entry committed but before it
		// applied here, so its fate is unknown, not "never entered".
		return ErrOutcomeUnknown
	}
	return err
}

func answerAll(batch []*proposal, r proposalResult) {
	for _, pr := range batch {
		pr.done <- r
	}
}

// refuseQueued answers the commands still queued when the proposer stops:
// none of them reached raft, so the caller may safely retry elsewhere.
func (p *proposer) refuseQueued() {
	for {
		select {
		case pr := <-p.queue:
			pr.done <- proposalResult{err: ErrNotLeader}
		default:
			return
		}
	}
}

func (p *proposer) close() { close(p.stop) }
