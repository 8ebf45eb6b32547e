// Package clustererr names the conditions of the cluster a request can
// meet: no leader here, a group led elsewhere, an outcome unknown, a
// voter on an older release, a membership change refused. They are
// sentinel errors (and a few typed ones carrying what the client needs to
// hear), found with errors.Is and errors.As.
//
// They live apart from package cluster so that the HTTP edge can tell
// them apart without importing the node (raft, protoactor): package
// cluster returns them, and the edge's one table (httpd/errors.go) turns
// each into the spec's {code, error} and status. Nothing here is an API
// code: those are minted only in actors and at the edge.
package clustererr

import (
	"errors"
	"fmt"
	"strings"
)

// Leadership: where a request can be served.
var (
	// ErrNotLeader means this node cannot accept the request; the caller
	// may forward it to the leader. Nothing entered the log.
	ErrNotLeader = errors.New("cluster: not the leader")
	// ErrNoDirectory is returned while a node has not yet applied the meta
	// group's directory (a new cluster before its first meta leader):
	// there is no leader to send anything to, and nothing entered a log.
	ErrNoDirectory = errors.New("cluster: the slot directory is not known yet")
	// ErrGroupMoved is a request that reached a node of a sharded cluster
	// which, by the time it got there, no longer leads the account's
	// group: the group elected another leader, or the account's slot
	// flipped to another group before the forwarding node's directory did.
	// Nothing was written; the next try goes where the account now is. It
	// is also ErrNotLeader.
	ErrGroupMoved = fmt.Errorf("%w: the account's group is led elsewhere now", ErrNotLeader)
	// ErrSlotAway answers a command to an account whose slot is moving
	// between groups, or has left this one, the same on every replica:
	// nothing changed, and a retry finds the account where it lives.
	ErrSlotAway = errors.New("cluster: the account's slot is moving between groups")
	// ErrOutcomeUnknown means the command was handed to raft but
	// leadership was lost before it was known to commit: it may or may not
	// have applied.
	ErrOutcomeUnknown = errors.New("cluster: leadership changed before the write was confirmed; its outcome is unknown")
	// ErrTransferIncomplete is a leadership transfer raft gave up on: the
	// target did not catch up on the log and win its election in time (a
	// node just restarted, or unreachable). Nothing changed hands unless
	// an election happened anyway; the operator may ask again.
	ErrTransferIncomplete = errors.New("cluster: the leadership transfer did not complete")
)

// ErrFeatureNotAdmitted marks a command the leader refused before it
// entered the log because a voter does not apply its kind yet
// (*VersionError says which). A caller that can say the same with older
// kinds may do so instead (a label import, one command a line).
var ErrFeatureNotAdmitted = errors.New("cluster: a voter does not apply this command kind yet")

// VersionError is a command refused because it needs a newer feature
// version than this node's release, or than some voters', supports.
type VersionError struct {
	Want   uint32   // the feature version the command needs
	Behind []string // the voters that do not support it; none when this node is behind
}

func (e *VersionError) Error() string {
	if len(e.Behind) == 0 {
		return fmt.Sprintf("this node's release does not support this change yet (feature version %d); retry once every node runs the new release", e.Want)
	}
	return fmt.Sprintf("the cluster is being upgraded: this change needs feature version %d, which %s do not support yet; retry once every node runs the new release", e.Want, strings.Join(e.Behind, ", "))
}

// Is makes a VersionError an ErrFeatureNotAdmitted.
func (e *VersionError) Is(target error) bool { return target == ErrFeatureNotAdmitted }

// Membership: changes to who is in the cluster, refused.
var (
	// ErrUnknownServer names a server the cluster does not have.
	ErrUnknownServer = errors.New("cluster: unknown server")
	// ErrInvalidMember means a node ID or raft address is not one a
	// cluster can use.
	ErrInvalidMember = errors.New("invalid cluster member")
	// ErrMemberConflict means the change contradicts the configuration:
	// the id or address belongs to another member, or the node already
	// votes.
	ErrMemberConflict = errors.New("cluster: conflicting member")
	// ErrNoQuorum means the change would leave the voters unable to reach
	// a quorum with the nodes that are up.
	ErrNoQuorum = errors.New("cluster: the change would lose the quorum")
)

// Sharding: groups and the moves of slots between them.
var (
	// ErrNoSuchGroup names a group the cluster does not have
	// (*GroupRangeError says which are).
	ErrNoSuchGroup = errors.New("cluster: no such group")
	// ErrSlotAtTarget is a move to the group the slot is in already.
	ErrSlotAtTarget = errors.New("cluster: the slot is already in that group")
	// ErrSlotMoving is a move, backup or restore asked while a slot moves.
	ErrSlotMoving = errors.New("cluster: the slot is already moving")
	// ErrGroupNotNamed is a leadership transfer asked of a sharded node
	// without naming the group whose leadership it hands over.
	ErrGroupNotNamed = errors.New(`a sharded cluster (--groups) hands over one group's leadership at a time: send {"group": N}`)
)

// GroupRangeError names a group outside the cluster's groups.
type GroupRangeError struct{ Group, Count int }

func (e *GroupRangeError) Error() string {
	return fmt.Sprintf("there is no group %d: groups are numbered from 0 to %d", e.Group, e.Count-1)
}

// Is makes a GroupRangeError an ErrNoSuchGroup.
func (e *GroupRangeError) Is(target error) bool { return target == ErrNoSuchGroup }

// ErrNoSuchSlot names a slot outside the cluster's slots
// (*SlotRangeError says which are).
var ErrNoSuchSlot = errors.New("cluster: no such slot")

// SlotRangeError names a slot outside the cluster's slots.
type SlotRangeError struct{ Slot, Count int }

func (e *SlotRangeError) Error() string {
	return fmt.Sprintf("slot must be from 0 to %d", e.Count-1)
}

// Is makes a SlotRangeError an ErrNoSuchSlot.
func (e *SlotRangeError) Is(target error) bool { return target == ErrNoSuchSlot }

// ErrNoSuchAccount is a slot's move named by an account the cluster does
// not have (*NoAccountError says which).
var ErrNoSuchAccount = errors.New("cluster: no such account")

// NoAccountError is a slot's move named by an account the cluster does
// not have (a mistyped ID would otherwise move some other slot).
type NoAccountError struct{ Account string }

func (e *NoAccountError) Error() string {
	return fmt.Sprintf("no account %q in this cluster", e.Account)
}

// Is makes a NoAccountError an ErrNoSuchAccount.
func (e *NoAccountError) Is(target error) bool { return target == ErrNoSuchAccount }
