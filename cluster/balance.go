package cluster

import (
	"time"

	"github.com/hashicorp/raft"
)

// Leader balancing. Elections place group leaders at random, and a node
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
// fewest, when this node leads at least two more than that voter. It does
// nothing while any group has no known leader.
func (g *Groups) balanceOnce() {
	if g.holdLeaders.Load() {
		return
	}
	self := raft.ServerID(g.cfg.NodeID)
	led := map[raft.ServerID]int{}
	var mine []*Node
	for _, n := range g.nodes {
		_, leader := n.raft.LeaderWithID()
		if leader == "" {
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
		if s.Suffrage != raft.Voter || s.ID == self || !n.contacts.up(s.ID) {
			continue
		}
		if led[s.ID] < fewest || (led[s.ID] == fewest && s.ID < target) {
			target, fewest = s.ID, led[s.ID]
		}
	}
	if target == "" || led[self]-fewest < 2 {
		return
	}
	// The group with the highest ID moves first, so that two checks in a
	// row pick the same one until it has moved.
	n = mine[len(mine)-1]
	if err := n.TransferLeadership(string(target)); err != nil {
		g.cfg.Logger.Warn("could not hand a group's leadership over", "group", n.cfg.group, "to", target, "err", err)
		return
	}
	g.cfg.Logger.Info("handed a group's leadership over to balance the leaders", "group", n.cfg.group, "to", target)
}
