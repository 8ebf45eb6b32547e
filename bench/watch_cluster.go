package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

// serverStopWait is how long a stopped addrwatchd may take to exit
// before it is killed.
const serverStopWait = 10 * time.Second

// nodeReadyWait bounds how long a node started or restarted may take to
// serve: a restart replays its log since the last snapshot.
const nodeReadyWait = 2 * time.Minute

// watchCluster is the addrwatchd nodes bench watch starts (--nodes): one
// raft cluster with --limits off, each node on a data dir and free
// loopback ports of its own, all following one source of the regtest
// node's chain (--source) and sharing one admin token. One node is the embedded one-voter default;
// more are bootstrapped together from one --peers list, with
// certificates of a CA made for the run.
type watchCluster struct {
	nodes []*watchNode
	next  atomic.Uint64 // round robin over the nodes up, for reads
}

// watchNode is one addrwatchd of the cluster. It may be killed and
// started again on the same data dir and ports.
type watchNode struct {
	id     string // its raft id, as the cluster status names the leader
	public string // its public listener, http://127.0.0.1:PORT
	admin  string // its admin listener
	log    string // the file its output goes to, across restarts
	bin    string
	args   []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	up     bool // started and not killed or stopped since
}

// startWatchCluster starts --nodes nodes of --server under dir, each
// with extra arguments besides the common ones, and waits until each is
// ready. It points cfg's admin URL at the leader, its targets at every
// node, and sets the admin token the nodes share.
func startWatchCluster(ctx context.Context, cfg *config, c *client, src *watchSource, dir string, extra []string, stderr io.Writer) (*watchCluster, error) {
	bin := cfg.watch.server
	if info, err := os.Stat(bin); err != nil || info.IsDir() {
		return nil, fmt.Errorf("no addrwatchd binary at --server %s: run `make build`, or name it with --server", bin)
	}
	cert := filepath.Join(dir, src.name+".cert")
	if err := os.WriteFile(cert, src.cert, 0o600); err != nil {
		return nil, err
	}
	if cfg.adminToken == "" {
		cfg.adminToken = randomHex(16)
	}
	n := cfg.watch.nodes
	addrs, err := loopbackAddrs(3 * n)
	if err != nil {
		return nil, err
	}
	common := []string{"--limits", "off", "--network", "regtest", "--admin-token", cfg.adminToken,
		"--chain", src.spec, "--chain-cert", cert, "--chain-poll", cfg.watch.chainPoll.String()}
	common = append(common, extra...)
	var peers []string
	var certNodes []nodecert.Node
	for i := range n {
		peers = append(peers, fmt.Sprintf("n%d=%s", i+1, addrs[3*i+2]))
		certNodes = append(certNodes, nodecert.Node{ID: fmt.Sprintf("n%d", i+1)})
	}
	certs := filepath.Join(dir, "certs")
	if n > 1 {
		// A node left to itself makes its own CA, which the others would
		// not trust.
		if _, err := nodecert.Issue(certs, certNodes); err != nil {
			return nil, fmt.Errorf("cluster certificates: %w", err)
		}
	}
	wc := &watchCluster{}
	for i := range n {
		id := fmt.Sprintf("n%d", i+1)
		s := &watchNode{id: id, public: "http://" + addrs[3*i], admin: "http://" + addrs[3*i+1],
			log: filepath.Join(dir, id+".log"), bin: bin}
		s.args = append(append([]string{}, common...), "--data", filepath.Join(dir, id),
			"--http", addrs[3*i], "--admin", addrs[3*i+1], "--raft", addrs[3*i+2])
		if n > 1 {
			s.args = append(s.args, "--node-id", id, "--peers", strings.Join(peers, ","),
				"--cluster-ca", filepath.Join(certs, nodecert.CAFile),
				"--cluster-cert", filepath.Join(certs, nodecert.CertFile(id)), "--cluster-key", filepath.Join(certs, nodecert.KeyFile(id)))
		} else {
			s.id = "node1" // the server's default --node-id
		}
		wc.nodes = append(wc.nodes, s)
		if err := s.start(ctx); err != nil {
			wc.stop()
			return nil, err
		}
	}
	for _, s := range wc.nodes {
		if err := s.waitReady(ctx, c, nodeReadyWait); err != nil {
			wc.stop()
			return nil, fmt.Errorf("%w\n%s", err, wc.logTail())
		}
	}
	cfg.targets, cfg.data = nil, filepath.Join(dir, wc.nodes[0].id)
	for _, s := range wc.nodes {
		cfg.targets = append(cfg.targets, s.public)
	}
	if _, err := wc.leader(ctx, c, cfg); err != nil {
		wc.stop()
		return nil, fmt.Errorf("%w\n%s", err, wc.logTail())
	}
	fmt.Fprintf(stderr, "%s: %d × %s following %s, --chain-poll %s, on %s (leader's admin %s), logs in %s\n",
		cfg.command, n, bin, src.name, cfg.watch.chainPoll, strings.Join(cfg.targets, " "), cfg.admin, dir)
	return wc, nil
}

