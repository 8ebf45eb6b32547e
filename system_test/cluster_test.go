package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startCluster starts n addrwatchd processes that bootstrap one raft
// cluster from the same --peers list.
func startCluster(t *testing.T, n int) []*server {
	t.Helper()
	nodes := make([]*server, n)
	var peers []string
	for i := range nodes {
		s := &server{t: t, Dir: t.TempDir(), AdminToken: fmt.Sprintf("node-%d-admin-token", i+1)}
		s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
		s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
		nodes[i] = s
		peers = append(peers, fmt.Sprintf("n%d=%s", i+1, s.raftAddr))
	}
	for i, s := range nodes {
		s.extra = []string{"--node-id", fmt.Sprintf("n%d", i+1), "--peers", strings.Join(peers, ",")}
		s.launch(s.extra...)
		t.Cleanup(s.stop)
	}
	for _, s := range nodes {
		s.waitReady()
	}
	return nodes
}

type clusterStatus struct {
	Leader       string `json:"leader"`
	AppliedIndex uint64 `json:"applied_index"`
	Nodes        []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	} `json:"nodes"`
}

func statusOf(t *testing.T, s *server) clusterStatus {
	t.Helper()
	r := do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	var st clusterStatus
	if err := json.Unmarshal(r.Body, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestThreeNodeClusterForwardsAndFailsOver writes through every node (the
// followers forward to the leader), kills the leader with SIGKILL, keeps
// writing through the survivors, restarts the dead node and checks that
// every node applies the same log and that no acknowledged write is lost.
func TestThreeNodeClusterForwardsAndFailsOver(t *testing.T) {
	nodes := startCluster(t, 3)
	leader := statusOf(t, nodes[0]).Leader
	if leader == "" {
		t.Fatal("no leader")
	}
	// Each node has its own admin token: a forwarded admin request is
	// checked where it arrives.
	a := nodes[1].createAccount(t, "base")
	key := nodes[2].createKey(t, a, "write")
	var acked []string
	// write retries a 503 (no leader yet, or an outcome the follower could
	// not learn) the way a client should: with the same Idempotency-Key,
	// so a write that did apply is not applied twice.
	write := func(via *server, addr string) {
		t.Helper()
		token := "cluster-test-" + addr
		deadline := time.Now().Add(15 * time.Second)
		for {
			r := do(t, "POST", via.URL+"/v1/portfolio/cards", key, map[string]any{"address": addr}, "Idempotency-Key", token)
			if r.Status == http.StatusServiceUnavailable && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			expect(t, r, http.StatusCreated, "")
			acked = append(acked, r.JSON(t)["card"].(map[string]any)["id"].(string))
			return
		}
	}
	write(nodes[0], "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")
	write(nodes[1], "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy")
	write(nodes[2], "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")

	var dead *server
	var survivors []*server
	for i, s := range nodes {
		if fmt.Sprintf("n%d", i+1) == leader {
			dead = s
		} else {
			survivors = append(survivors, s)
		}
	}
	dead.kill()
	// The first write after the kill waits for the new leader.
	write(survivors[0], "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
	write(survivors[1], "3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6")
	if now := statusOf(t, survivors[0]).Leader; now == leader || now == "" {
		t.Fatalf("leader after the kill: %q", now)
	}

	dead.start(dead.extra...)
	for _, s := range nodes {
		for _, id := range acked {
			expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, key, nil), http.StatusOK, "")
		}
	}
	// Every node reaches the same applied index.
	deadline := time.Now().Add(15 * time.Second)
	for {
		indexes := map[uint64]bool{}
		for _, s := range nodes {
			indexes[statusOf(t, s).AppliedIndex] = true
		}
		if len(indexes) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes never converged: applied indexes %v", indexes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
