package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startCluster starts n addrwatchd processes that bootstrap one raft
// cluster from the same --peers list; every node also gets extra.
func startCluster(t *testing.T, n int, extra ...string) []*server {
	t.Helper()
	return startClusterWith(t, n, func(int) []string { return extra })
}

// startClusterWith is startCluster with each node's own extra arguments
// (node i of 0..n-1).
func startClusterWith(t *testing.T, n int, extra func(i int) []string) []*server {
	t.Helper()
	nodes := newClusterNodes(t, n)
	launchCluster(t, nodes, extra)
	return nodes
}

// newClusterNodes gives n nodes their data dirs, ports and admin tokens
// without starting them, so that a test can prepare each (its binary, its
// environment) knowing every node's addresses; launchCluster starts them.
func newClusterNodes(t *testing.T, n int) []*server {
	t.Helper()
	nodes := make([]*server, n)
	for i := range nodes {
		s := &server{t: t, Dir: t.TempDir(), AdminToken: fmt.Sprintf("node-%d-admin-token", i+1)}
		s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
		s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
		nodes[i] = s
	}
	return nodes
}

// launchCluster starts nodes as one cluster bootstrapped from the same
// --peers list, node i with extra(i), and waits until every one serves.
// Unless extra(i) says how nodes talk, they get certificates of a CA made
// for the cluster (nodeCertArgs).
func launchCluster(t *testing.T, nodes []*server, extra func(i int) []string) {
	t.Helper()
	var peers []string
	for i, s := range nodes {
		peers = append(peers, fmt.Sprintf("n%d=%s", i+1, s.raftAddr))
	}
	certs := newCertDir(t)
	for i, s := range nodes {
		id, args := fmt.Sprintf("n%d", i+1), extra(i)
		if !choosesNodeTraffic(args) {
			args = append(nodeCertArgs(t, certs, id), args...)
		}
		s.certs = certs
		s.extra = append([]string{"--node-id", id, "--peers", strings.Join(peers, ",")}, args...)
		s.launch(s.extra...)
		t.Cleanup(s.stop)
	}
	for _, s := range nodes {
		s.waitReady()
	}
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
	var st clusterStatus
	adminStatus(t, s, &st)
	return st
}

// adminStatus decodes the node's GET /admin/v1/cluster into st.
func adminStatus(t *testing.T, s *server, st any) {
	t.Helper()
	r := do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	if err := json.Unmarshal(r.Body, st); err != nil {
		t.Fatal(err)
	}
}

// TestThreeNodeClusterForwardsAndFailsOver runs three nodes over mutual
// TLS, writes and reads through every node (the followers forward to the
// leader), kills the leader with SIGKILL, keeps writing through the
// survivors, restarts the dead node and checks that every node applies the
// same log and that no acknowledged write is lost.
func TestThreeNodeClusterForwardsAndFailsOver(t *testing.T) {
	t.Parallel()
	nodes := startTLSCluster(t, 3)
	leader := statusOf(t, nodes[0]).Leader
	if leader == "" {
		t.Fatal("no leader")
	}
	for i, s := range nodes {
		if !strings.Contains(s.logs.String(), "node-to-node traffic is mutual TLS") {
			t.Fatalf("n%d does not say it uses mutual TLS:\n%s", i+1, s.logs.String())
		}
	}
	// Each node has its own admin token: a forwarded admin request is
	// checked where it arrives, on every follower.
	var a account
	for _, s := range nodes {
		a = s.createAccount(t, "base")
		backup := do(t, "GET", s.AdminURL+"/admin/v1/backup", s.AdminToken, nil)
		expect(t, backup, http.StatusOK, "")
		if !bytes.HasPrefix(backup.Body, []byte("AWSNAP")) || !bytes.Contains(backup.Body, []byte(a.ID)) {
			t.Fatalf("backup through %s lacks the account just created", s.AdminURL)
		}
	}
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
	// Every follower has forwarded public requests (a write or the key)
	// and admin ones (an account, a backup): the public ones in frames
	// over one mutually authenticated connection, none one per
	// connection.
	_, followers := leaderAndFollowers(t, nodes)
	for _, f := range followers {
		m := do(t, "GET", f.AdminURL+"/metrics", f.AdminToken, nil)
		expect(t, m, http.StatusOK, "")
		body := string(m.Body)
		for _, want := range []string{`addrwatch_forwarded_requests_total{way="framed"}`, `addrwatch_forwarded_requests_total{way="admin"}`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: /metrics lacks %s", f.URL, want)
			}
		}
		if strings.Contains(body, `addrwatch_forwarded_requests_total{way="public"}`) {
			t.Errorf("%s forwarded public requests one per connection, not framed", f.URL)
		}
	}
	write(nodes[2], "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")

	// Profiles are about the node asked, never the leader: its command
	// line names it.
	for i, s := range nodes {
		r := do(t, "GET", s.AdminURL+"/debug/pprof/cmdline", s.AdminToken, nil)
		expect(t, r, http.StatusOK, "")
		if want := fmt.Sprintf("--node-id\x00n%d\x00", i+1); !strings.Contains(string(r.Body), want) {
			t.Errorf("node n%d profiles another node: cmdline %q", i+1, r.Body)
		}
	}

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