// start starts the node's process, its output appended to its log.
func (s *watchNode) start(ctx context.Context) error {
	out, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close() // the child holds its own descriptor
	cmd := exec.CommandContext(ctx, s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited, s.up = cmd, exited, true
	s.mu.Unlock()
	return nil
}

// isUp reports whether the node was started and not killed since.
func (s *watchNode) isUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

// waitReady waits until the node's /readyz answers 200: it knows a
// leader that serves.
func (s *watchNode) waitReady(ctx context.Context, c *client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := c.call("GET", s.admin+"/readyz", "", nil, 200, nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not ready after %s: %v", s.id, limit, err)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// kill ends the node with SIGKILL, as a crash would: nothing is flushed
// or handed over.
func (s *watchNode) kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.up = false
	s.mu.Unlock()
	_ = cmd.Process.Kill()
	<-exited
}

// stop interrupts the node and waits for it, killing it if it lingers.
func (s *watchNode) stop() {
	s.mu.Lock()
	cmd, exited, up := s.cmd, s.exited, s.up
	s.up = false
	s.mu.Unlock()
	if cmd == nil || !up {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(serverStopWait):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func (wc *watchCluster) stop() {
	for _, s := range wc.nodes {
		s.stop()
	}
}

// public is a public listener of a node that is up, another each call,
// so that reads go through every node (a follower forwards them to the
// leader).
func (wc *watchCluster) public() string {
	for range len(wc.nodes) {
		s := wc.nodes[wc.next.Add(1)%uint64(len(wc.nodes))]
		if s.isUp() {
			return s.public
		}
	}
	return wc.nodes[0].public
}

// leader finds the node the others name as the raft leader, waiting up
// to nodeReadyWait through an election, and points cfg's admin URL at
// it: the follower runs there, and its counts and CPU are the ones to
// read.
func (wc *watchCluster) leader(ctx context.Context, c *client, cfg *config) (*watchNode, error) {
	deadline := time.Now().Add(nodeReadyWait)
	for {
		for _, s := range wc.nodes {
			if !s.isUp() {
				continue
			}
			var st struct {
				Leader string `json:"leader"`
			}
			if err := c.call("GET", s.admin+"/admin/v1/cluster", cfg.adminToken, nil, 200, &st); err != nil {
				continue
			}
			for _, l := range wc.nodes {
				if l.id == st.Leader && l.isUp() {
					cfg.admin = l.admin
					return l, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no node named a leader that is up within %s", nodeReadyWait)
		}
		if err := sleepCtx(ctx, followerReadInterval); err != nil {
			return nil, err
		}
	}
}

// logTail is the last lines of every node's log, for an error message.
func (wc *watchCluster) logTail() string {
	var b strings.Builder
	for _, s := range wc.nodes {
		out, err := os.ReadFile(s.log)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		fmt.Fprintf(&b, "node %s's log (%s) ends:\n%s\n", s.id, s.log, strings.Join(lines[max(0, len(lines)-20):], "\n"))
	}
	return b.String()
}

// metricReading is one node's value of a metric, if it could be read.
type metricReading struct {
	value float64
	read  bool
}

// metric reads an unlabelled metric of every node, in node order.
func (wc *watchCluster) metric(c *client, cfg *config, name string) []metricReading {
	out := make([]metricReading, len(wc.nodes))
	for i, s := range wc.nodes {
		at := *cfg
		at.admin = s.admin
		out[i].value, out[i].read = adminMetric(c, &at, name)
	}
	return out
}
