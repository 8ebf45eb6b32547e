package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// The leader admits a command of a feature version only once every other
// voter has said it supports it; one never heard from counts as version 1.
func TestVoterVersionsAdmitOnlyWhatEveryVoterSupports(t *testing.T) {
	v := newVoterVersions()
	others := []raft.ServerID{"n2", "n3"}
	if err := v.admit(others, 1); err != nil {
		t.Fatalf("version 1 is always admitted: %v", err)
	}
	var refusal *clustererr.VersionError
	if err := v.admit(others, 2); !errors.As(err, &refusal) || !errors.Is(err, clustererr.ErrFeatureNotAdmitted) ||
		!strings.Contains(refusal.Error(), "n2 (version 1), n3 (version 1)") {
		t.Fatalf("before any voter answered: %v", err)
	}
	v.set("n2", 2)
	if err := v.admit(others, 2); err == nil || strings.Contains(err.Error(), "n2") || !strings.Contains(err.Error(), "n3 (version 1)") {
		t.Fatalf("with n3 behind: %v", err)
	}
	v.set("n3", 2)
	if err := v.admit(others, 2); err != nil {
		t.Fatalf("with every voter at 2: %v", err)
	}
	// A voter restarted onto the older release says so; the gate closes.
	v.set("n3", 1)
	if err := v.admit(others, 2); err == nil {
		t.Fatal("a voter back at version 1 was not noticed")
	}
	// A version above this release's own is refused whoever the voters are.
	if err := v.admit(nil, actors.CurrentFeatureVersion+1); err == nil || !strings.Contains(err.Error(), "this node's release") {
		t.Fatalf("a version this release lacks: %v", err)
	}
}

// A kind the applied log already holds is admitted though a voter was
// never heard from (the old leader, killed): that voter applied it once,
// or could not apply the log anyway. A newer kind still waits for it.
func TestTheAppliedLogAdmitsItsOwnKinds(t *testing.T) {
	v := newVoterVersions()
	v.set("n3", actors.CurrentFeatureVersion)
	others := []raft.ServerID{"n2", "n3"} // n2 was the leader, and is down
	if err := v.admitOver(3, others, 3); err != nil {
		t.Errorf("a version-3 kind on a log holding version 3: %v", err)
	}
	if err := v.admitOver(3, others, 4); !errors.Is(err, clustererr.ErrFeatureNotAdmitted) || !strings.Contains(err.Error(), "n2 (version 1)") {
		t.Errorf("a version-4 kind on a log holding version 3, n2 never heard from: %v", err)
	}
	if err := v.admitOver(actors.CurrentFeatureVersion+1, nil, actors.CurrentFeatureVersion+1); err == nil {
		t.Error("a version this release lacks was admitted")
	}
}

// While a voter runs a release of version 2, RecordKeyActivity is refused
// before the log with clustererr.ErrFeatureNotAdmitted, which tells the
// edge to record with RecordActivity instead (httpd/activity_record.go);
// that is admitted.
func TestGateSendsActivityBackToTheOlderKind(t *testing.T) {
	v := newVoterVersions()
	v.set("n2", 2)
	others := []raft.ServerID{"n2"}
	if err := v.admit(others, actors.KindRecordKeyActivity.FeatureVersion()); !errors.Is(err, clustererr.ErrFeatureNotAdmitted) {
		t.Fatalf("RecordKeyActivity with a voter at version 2: %v", err)
	}
	if err := v.admit(others, actors.KindRecordActivity.FeatureVersion()); err != nil {
		t.Fatalf("RecordActivity with a voter at version 2: %v", err)
	}
}

// A node answers the version stream with its supported version, over the
// same node connection the other streams use.
func TestNodeAnswersItsFeatureVersion(t *testing.T) {
	tn := startNode(t, t.TempDir(), freeRaftAddr(t))
	got, err := askVersion(tn.node.dialer, tn.addr)
	if err != nil || got != actors.SupportedFeatureVersion() {
		t.Fatalf("asked its version: %d, %v", got, err)
	}
	if st := tn.status(); st.FeatureVersion != actors.SupportedFeatureVersion() || st.AppliedFeatureVersion != 1 {
		t.Fatalf("status reports feature version %d, applied %d", st.FeatureVersion, st.AppliedFeatureVersion)
	}
}

// Applying a feature version 2 command raises what the state relies on,
// and the snapshot says so: a reopened node restored from it reports it
// without replaying the command.
func TestAppliedFeatureVersionSurvivesASnapshot(t *testing.T) {
	dir, addr := t.TempDir(), freeRaftAddr(t)
	tn := startNode(t, dir, addr)
	mustSucceed(t, tn.propose(createAccount("acct-1")), 201)
	mustSucceed(t, tn.propose(&actors.Command{Account: "acct-1", At: t0, Principal: ownerPrincipal, Payload: &actors.CreateKey{
		KeyID: "k1", Name: "agent", Capability: actors.LevelRead, Hash: hashOf("awk.acct-1.k1.secret")}}), 201)
	agent := actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k1"}
	mustSucceed(t, tn.propose(&actors.Command{Account: "acct-1", At: t0 + 1, Principal: agent, Payload: &actors.RecordActivity{Entries: []actors.ActivityEntry{
		{KeyID: "k1", Op: "GET /v1/me", Status: 200, Count: 1, First: t0, Last: t0}}}}), 204)
	if st := tn.status(); st.AppliedFeatureVersion != 2 {
		t.Fatalf("after a RecordActivity the state relies on version %d", st.AppliedFeatureVersion)
	}
	if err := tn.node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	tn.close()
	tn = startNode(t, dir, addr)
	if st := tn.status(); st.AppliedFeatureVersion != 2 || st.Writes.CommandsApplied != 0 {
		t.Fatalf("restored: version %d after %d commands replayed", st.AppliedFeatureVersion, st.Writes.CommandsApplied)
	}
}
