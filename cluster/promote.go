package cluster

import (
	"errors"
	"time"

	"github.com/hashicorp/raft"
	"golang.org/x/time/rate"
)

// A node joins as a non-voter (membership.go) and the leader promotes it
// once it has caught up, so that it never counts towards a quorum before
// it could take part in one. The leader learns a peer's progress from
// the last log index in its answers to AppendEntries (contacts.go): a
// non-voter has caught up when it holds everything that was committed at
// the previous check, and it is promoted once that has held for
// promoteSteadyChecks checks in a row, so that a node that is still
// installing a snapshot or that answers only now and then waits.

const (
	// promoteInterval is how often the leader looks for caught-up
	// non-voters.
	promoteInterval = 250 * time.Millisecond
	// promoteSteadyChecks is how many checks in a row a non-voter must be
	// caught up and answering before it is promoted (a second).
	promoteSteadyChecks = 4
)

// promoteCaughtUp runs for the node's life and, while it leads, promotes
// every non-voter that has caught up.
func (n *Node) promoteCaughtUp() {
	t := time.NewTicker(promoteInterval)
	defer t.Stop()
	p := promotion{steady: map[raft.ServerID]int{}}
	warn := rate.Sometimes{First: 3, Interval: time.Minute}
	for {
		select {
		case <-n.done:
			return
		case <-t.C:
		}
		if !n.serving() {
			p.reset()
			continue
		}
		future := n.raft.GetConfiguration()
		if future.Error() != nil {
			continue
		}
		for _, id := range p.check(future.Configuration().Servers, n.contacts.progress, n.raft.CommitIndex()) {
			err := n.Promote(string(id))
			switch {
			case err == nil:
				n.log.Info("promoted a caught-up node to voter", "node_id", string(id))
			case errors.Is(err, ErrNotLeader), errors.Is(err, ErrMemberConflict):
				// Leadership or the configuration moved on; the next
				// check sees the new state.
			default:
				warn.Do(func() { n.log.Warn("could not promote a caught-up node", "node_id", string(id), "err", err) })
			}
		}
	}
}

// promotion is the promoter's memory between checks.
type promotion struct {
	// steady counts, per non-voter, the checks in a row it was caught up.
	steady map[raft.ServerID]int
	// committed is the commit index at the previous check: what a
	// non-voter must hold to count as caught up (zero: no check yet).
	committed uint64
}

func (p *promotion) reset() {
	clear(p.steady)
	p.committed = 0
}

// check returns the non-voters of servers that are ready to vote, given
// each peer's reported progress and the leader's commit index now.
func (p *promotion) check(servers []raft.Server, progress func(raft.ServerID) (uint64, bool), committed uint64) []raft.ServerID {
	var ready []raft.ServerID
	seen := map[raft.ServerID]bool{}
	for _, s := range servers {
		if s.Suffrage != raft.Nonvoter {
			continue
		}
		seen[s.ID] = true
		lastLog, answering := progress(s.ID)
		if !answering || p.committed == 0 || lastLog < p.committed {
			p.steady[s.ID] = 0
			continue
		}
		p.steady[s.ID]++
		if p.steady[s.ID] >= promoteSteadyChecks {
			ready = append(ready, s.ID)
			delete(p.steady, s.ID)
		}
	}
	for id := range p.steady {
		if !seen[id] {
			delete(p.steady, id)
		}
	}
	p.committed = committed
	return ready
}
