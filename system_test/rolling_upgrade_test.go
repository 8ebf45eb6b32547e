package system_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// The rolling upgrade (cluster/versions.go): a three-node cluster of the
// older release, under the fault test's load, has its nodes replaced by the
// new release one at a time. No acknowledged write may be lost, the history
// must be linearizable (porcupine), no node may stop, and the command kinds
// the new release adds over version 1 (RecordActivity, feature version 2,
// and RecordKeyActivity, version 3, which the test sees; ImportLabels, 3;
// the follower's ObserveAddress, 4, and ObserveChain, 5) must stay out of
// the log until the last node runs the new release, then work. The
// leader then reports every node at currentFeatureVersion.

// olderRelease builds addrwatchd as the older release: the same code
// linked to support only feature version 1, so it refuses the later
// versions' commands and snapshots as a release from before them would.
func olderRelease(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "addrwatchd-v1")
	out, err := exec.Command("go", "build", "-ldflags", "-X github.com/addrwatch/addrwatch/actors.featureVersionOverride=1", "-o", bin, "github.com/addrwatch/addrwatch/cmd/addrwatchd").CombinedOutput()
	if err != nil {
		t.Fatalf("build the older release: %v\n%s", err, out)
	}
	return bin
}

// currentFeatureVersion is the version of the release under test.
const currentFeatureVersion = int(actors.CurrentFeatureVersion)

// upgradeStatus is what the rolling upgrade reads of /admin/v1/cluster.
type upgradeStatus struct {
	FeatureVersion int `json:"feature_version"`
	Nodes          []struct {
		ID             string `json:"id"`
		FeatureVersion int    `json:"feature_version"`
	} `json:"nodes"`
}

func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and restarts server processes")
	}
	t.Parallel()
	old := olderRelease(t)
	nodes := newClusterNodes(t, 3)
	for _, s := range nodes {
		s.binary = old
	}
	launchCluster(t, nodes, func(int) []string { return nil })
	ftKeepLogsOnFailure(t, nodes)
	regs := ftSetup(t, nodes)
	watched := nodes[0].createAccount(t, "base")
	agent := nodes[0].createKey(t, watched, "read")

	rec := &ftRecorder{start: time.Now()}
	hc := ftHTTPClient()
	stopLoad := ftStartLoad(t, nodes, regs, rec, hc)

	// activityLines asks the owner API for the watched account's activity
	// through any node that answers.
	activityLines := func() int {
		for _, s := range nodes {
			r := do(t, "GET", s.URL+"/owner/v1/activity", watched.OwnerSecret, nil)
			if r.Status == http.StatusOK {
				return len(r.JSON(t)["entries"].([]any))
			}
		}
		t.Fatal("no node answered the activity read")
		return 0
	}
	// agentActs makes the watched account's agent read through every node.
	agentActs := func() {
		for _, s := range nodes {
			do(t, "GET", s.URL+"/v1/me", agent, nil)
		}
	}

	time.Sleep(2 * time.Second) // load on the old cluster
	for i, s := range nodes {
		agentActs()
		time.Sleep(2500 * time.Millisecond) // past an activity flush
		if n := activityLines(); n != 0 {
			t.Fatalf("with %d of 3 nodes upgraded, %d activity lines entered the log", i, n)
		}
		t.Logf("upgrading n%d (acknowledged writes so far: %d)", i+1, rec.stats().acked)
		s.stop()
		s.binary = serverBinary
		s.start(s.extra...)
		time.Sleep(2 * time.Second) // load with the mixed cluster
	}

	// Every node runs the new release: the leader learns it within a
	// second, and the agent's requests are recorded again.
	deadline := time.Now().Add(20 * time.Second)
	for activityLines() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("activity is still not recorded 20 s after the last node was upgraded")
		}
		agentActs()
		time.Sleep(500 * time.Millisecond)
	}
	stopLoad()

	for _, s := range nodes {
		select {
		case <-s.exited:
			t.Fatalf("%s stopped:\n%s", s.AdminURL, s.logs.String())
		default:
		}
		if strings.Contains(s.logs.String(), "panic") {
			t.Fatalf("%s panicked:\n%s", s.AdminURL, s.logs.String())
		}
	}
	var st upgradeStatus
	for _, s := range nodes {
		r := do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["state"] == "leader" {
			st = upgradeStatus{}
			if err := json.Unmarshal(r.Body, &st); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range st.Nodes {
		if n.FeatureVersion != currentFeatureVersion {
			t.Errorf("the leader reports %s at feature version %d, want %d: %+v", n.ID, n.FeatureVersion, currentFeatureVersion, st)
		}
	}

	ftWaitConverged(t, nodes, "after the upgrade")
	finals := ftReadOnEveryLeader(t, nodes, regs, rec, hc)
	lost := ftCheckAcknowledged(t, regs, rec, finals)
	ftCheckStaleAnswers(t, rec)
	ops := rec.operations()
	stale := ftCheckStaleReads(t, ops, &ftFaults{})
	result, took, vis := ftCheckLinearizable(t, ftWithout(ops, stale))
	s := rec.stats()
	t.Logf("rolling upgrade of 3 nodes from feature version 1 to %d under load (%d clients): %d writes acknowledged, %d unknown outcome, %d stale (409); %d reads", currentFeatureVersion, ftClientCount, s.acked, s.unknown, s.stale, s.reads)
	t.Logf("  lost acknowledged writes: %d; linearizability (porcupine, %d operations): %s in %s%s", lost, len(ops)-len(stale), result, took.Round(time.Millisecond), vis)
}
