package system_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// forwardingSecret matches the forwarding secret that nodes used to keep in
// their replicated directory, and so in raft.db, every snapshot and every
// backup: "secret":"<32 random bytes in hex>".
var forwardingSecret = regexp.MustCompile(`"secret":"([0-9a-f]{64})"`)

// forwardedHeader is the header that used to mark a request as forwarded
// by another node when it carried the secret.
const forwardedHeader = "X-Addrwatch-Forwarded"

// TestForwardedHeaderGrantsNothing plays the holder of a backup: it reads
// the forwarding secret out of a backup file (where the old directory kept
// it) and sends it as X-Addrwatch-Forwarded without an admin token. Trust
// between nodes now comes from the node connection alone, so on every
// node's admin listener that is a plain 401, and on the public listener the
// header does not skip the edge rate limits. No file of a data dir and no
// backup holds a forwarding secret at all.
func TestForwardedHeaderGrantsNothing(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--limits", "spec")
	leader := leaderOf(t, nodes)
	backup := do(t, "GET", leader.AdminURL+"/admin/v1/backup", leader.AdminToken, nil)
	expect(t, backup, http.StatusOK, "")
	forged := strings.Repeat("5e", 32)
	if m := forwardingSecret.FindSubmatch(backup.Body); m != nil {
		forged = string(m[1])
		t.Errorf("the backup carries the forwarding secret %s…", forged[:8])
	}

	for i, s := range nodes {
		r := do(t, "POST", s.AdminURL+"/admin/v1/accounts", "", map[string]any{"plan": "base", "password": "correct horse battery"},
			forwardedHeader, forged)
		if r.Status != http.StatusUnauthorized {
			t.Errorf("n%d: POST /admin/v1/accounts with the secret and no token: %d %s, want 401", i+1, r.Status, r.Body)
		}
		r = do(t, "GET", s.AdminURL+"/admin/v1/backup", "", nil, forwardedHeader, forged)
		if r.Status != http.StatusUnauthorized {
			t.Errorf("n%d: GET /admin/v1/backup with the secret and no token: %d (%d bytes), want 401", i+1, r.Status, len(r.Body))
		}
	}
	// The regular budget is a burst of 20 per client on each node; the
	// header must not lift it.
	for i, s := range nodes {
		statuses := map[int]int{}
		for range 25 {
			statuses[do(t, "GET", s.URL+"/v1/me", "", nil, forwardedHeader, forged).Status]++
		}
		if statuses[http.StatusTooManyRequests] == 0 {
			t.Errorf("n%d: 25 requests with the secret were never rate limited: statuses %v", i+1, statuses)
		}
	}

	for i, s := range nodes {
		for _, path := range filesHolding(t, s.Dir, forwardingSecret) {
			t.Errorf("n%d: %s holds a forwarding secret", i+1, path)
		}
	}
}

// leaderOf returns the node the cluster reports as its leader.
func leaderOf(t *testing.T, nodes []*server) *server {
	t.Helper()
	id := statusOf(t, nodes[0]).Leader
	for i, s := range nodes {
		if id == "n"+string(rune('1'+i)) {
			return s
		}
	}
	t.Fatalf("no leader among the nodes (status names %q)", id)
	return nil
}

// leaderAndFollowers splits nodes into the leader the cluster reports and
// the others.
func leaderAndFollowers(t *testing.T, nodes []*server) (*server, []*server) {
	t.Helper()
	leader := leaderOf(t, nodes)
	var followers []*server
	for _, s := range nodes {
		if s != leader {
			followers = append(followers, s)
		}
	}
	return leader, followers
}

// filesHolding lists the regular files under dir whose bytes match re.
func filesHolding(t *testing.T, dir string, re *regexp.Regexp) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if re.Match(b) || re.Match(bytes.ReplaceAll(b, []byte(`\"`), []byte(`"`))) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return found
}

// startTLSCluster starts n nodes that talk mutual TLS, with certificates
// made by addrwatch cluster certs.
func startTLSCluster(t *testing.T, n int, extra ...string) []*server {
	t.Helper()
	return startClusterWith(t, n, clusterTLSArgs(t, n, extra...))
}

// clusterTLSArgs makes a cluster CA and certificates for nodes n1..nn with
// addrwatch cluster certs and returns each node's --cluster-* arguments,
// followed by extra.
func clusterTLSArgs(t *testing.T, n int, extra ...string) func(i int) []string {
	t.Helper()
	certs := filepath.Join(t.TempDir(), "certs")
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("n%d", i+1))
	}
	if r := owCLI(t, nil, "cluster", "certs", "--out", certs, "--nodes", strings.Join(ids, ",")); r.code != 0 {
		t.Fatalf("addrwatch cluster certs: exit %d\n%s", r.code, r.stderr)
	}
	return func(i int) []string {
		return append([]string{"--cluster-ca", filepath.Join(certs, "ca.crt"),
			"--cluster-cert", filepath.Join(certs, ids[i]+".crt"), "--cluster-key", filepath.Join(certs, ids[i]+".key")}, extra...)
	}
}

// TestInsecureClusterSaysWhatItGivesUp: --insecure-cluster lets a node
// with peers start without cluster certificates, over plain TCP, and the
// log says what that gives up (TestNodeWithPeersNeedsClusterCerts is the
// same node without it).
func TestInsecureClusterSaysWhatItGivesUp(t *testing.T) {
	t.Parallel()
	s := &server{t: t, Dir: t.TempDir(), AdminToken: "insecure-cluster-token"}
	s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
	s.launch("--node-id", "n1", "--peers", "n1="+s.raftAddr+",n2=192.0.2.10:7000", "--insecure-cluster")
	t.Cleanup(s.stop)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.logs.String(), "level=WARN msg=\"--insecure-cluster: node-to-node traffic is plain") {
		select {
		case <-s.exited:
			t.Fatalf("addrwatchd --insecure-cluster exited:\n%s", s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warning about --insecure-cluster:\n%s", s.logs.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}
