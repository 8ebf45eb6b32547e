package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Membership of a sharded cluster. Every node runs every group, so a node
// joins or leaves them all: each data group's leader adds it as a
// non-voter and promotes it once it has caught up there (membership.go,
// promote.go), and the meta group's leader makes it a voter of the meta
// group once it votes in every data group. A removal goes group by group
// under each leader's quorum rule, then leaves the meta group. Either is
// safe to repeat after a partial failure: a member already there, or
// already gone, is left as it is.

// AddNode adds the node id at raftAddr to every group. Only the meta
// group's leader can (the edge forwards the request there).
func (g *Groups) AddNode(ctx context.Context, id, raftAddr string) (ServerStatus, error) {
	if err := ValidateNodeID(id); err != nil {
		return ServerStatus{}, err
	}
	if err := ValidateRaftAddr(raftAddr); err != nil {
		return ServerStatus{}, err
	}
	if g.meta.raft.State() != raft.Leader {
		return ServerStatus{}, ErrNotLeader
	}
	for gid := range g.nodes {
		if err := g.onGroupLeader(ctx, metaCommand{Op: "add_member", Group: gid, NodeID: id, RaftAddr: raftAddr}); err != nil {
			return ServerStatus{}, fmt.Errorf("group %d: %w", gid, err)
		}
	}
	if err := g.meta.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, transportTimeout).Error(); err != nil {
		return ServerStatus{}, fmt.Errorf("meta group: %w", err)
	}
	return serverStatus(raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(raftAddr), Suffrage: raft.Nonvoter}, ""), nil
}

// RemoveServer removes the node id from every group, each under its
// leader's quorum rule, then from the meta group. Only the meta group's
// leader can.
func (g *Groups) RemoveServer(ctx context.Context, id string) error {
	if g.meta.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	known := false
	for gid := range g.nodes {
		err := g.onGroupLeader(ctx, metaCommand{Op: "remove_member", Group: gid, NodeID: id})
		switch {
		case errors.Is(err, ErrUnknownServer):
		case err != nil:
			return fmt.Errorf("group %d: %w", gid, err)
		default:
			known = true
		}
	}
	future := g.meta.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return err
	}
	for _, s := range future.Configuration().Servers {
		if string(s.ID) == id {
			return g.meta.raft.RemoveServer(s.ID, 0, transportTimeout).Error()
		}
	}
	if !known {
		return fmt.Errorf("%w: no server %q in the cluster", ErrUnknownServer, id)
	}
	return nil
}

// onGroupLeader runs a membership change on the leader of its group: here
// when this node leads it, else over a node connection.
func (g *Groups) onGroupLeader(ctx context.Context, c metaCommand) error {
	return untilLeader(ctx, func() error { return g.onGroupLeaderOnce(c) })
}

func (g *Groups) onGroupLeaderOnce(c metaCommand) error {
	n := g.nodes[c.Group]
	if n.serving() {
		return g.changeMember(c)
	}
	addr, known := n.Leader()
	if !known {
		return ErrNotLeader
	}
	a, err := g.askNode(addr, c)
	var notSent *notSentError
	if errors.As(err, &notSent) {
		return ErrNotLeader
	}
	if err != nil {
		return err
	}
	if a.NotLeader {
		return ErrNotLeader
	}
	return memberError(a.Code, a.Error)
}

// changeMember runs a membership change on this node, which leads the
// group.
func (g *Groups) changeMember(c metaCommand) error {
	n := g.nodes[c.Group]
	switch c.Op {
	case "add_member":
		_, err := n.AddNode(c.NodeID, c.RaftAddr)
		return err
	case "remove_member":
		return n.RemoveServer(c.NodeID)
	}
	return fmt.Errorf("cluster: unknown membership change %q", c.Op)
}

// memberCodes name the membership errors an answer carries.
var memberCodes = map[string]error{
	"conflict":  ErrMemberConflict,
	"no_quorum": ErrNoQuorum,
	"invalid":   ErrInvalidMember,
	"unknown":   ErrUnknownServer,
	"outcome":   ErrOutcomeUnknown,
}

// memberCode is the code of err for an answer, or "".
func memberCode(err error) string {
	for code, e := range memberCodes {
		if errors.Is(err, e) {
			return code
		}
	}
	return ""
}

// memberError rebuilds an answer's error.
func memberError(code, msg string) error {
	if msg == "" {
		return nil
	}
	if e, found := memberCodes[code]; found {
		return fmt.Errorf("%w: %s", e, msg)
	}
	return errors.New(msg)
}

// promoteMetaVoters runs for the node's life and, while it leads the meta
// group, makes a non-voter of it a voter once that node votes in every
// data group (each group's leader promoted it there once it caught up).
func (g *Groups) promoteMetaVoters() {
	t := time.NewTicker(promoteInterval)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
		}
		if g.meta.raft.State() != raft.Leader {
			continue
		}
		future := g.meta.raft.GetConfiguration()
		if future.Error() != nil {
			continue
		}
		for _, s := range future.Configuration().Servers {
			if s.Suffrage != raft.Voter && g.votesEverywhere(s.ID) {
				if err := g.meta.raft.AddVoter(s.ID, s.Address, future.Index(), transportTimeout).Error(); err == nil {
					g.cfg.Logger.Info("promoted a node to voter of the meta group", "node_id", string(s.ID))
				}
			}
		}
	}
}

// votesEverywhere reports whether id is a voter of every data group, as
// this node's replicas know their configurations.
func (g *Groups) votesEverywhere(id raft.ServerID) bool {
	for _, n := range g.nodes {
		future := n.raft.GetConfiguration()
		if future.Error() != nil {
			return false
		}
		voter := false
		for _, s := range future.Configuration().Servers {
			voter = voter || (s.ID == id && s.Suffrage == raft.Voter)
		}
		if !voter {
			return false
		}
	}
	return true
}