// TestBackupRestoresIntoANewCluster takes a backup from one server and
// restores it into a fresh one: the account, its key and its cards are
// all there.
func TestBackupRestoresIntoANewCluster(t *testing.T) {
	t.Parallel()
	old := startServer(t)
	a := old.createAccount(t, "base")
	key := old.createKey(t, a, "write")
	r := do(t, "POST", old.URL+"/v1/portfolio/cards", key, map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "name": "kept"})
	expect(t, r, http.StatusCreated, "")
	cardID := r.JSON(t)["card"].(map[string]any)["id"].(string)
	backup := do(t, "GET", old.AdminURL+"/admin/v1/backup", old.AdminToken, nil)
	expect(t, backup, http.StatusOK, "")
	if len(backup.Body) < 100 || string(backup.Body[:6]) != "AWSNAP" {
		t.Fatalf("backup is %d bytes starting %q", len(backup.Body), backup.Body[:min(6, len(backup.Body))])
	}

	fresh := startServer(t)
	expect(t, do(t, "GET", fresh.URL+"/v1/me", key, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	// A damaged file is refused and changes nothing.
	damaged := append([]byte{}, backup.Body...)
	damaged[len(damaged)/2] ^= 0xff
	expect(t, do(t, "POST", fresh.AdminURL+"/admin/v1/restore", fresh.AdminToken, damaged), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "POST", fresh.AdminURL+"/admin/v1/restore", fresh.AdminToken, backup.Body), http.StatusOK, "")
	r = do(t, "GET", fresh.URL+"/v1/portfolio/cards/"+cardID, key, nil)
	expect(t, r, http.StatusOK, "")
	if r.JSON(t)["card"].(map[string]any)["name"] != "kept" {
		t.Fatalf("restored card %s", r.Body)
	}
	// The restore survives a restart (it is in the new cluster's log and snapshots).
	fresh.stop()
	fresh.start()
	expect(t, do(t, "GET", fresh.URL+"/v1/portfolio/cards/"+cardID, key, nil), http.StatusOK, "")
}

// TestLeadershipTransferAndLinearizableReads moves leadership on request
// and serves a linearizable read through a follower.
func TestLeadershipTransferAndLinearizableReads(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	before := statusOf(t, nodes[0]).Leader
	target := "n1"
	if before == "n1" {
		target = "n2"
	}
	r := do(t, "POST", nodes[2].AdminURL+"/admin/v1/cluster/transfer", nodes[2].AdminToken, map[string]any{"id": target})
	expect(t, r, http.StatusOK, "")
	deadline := time.Now().Add(10 * time.Second)
	for statusOf(t, nodes[0]).Leader != target {
		if time.Now().After(deadline) {
			t.Fatalf("leader is %s, want %s", statusOf(t, nodes[0]).Leader, target)
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/transfer", nodes[0].AdminToken, map[string]any{"id": "nope"}), http.StatusNotFound, "NOT_FOUND")
	a := nodes[1].createAccount(t, "base")
	key := nodes[1].createKey(t, a, "read")
	for _, s := range nodes {
		r := do(t, "GET", s.URL+"/v1/me", key, nil, "X-Addrwatch-Read-Consistency", "linearizable")
		expect(t, r, http.StatusOK, "")
	}
}
