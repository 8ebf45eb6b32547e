package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// serverStopWait is how long a stopped addrwatchd may take to exit
// before it is killed.
const serverStopWait = 10 * time.Second

// watchServer is the one addrwatchd bench watch starts: --limits off, on
// a data dir and free loopback ports of its own, following the regtest
// node's btcd. Its admin URL and token are in the run's config, so the
// setup helpers that read them reach it.
type watchServer struct {
	cmd    *exec.Cmd
	public string // its public listener, http://127.0.0.1:PORT
	log    string // the file its output goes to
}

// startWatchServer starts --server in dir and waits until it is ready.
func startWatchServer(ctx context.Context, cfg *config, c *client, rpc regtest.RPC, dir string, stderr io.Writer) (*watchServer, error) {
	bin := cfg.watch.server
	if info, err := os.Stat(bin); err != nil || info.IsDir() {
		return nil, fmt.Errorf("no addrwatchd binary at --server %s: run `make build`, or name it with --server", bin)
	}
	cert := filepath.Join(dir, "btcd-rpc.cert")
	if err := os.WriteFile(cert, rpc.Cert, 0o600); err != nil {
		return nil, err
	}
	addrs, err := loopbackAddrs(3)
	if err != nil {
		return nil, err
	}
	s := &watchServer{public: "http://" + addrs[0], log: filepath.Join(dir, "addrwatchd.log")}
	out, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child holds its own descriptor
	data := filepath.Join(dir, "data")
	s.cmd = exec.CommandContext(ctx, bin, "--limits", "off", "--network", "regtest",
		"--chain", "btcd:"+rpc.URL().String(), "--chain-cert", cert, "--chain-poll", cfg.watch.chainPoll.String(),
		"--data", data, "--http", addrs[0], "--admin", addrs[1], "--raft", addrs[2])
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	cfg.admin, cfg.targets, cfg.data = "http://"+addrs[1], []string{s.public}, data
	if err := waitReady(c, cfg, stderr); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w\n%s", err, s.logTail())
	}
	if err := loadAdminToken(cfg); err != nil {
		s.stop()
		return nil, err
	}
	fmt.Fprintf(stderr, "watch: %s --chain-poll %s on %s (admin %s), log %s\n", bin, cfg.watch.chainPoll, s.public, cfg.admin, s.log)
	return s, nil
}

// stop interrupts the server and waits for it, killing it if it lingers.
func (s *watchServer) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(serverStopWait):
		_ = s.cmd.Process.Kill()
		<-exited
	}
}

// logTail is the last lines of the server's log, for an error message.
func (s *watchServer) logTail() string {
	b, err := os.ReadFile(s.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "addrwatchd's log ends:\n" + strings.Join(lines[max(0, len(lines)-20):], "\n")
}
