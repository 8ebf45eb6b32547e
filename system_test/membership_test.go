package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAddNodeTypoKeepsTheCluster is the request that stopped a one-node
// cluster for good: {"id":"n9","raft_addr":"not-an-addr"} answered 200 and
// made n9 a voter, after which every request, the DELETE of n9 included,
// was a 503, even after a restart. Now a bad address or id is a 422
// VALIDATION, and a good one joins as a non-voter that the cluster does
// not need for its quorum.
func TestAddNodeTypoKeepsTheCluster(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	nodes := s.AdminURL + "/admin/v1/cluster/nodes"
	for _, body := range []map[string]any{
		{"id": "n9", "raft_addr": "not-an-addr"},
		{"id": "n9", "raft_addr": "127.0.0.1:0"},
		{"id": "n9", "raft_addr": "0.0.0.0:7009"},
		{"id": "n 9", "raft_addr": "127.0.0.1:7009"},
		{"id": "../n9", "raft_addr": "127.0.0.1:7009"},
	} {
		r := do(t, "POST", nodes, s.AdminToken, body)
		expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
	}
	s.createAccount(t, "base")
	if got := statusOf(t, s).Nodes; len(got) != 1 {
		t.Fatalf("a refused add changed the cluster: %+v", got)
	}

	// Nothing listens at port 1: n9 never answers.
	r := do(t, "POST", nodes, s.AdminToken, map[string]any{"id": "n9", "raft_addr": "127.0.0.1:1"})
	expect(t, r, http.StatusOK, "")
	if m := r.JSON(t); m["id"] != "n9" || m["raft_addr"] != "127.0.0.1:1" || m["suffrage"] != "nonvoter" {
		t.Fatalf("added %s, want n9 as a non-voter", r.Body)
	}
	s.createAccount(t, "base")
	r = do(t, "POST", nodes, s.AdminToken, map[string]any{"id": "n9", "raft_addr": "127.0.0.1:2"})
	expect(t, r, http.StatusConflict, "CONFLICT")
	s.stop()
	s.start()
	s.createAccount(t, "base")
	expect(t, do(t, "DELETE", nodes+"/n9", s.AdminToken, nil), http.StatusNoContent, "")
	expect(t, do(t, "DELETE", nodes+"/n9", s.AdminToken, nil), http.StatusNotFound, "NOT_FOUND")
	r = do(t, "DELETE", nodes+"/"+statusOf(t, s).Leader, s.AdminToken, nil)
	expect(t, r, http.StatusConflict, "CONFLICT")
	if msg := r.JSON(t)["error"].(string); !strings.Contains(msg, "would leave no voter") {
		t.Fatalf("removing the only voter: %s", msg)
	}
}

