package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestLogVerificationOnEveryNode starts three real nodes and expects each
// to verify its log against the leader's checkpoints: the barrier a new
// leader writes is the first checkpoint, so every node's
// GET /admin/v1/cluster soon shows a verified range and no failure, and
// its /metrics the matching counters. (Damage to one node's log is
// tested in cluster/, where a test can reach beneath the verifier.)
func TestLogVerificationOnEveryNode(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	deadline := time.Now().Add(20 * time.Second)
	for i, s := range nodes {
		for {
			v := logVerificationOf(t, s)
			if v.Failures != 0 || v.LastFailure != nil {
				t.Fatalf("node %d reports a failed verification on an intact log: %+v", i+1, v)
			}
			if v.CheckpointsVerified >= 1 && v.LastVerifiedIndex >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d has verified no checkpoint: %+v", i+1, v)
			}
			time.Sleep(50 * time.Millisecond)
		}
		r := do(t, "GET", s.AdminURL+"/metrics", s.AdminToken, nil)
		expect(t, r, http.StatusOK, "")
		if got := metricOf(t, r.Body, "addrwatch_raft_log_verify_failures_total"); got != 0 {
			t.Errorf("node %d: addrwatch_raft_log_verify_failures_total %v, want 0", i+1, got)
		}
		if got := metricOf(t, r.Body, "addrwatch_raft_log_verify_checkpoints_total"); got < 1 {
			t.Errorf("node %d: addrwatch_raft_log_verify_checkpoints_total %v, want at least 1", i+1, got)
		}
	}
}

type logVerification struct {
	CheckpointsVerified uint64          `json:"checkpoints_verified"`
	LastVerifiedIndex   uint64          `json:"last_verified_index"`
	Failures            uint64          `json:"failures"`
	LastFailure         json.RawMessage `json:"last_failure"`
}

func logVerificationOf(t *testing.T, s *server) logVerification {
	t.Helper()
	r := do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	var st struct {
		LogVerification *logVerification `json:"log_verification"`
	}
	if err := json.Unmarshal(r.Body, &st); err != nil {
		t.Fatal(err)
	}
	if st.LogVerification == nil {
		t.Fatalf("no log_verification in the cluster status: %s", r.Body)
	}
	return *st.LogVerification
}

// metricOf returns the value of an unlabelled metric in a /metrics body.
func metricOf(t *testing.T, body []byte, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in /metrics", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", name, err))
	}
	return v
}
