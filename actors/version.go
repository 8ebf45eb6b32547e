package actors

import (
	"strconv"
)

// Feature versions let a cluster run two releases at once, as it does
// through every rolling upgrade. Each command kind belongs to the feature
// version that introduced it; a node supports every version up to its own
// (SupportedFeatureVersion). The leader proposes a command only when every
// voter supports its version (cluster/versions.go), so an older node is
// never handed a command it cannot apply, and a snapshot says the highest
// version its state relies on, so an older node refuses it rather than
// load part of it (persistence/snapshot.go).
//
// Version 1 is every kind up to TouchSession (issue 15 and before);
// version 2 adds RecordActivity (issue 16); version 3 adds
// RecordKeyActivity (issue 28), whose apply keeps each key's share of the
// activity lines: applied by an older node as RecordActivity it would
// keep other lines, so it needs a kind of its own; and ImportLabels
// (issue 28), which a leader proposes only once every voter applies it:
// until then a label import sends one command a line, as before; version
// 4 adds ObserveAddress (issue 31), the chain follower's facts, which a
// leader proposes only once every voter records them; version 5 adds
// ObserveChain (issue 32), the same facts from which apply derives the
// chain events: an older node applies ObserveAddress without events, so
// the follower proposes ObserveChain only once every voter applies it,
// and ObserveAddress until then; version 6 adds the owner's notifications
// (issue 32): the channel and rule commands, RecordDeliveries and
// RedeliverEntry. An account's notification state exists only once one
// of them is applied, and ObserveChain enqueues nothing and tells tx_deep
// at TxDeepConfirmations without it, so a version-5 node applying the
// log up to the first of them holds the same accounts; version 7 adds
// RotateNotifySecretWithGrace, a rotation whose old secret signs beside
// the new one for a while: a version-6 node would apply it as a plain
// rotation and keep no previous secret, so it is a kind of its own, and
// the edge answers 503 for a grace until every voter applies it; version
// 8 adds SetExplorer (issue 33), the block explorer the owner's site links
// to: a version-7 node could not apply it, so the owner API answers 503
// until every voter applies it, and an account that never chose one has
// no Explorer, as on a version-7 node.

// A leader refuses a command of a newer version than some voter applies
// before it enters the log: clustererr.ErrFeatureNotAdmitted.

// FeatureVersion numbers what the log and snapshots may hold.
type FeatureVersion uint32

// CurrentFeatureVersion is the highest version this release knows.
const CurrentFeatureVersion FeatureVersion = 8

// featureVersionOverride, set at link time with
// -ldflags "-X github.com/addrwatch/addrwatch/actors.featureVersionOverride=1",
// builds a node that supports only up to that version: the older release
// of the rolling-upgrade test, which then refuses the newer kinds as an
// older build would.
var featureVersionOverride string

// SupportedFeatureVersion is the highest version this node applies.
func SupportedFeatureVersion() FeatureVersion {
	if v, err := strconv.ParseUint(featureVersionOverride, 10, 32); err == nil && v >= 1 && FeatureVersion(v) < CurrentFeatureVersion {
		return FeatureVersion(v)
	}
	return CurrentFeatureVersion
}

// FeatureVersion is the version that introduced kind k.
func (k Kind) FeatureVersion() FeatureVersion {
	return max(commandKinds[k].version, 1)
}

// Ignorable reports whether a node that does not know kind k may skip its
// commands instead of stopping. Only advisory records qualify: skipping one
// leaves that node without some lines of agent activity, never with
// different cards, grants or keys. (Consul's FSM marks such records the
// same way.) The flag travels in the record, so that a node older than the
// kind can read it (persistence.EncodeCommand).
func (k Kind) Ignorable() bool { return commandKinds[k].ignorable }