// answering is whether the leader reports node id as answering it.
func answering(t *testing.T, leader *server, id string) bool {
	t.Helper()
	r := do(t, "GET", leader.AdminURL+"/admin/v1/cluster", leader.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	var st struct {
		Nodes []struct {
			ID        string `json:"id"`
			Answering *bool  `json:"answering"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(r.Body, &st); err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Nodes {
		if n.ID == id {
			return n.Answering != nil && *n.Answering
		}
	}
	t.Fatalf("the leader does not list %s: %s", id, r.Body)
	return false
}

// TestClusterRecoverAfterLostQuorum: of three nodes, one is killed for
// good; the leader then refuses to remove a second one (which would leave
// two voters, one of them dead). The second is killed too, and the
// survivor cannot commit. 'addrwatch cluster recover' refuses while the
// survivor runs, rewrites its configuration once it is stopped, and the
// survivor starts alone and serves every acknowledged write.
func TestClusterRecoverAfterLostQuorum(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	idOf := func(s *server) string { return s.extra[1] }
	leaderID := idOf(leader)

	a := leader.createAccount(t, "base")
	key := leader.createKey(t, a, "write")
	var cards []string
	addCard := func(addr string) {
		t.Helper()
		r := do(t, "POST", leader.URL+"/v1/portfolio/cards", key, map[string]any{"address": addr})
		expect(t, r, http.StatusCreated, "")
		cards = append(cards, r.JSON(t)["card"].(map[string]any)["id"].(string))
	}
	addCard("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")

	dead, other := followers[0], followers[1]
	dead.kill()
	deadline := time.Now().Add(15 * time.Second)
	for answering(t, leader, idOf(dead)) {
		if time.Now().After(deadline) {
			t.Fatalf("the leader still sees the killed %s answering", idOf(dead))
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := do(t, "DELETE", leader.AdminURL+"/admin/v1/cluster/nodes/"+idOf(other), leader.AdminToken, nil)
	expect(t, r, http.StatusConflict, "CONFLICT")
	if msg := r.JSON(t)["error"].(string); !strings.Contains(msg, "not answering: "+idOf(dead)) {
		t.Fatalf("the refusal does not name the dead node: %s", msg)
	}
	addCard("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy") // two of three still commit

	other.kill()
	deadline = time.Now().Add(15 * time.Second)
	for {
		r := do(t, "POST", leader.URL+"/v1/portfolio/cards", key, map[string]any{"address": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"})
		if r.Status == http.StatusServiceUnavailable {
			break // no quorum: the survivor has stepped down
		}
		if r.Status == http.StatusCreated {
			cards = append(cards, r.JSON(t)["card"].(map[string]any)["id"].(string))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the survivor still commits alone: %d %s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}

	recoverArgs := []string{"cluster", "recover", "--data", leader.Dir, "--node-id", leaderID}
	if got := owCLI(t, nil, recoverArgs...); got.code != 1 || !strings.Contains(got.stderr, "stop the node first") {
		t.Fatalf("recover on a running node: exit %d\nstdout: %s\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	leader.stop()
	got := owCLIOK(t, nil, recoverArgs...)
	for _, want := range []string{"recovered " + leader.Dir, "now:     " + leaderID + " " + leader.raftAddr + " (voter)\n",
		"Do not start " + idOf(dead) + ", " + idOf(other) + " on the old data"} {
		if !strings.Contains(got.stdout+got.stderr, want) {
			t.Errorf("recover output lacks %q:\n%s%s", want, got.stdout, got.stderr)
		}
	}

	leader.start(leader.extra...)
	for _, id := range cards {
		expect(t, do(t, "GET", leader.URL+"/v1/portfolio/cards/"+id, key, nil), http.StatusOK, "")
	}
	addCard("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
	if st := statusOf(t, leader); len(st.Nodes) != 1 || st.Leader != leaderID {
		t.Fatalf("after recovery: %+v", st)
	}
}

// TestJoinedNodesBecomeVoters grows a one-node cluster to three the way
// the README says (start each new node with --join, add it from any node)
// and checks that the leader promotes each new node by itself once it has
// caught up: with the first node killed, the two that joined still make a
// quorum, elect a leader and serve every acknowledged write.
func TestJoinedNodesBecomeVoters(t *testing.T) {
	t.Parallel()
	first := &server{t: t, Dir: t.TempDir(), AdminToken: "join-admin-token-1"}
	first.httpAddr, first.adminAddr, first.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	first.URL, first.AdminURL = "http://"+first.httpAddr, "http://"+first.adminAddr
	first.extra = []string{"--node-id", "n1"}
	first.start(first.extra...)
	t.Cleanup(first.stop)
	a := first.createAccount(t, "base")
	key := first.createKey(t, a, "write")
	r := do(t, "POST", first.URL+"/v1/portfolio/cards", key, map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"})
	expect(t, r, http.StatusCreated, "")
	card := r.JSON(t)["card"].(map[string]any)["id"].(string)

	joined := make([]*server, 2)
	for i := range joined {
		s := &server{t: t, Dir: t.TempDir(), AdminToken: fmt.Sprintf("join-admin-token-%d", i+2)}
		s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
		s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
		// A cluster grown from one node uses the CA the first node made in
		// its data dir, as the README says.
		id := fmt.Sprintf("n%d", i+2)
		s.extra = append([]string{"--node-id", id, "--join"}, nodeCertArgs(t, filepath.Join(first.Dir, "cluster-tls"), id)...)
		s.launch(s.extra...)
		t.Cleanup(s.stop)
		joined[i] = s
		r := do(t, "POST", first.AdminURL+"/admin/v1/cluster/nodes", first.AdminToken, map[string]any{"id": s.extra[1], "raft_addr": s.raftAddr})
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t)["suffrage"]; got != "nonvoter" {
			t.Fatalf("added %s as %v, want a non-voter until it has caught up", s.extra[1], got)
		}
		// The first joiner is a voter before the second is added, or the
		// second would need the first to vote for its own promotion.
		deadline := time.Now().Add(20 * time.Second)
		for stateOf(t, first, s.extra[1]) != "follower" {
			if time.Now().After(deadline) {
				t.Fatalf("%s not promoted after 20s: %+v", s.extra[1], statusOf(t, first).Nodes)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	first.kill()
	for _, s := range joined {
		s.waitReady()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := do(t, "GET", joined[0].URL+"/v1/portfolio/cards/"+card, key, nil)
		if r.Status == http.StatusOK {
			break
		}
		if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the first node died, the joined nodes answer %d %s", r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stateOf is node id's state as s reports it ("leader", "follower",
// "nonvoter").
func stateOf(t *testing.T, s *server, id string) string {
	t.Helper()
	for _, n := range statusOf(t, s).Nodes {
		if n.ID == id {
			return n.State
		}
	}
	return ""
}
