package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// TestMain lets this test binary be read-ratios' bare server and the
// supervisor of watch's btcd, as the bench binary is (startBareServer
// runs os.Executable() bare-server; regtest.Start runs it as btcd). The
// bare server comes first: a read-ratios run after a watch run inherits
// the environment that makes a copy of this binary btcd's supervisor.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "bare-server" {
		os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	regtest.Supervise()
	code := regtest.Run(m)
	if builtServerDir != "" {
		os.RemoveAll(builtServerDir)
	}
	os.Exit(code)
}

// builtServer is addrwatchd built once for the package's tests (each
// link of it is seconds of CPU): its path, or why the build failed. It
// is built in builtServerDir, which TestMain removes.
var builtServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "bench-addrwatchd-")
	if err != nil {
		return "", err
	}
	builtServerDir = dir
	bin := filepath.Join(dir, "addrwatchd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/addrwatch/addrwatch/cmd/addrwatchd").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build addrwatchd: %v\n%s", err, out)
	}
	return bin, nil
})

var builtServerDir string

// buildServer returns the path of addrwatchd built for the package's
// tests; each runs it with data dirs of its own.
func buildServer(t *testing.T) string {
	t.Helper()
	bin, err := builtServer()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestEveryScenarioAgainstARealNode builds addrwatchd, starts one node
// with the spec's limits off, and runs every scenario for a moment through
// run(), as `go run ./bench all` would: each must finish with requests
// answered and no errors, and the JSON report must say so (site makes
// and signs in its own full accounts, and checks once that the panel shows
// everything in them). This is what
// keeps the scenarios, their set-up and their clean-up (auth-reads fills
// the portfolio, and agent-mix after it needs room) working against the
// server as it changes.
func TestEveryScenarioAgainstARealNode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	bin := buildServer(t)
	addrs, err := loopbackAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var serverLog bytes.Buffer
	srv := exec.Command(bin, "--limits", "off", "--data", data, "--http", addrs[0], "--admin", addrs[1], "--raft", addrs[2])
	srv.Stdout, srv.Stderr = &serverLog, &serverLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		if t.Failed() {
			t.Logf("addrwatchd log:\n%s", serverLog.String())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"--targets", "http://" + addrs[0], "--admin", "http://" + addrs[1], "--data", data,
		"-c", "4", "--duration", "700ms", "--json", "all"}
	if code := run(ctx, args, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("bench exited %d\n%s", code, stderr.String())
	}
	var rep jsonReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if len(rep.Scenarios) != len(scenarios) {
		t.Fatalf("%d scenarios reported, want %d", len(rep.Scenarios), len(scenarios))
	}
	for i, r := range rep.Scenarios {
		if r.Scenario != scenarios[i].name {
			t.Errorf("scenario %d is %q, want %q", i, r.Scenario, scenarios[i].name)
		}
		if r.Total.Requests == 0 || r.Total.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors %v", r.Scenario, r.Total.Requests, r.Total.Errors, r.Total.ErrorsBy)
		}
	}
	// The site scenario counts a refused session as an error: the real
	// site answers a session it does not know with a 303 to sign in.
	req := sitePanelRequest("http://"+addrs[0], &siteAccount{session: "awt.notasession"})
	var refused response
	newClient(1, 10*time.Second).do(&req, &refused)
	if f := refused.failure(); f != "303" {
		t.Errorf("a panel load with an unknown session: failure %q (status %d), want 303", f, refused.status)
	}
	// read-ratios: both reads against the bare server and the node, two
	// rounds, every pair's ratio and the medians; the bare server is this
	// test binary's bare-server command (TestMain).
	stdout.Reset()
	stderr.Reset()
	args = []string{"--targets", "http://" + addrs[0], "--admin", "http://" + addrs[1], "--data", data,
		"-c", "4", "--duration", "300ms", "--rounds", "2", "--json", "read-ratios"}
	if code := run(ctx, args, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("read-ratios exited %d\n%s", code, stderr.String())
	}
	rep = jsonReport{}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("read-ratios --json output: %v\n%s", err, stdout.String())
	}
	if len(rep.Scenarios) != 2*2*len(readRatioEndpoints) {
		t.Fatalf("read-ratios reported %d runs, want %d", len(rep.Scenarios), 2*2*len(readRatioEndpoints))
	}
	for _, r := range rep.Scenarios {
		if r.Total.Requests == 0 || r.Total.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors %v", r.Scenario, r.Total.Requests, r.Total.Errors, r.Total.ErrorsBy)
		}
	}
	for _, ep := range readRatioEndpoints {
		if !regexp.MustCompile(regexp.QuoteMeta(ep.name) + ` +median \d+\.\d\d× +rounds: \d+\.\d\d× \([\d,]+ ÷ [\d,]+\), \d+\.\d\d×`).MatchString(stderr.String()) {
			t.Errorf("read-ratios printed no median and rounds for %s:\n%s", ep.name, stderr.String())
		}
	}
	// agent-mix runs after auth-reads and creates Account cards, so its
	// clean run above also shows that auth-reads deleted the cards it
	// added to fill the portfolios. The node is still healthy.
	resp, err := http.Get("http://" + addrs[1] + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("node not ready after the run: %v %v", resp, err)
	}
	resp.Body.Close()
}
