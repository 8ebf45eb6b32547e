package cluster

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// Leader balancing and draining. Elections place group leaders at random, and a node
// that comes back after a restart leads nothing, so one node can end up
// leading most groups: its CPU and disk then carry most writes, which is
// what sharding is for avoiding. Each node checks now and then whether it
// leads more than its share of the groups and, if so, hands one group to
// the voter that leads the fewest. Each node decides only about the
// groups it leads, from what raft tells it of every group's leader, so
// the nodes need not agree on a plan: the busiest hand over one group at
// a time until no node leads more than one above another.

// balanceEvery spaces the checks; a transfer takes about an election's
// time, and the next check sees its outcome.
const balanceEvery = 2 * time.Second

func (g *Groups) balanceLeaders() {
	t := time.NewTicker(balanceEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			g.balanceOnce()
		case <-g.done:
			return
		}
	}
}

// balanceOnce hands one group this node leads to the voter leading the
// fewest, when this node leads at least two more than that voter, or
// when this node is draining (Groups.Drain): a draining node hands over
// every group it leads, one per pass, and no node hands a group to one.
// It does nothing while any group has no known leader, nor while this
// node is handing a group over: until that transfer ends the group
// counts as this node's, which would make it hand over one too many.
func (g *Groups) balanceOnce() {
	if g.holdLeaders.Load() {
		return
	}
	d, _ := g.meta.directory()
	self := raft.ServerID(g.cfg.NodeID)
	led := map[raft.ServerID]int{}
	var mine []*Node
	for _, n := range g.nodes {
		_, leader := n.raft.LeaderWithID()
		if leader == "" || (leader == self && n.transfers.Load() > 0) {
			return
		}
		led[leader]++
		if leader == self && n.serving() {
			mine = append(mine, n)
		}
	}
	if len(mine) == 0 {
		return
	}
	// The voters are the same in every group; the first group that this
	// node leads knows them, and which of them answer.
	n := mine[0]
	conf, _, err := n.membership()
	if err != nil {
		return
	}
	var target raft.ServerID
	fewest := len(g.nodes) + 1
	for _, s := range conf.Servers {
		if s.Suffrage != raft.Voter || s.ID == self || !n.contacts.up(s.ID) || d.draining(string(s.ID)) {
			continue
		}
		if led[s.ID] < fewest || (led[s.ID] == fewest && s.ID < target) {
			target, fewest = s.ID, led[s.ID]
		}
	}
	draining := d.draining(string(self))
	if target == "" || (!draining && led[self]-fewest < 2) {
		return
	}
	// The group with the highest ID moves first, so that two checks in a
	// row pick the same one until it has moved.
	n = mine[len(mine)-1]
	why := "to balance the leaders"
	if draining {
		why = "as this node is draining"
	}
	if err := n.TransferLeadership(string(target)); err != nil {
		g.cfg.Logger.Warn("could not hand a group's leadership over", "group", n.cfg.group, "to", target, "err", err)
		return
	}
	g.cfg.Logger.Info("handed a group's leadership over "+why, "group", n.cfg.group, "to", target)
}

// Drain marks the node id as draining, or no longer (on false), in the
// meta group: a draining node hands over every group it leads and is
// handed none, so that it can be restarted (an upgrade) without a group's
// election. Only the meta group's leader can.
func (g *Groups) Drain(id string, on bool) error {
	if g.meta.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	future := g.meta.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return err
	}
	if !slices.ContainsFunc(future.Configuration().Servers, func(s raft.Server) bool { return string(s.ID) == id }) {
		return fmt.Errorf("%w: no server %q in the cluster", ErrUnknownServer, id)
	}
	op := "undrain"
	if on {
		op = "drain"
	}
	return g.meta.propose(metaCommand{Op: op, NodeID: id})
}
