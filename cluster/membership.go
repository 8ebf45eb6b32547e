package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/addrwatch/addrwatch/cluster/clustererr"

	"github.com/hashicorp/raft"
)

// Membership changes, on the leader. The rules, so that no operator
// request can leave the cluster without a quorum:
//
//   - a new node joins as a non-voter: it receives the log but does not
//     count towards a quorum, so an address typo or a node that never
//     comes up costs nothing;
//   - it becomes a voter only through Promote, and a promotion or a
//     removal is refused unless the voters it leaves can reach a quorum
//     with the nodes that are up (peerContacts);
//   - each change names the configuration it was checked against, so two
//     changes at once cannot both pass the check on the same view.

var (
	ErrMemberConflict = clustererr.ErrMemberConflict
	ErrNoQuorum       = clustererr.ErrNoQuorum
)

// AddNode adds the node id, reachable for raft at raftAddr, as a
// non-voter and returns it as the status shows it. Adding a member again
// at the same address changes nothing. Only the leader can.
func (n *Node) AddNode(id, raftAddr string) (ServerStatus, error) {
	if err := ValidateNodeID(id); err != nil {
		return ServerStatus{}, err
	}
	if err := ValidateRaftAddr(raftAddr); err != nil {
		return ServerStatus{}, err
	}
	cfg, index, err := n.membership()
	if err != nil {
		return ServerStatus{}, err
	}
	for _, s := range cfg.Servers {
		switch {
		case string(s.ID) == id && string(s.Address) == raftAddr:
			return serverStatus(s, raft.ServerID(n.cfg.NodeID)), nil
		case string(s.ID) == id:
			return ServerStatus{}, fmt.Errorf("%w: node %s is already a member at %s; remove it first to move it", ErrMemberConflict, id, s.Address)
		case string(s.Address) == raftAddr:
			return ServerStatus{}, fmt.Errorf("%w: %s is the raft address of node %s", ErrMemberConflict, raftAddr, s.ID)
		}
	}
	future := n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(raftAddr), index, transportTimeout)
	if err := n.changed(future.Error(), index); err != nil {
		return ServerStatus{}, err
	}
	return serverStatus(raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(raftAddr), Suffrage: raft.Nonvoter}, ""), nil
}

// serverStatus describes a member; leader is the leader's id.
func serverStatus(s raft.Server, leader raft.ServerID) ServerStatus {
	state := "follower"
	switch {
	case s.ID == leader:
		state = "leader"
	case s.Suffrage != raft.Voter:
		state = "nonvoter"
	}
	return ServerStatus{ID: string(s.ID), RaftAddr: string(s.Address), State: state, Suffrage: strings.ToLower(s.Suffrage.String())}
}

// RemoveServer removes the member id, unless the voters left could not
// reach a quorum with the nodes that are up. Only the leader can.
func (n *Node) RemoveServer(id string) error {
	cfg, index, i, err := n.memberOf(id)
	if err != nil {
		return err
	}
	after := slices.Delete(slices.Clone(cfg.Servers), i, i+1)
	if err := n.quorumAfter("removing "+id, after); err != nil {
		return err
	}
	return n.changed(n.raft.RemoveServer(raft.ServerID(id), index, transportTimeout).Error(), index)
}

// Promote makes the non-voter id a voter, unless the voters with it could
// not reach a quorum with the nodes that are up. Only the leader can; it
// does so by itself once a new node has caught up (promote.go).
func (n *Node) Promote(id string) error {
	cfg, index, i, err := n.memberOf(id)
	if err != nil {
		return err
	}
	if cfg.Servers[i].Suffrage == raft.Voter {
		return fmt.Errorf("%w: node %s is already a voter", ErrMemberConflict, id)
	}
	after := slices.Clone(cfg.Servers)
	after[i].Suffrage = raft.Voter
	if err := n.quorumAfter("promoting "+id, after); err != nil {
		return err
	}
	return n.changed(n.raft.AddVoter(cfg.Servers[i].ID, cfg.Servers[i].Address, index, transportTimeout).Error(), index)
}

// membership returns the latest configuration and its index on the
// leader.
func (n *Node) membership() (raft.Configuration, uint64, error) {
	if n.raft.State() != raft.Leader {
		return raft.Configuration{}, 0, ErrNotLeader
	}
	future := n.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return raft.Configuration{}, 0, err
	}
	return future.Configuration(), future.Index(), nil
}

// memberOf returns the latest configuration on the leader, its index, and
// where id is among its servers; an unknown id is ErrUnknownServer.
func (n *Node) memberOf(id string) (raft.Configuration, uint64, int, error) {
	cfg, index, err := n.membership()
	if err != nil {
		return raft.Configuration{}, 0, 0, err
	}
	i := slices.IndexFunc(cfg.Servers, func(s raft.Server) bool { return string(s.ID) == id })
	if i < 0 {
		return raft.Configuration{}, 0, 0, fmt.Errorf("%w: no server %q in the cluster", ErrUnknownServer, id)
	}
	return cfg, index, i, nil
}

// changed translates the outcome of a configuration change that was
// checked against the configuration at index.
func (n *Node) changed(err error, index uint64) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		return ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrOutcomeUnknown
	}
	if future := n.raft.GetConfiguration(); future.Error() == nil && future.Index() != index {
		return fmt.Errorf("%w: the configuration changed while this change was being made; check the cluster status and retry", ErrMemberConflict)
	}
	return err
}

// quorumAfter refuses a change that leaves servers (the configuration
// after it) with fewer voters up than a quorum.
func (n *Node) quorumAfter(change string, servers []raft.Server) error {
	self := raft.ServerID(n.cfg.NodeID)
	return checkQuorum(change, servers, func(id raft.ServerID) bool { return id == self || n.contacts.up(id) })
}

// checkQuorum is the rule behind quorumAfter: a majority of the voters in
// servers must be up.
func checkQuorum(change string, servers []raft.Server, up func(raft.ServerID) bool) error {
	var voters, upVoters, downVoters []string
	for _, s := range servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters = append(voters, string(s.ID))
		if up(s.ID) {
			upVoters = append(upVoters, string(s.ID))
		} else {
			downVoters = append(downVoters, string(s.ID))
		}
	}
	if len(voters) == 0 {
		return fmt.Errorf("%w: %s would leave no voter", ErrNoQuorum, change)
	}
	quorum := len(voters)/2 + 1
	if len(upVoters) >= quorum {
		return nil
	}
	return fmt.Errorf("%w: %s would leave %d voters (%s) of which %d answer the leader (%s; not answering: %s), and a quorum needs %d. Bring the nodes that do not answer back first",
		ErrNoQuorum, change, len(voters), strings.Join(voters, ", "), len(upVoters), listOrNone(upVoters), strings.Join(downVoters, ", "), quorum)
}

func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
