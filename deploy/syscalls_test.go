package deploy

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readyWaitMax bounds how long the server under strace may take to
// serve; it is a deadline for a hung start, not a speed assert.
const readyWaitMax = 60 * time.Second

// TestServiceSyscallFilterAllowsWhatTheServerCalls runs the server under
// strace, on each raft log store (the WAL of a new data dir, and bolt,
// which mmaps its file), through a start with a demo account (writes
// committed through raft), a scrape of /metrics (the process collector
// reads /proc) and a SIGTERM, and checks that every system call it made
// is one the unit's SystemCallFilter= lines allow. systemd cannot run
// here, so this is what shows the filter does not refuse the server
// something (with SystemCallErrorNumber=EPERM a refused call fails
// quietly rather than killing it).
func TestServiceSyscallFilterAllowsWhatTheServerCalls(t *testing.T) {
	t.Parallel()
	analyze := requireTool(t, "systemd-analyze", "systemd")
	strace := requireTool(t, "strace", "strace")
	allowed := unitSyscallFilter(t, analyze, readUnit(t, unitExecPath))
	// What a one-node run does not reach: dialing a peer, a chain source,
	// a webhook or a relay, and resolving their names (Go's resolver
	// speaks DNS over UDP and TCP itself).
	for _, call := range []string{"connect", "getsockopt", "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown"} {
		if !allowed[call] {
			t.Errorf("the unit's SystemCallFilter= refuses %s, which the server calls to reach other hosts", call)
		}
	}
	server := serverBinary(t)
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			calls := syscallsOfARun(t, strace, server, "--raft-log", store, "--demo")
			var refused []string
			for _, c := range calls {
				if !allowed[c] {
					refused = append(refused, c)
				}
			}
			t.Logf("the server's %d system calls on %s: %s", len(calls), store, strings.Join(calls, " "))
			if len(refused) > 0 {
				t.Errorf("the unit's SystemCallFilter= refuses what the server calls: %s", strings.Join(refused, " "))
			}
		})
	}
}

// unitSyscallFilter returns the system calls the unit's SystemCallFilter=
// lines allow, in order as systemd reads them: a list adds its calls, a
// list after ~ takes them away. Groups (@name) are expanded by
// systemd-analyze syscall-filter, the same tables systemd applies.
func unitSyscallFilter(t *testing.T, analyze, unit string) map[string]bool {
	t.Helper()
	allowed := map[string]bool{}
	lines := 0
	for _, l := range strings.Split(unit, "\n") {
		value, ok := strings.CutPrefix(strings.TrimSpace(l), "SystemCallFilter=")
		if !ok {
			continue
		}
		lines++
		value, deny := strings.CutPrefix(value, "~")
		for _, name := range strings.Fields(value) {
			for _, call := range expandSyscalls(t, analyze, name) {
				allowed[call] = !deny
			}
		}
	}
	if lines == 0 || len(allowed) == 0 {
		t.Fatalf("the unit has no SystemCallFilter= allow list")
	}
	return allowed
}

// expandSyscalls returns the calls a filter entry names: itself, or a
// group's members, groups in it expanded too.
func expandSyscalls(t *testing.T, analyze, name string) []string {
	t.Helper()
	if !strings.HasPrefix(name, "@") {
		return []string{name}
	}
	out := run(t, repoRoot, nil, analyze, "syscall-filter", "--no-pager", name)
	var calls []string
	for _, l := range strings.Split(out, "\n")[1:] { // the first line is the group's name
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		calls = append(calls, expandSyscalls(t, analyze, f[0])...)
	}
	return calls
}

// syscallsOfARun starts the server under strace -f -c on a fresh data
// dir and free loopback ports, waits until it serves, scrapes /metrics,
// stops it with SIGTERM and returns the names of the system calls every
// thread of it made, sorted.
func syscallsOfARun(t *testing.T, strace, server string, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	summary := filepath.Join(dir, "strace.txt")
	token := "deploy-test-admin-token"
	admin := freeAddr(t)
	args = append([]string{"--data", filepath.Join(dir, "data"), "--http", freeAddr(t), "--admin", admin, "--raft", freeAddr(t), "--admin-token", token}, args...)
	cmd := exec.Command(strace, append([]string{"-f", "-c", "-o", summary, "--", server}, args...)...)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill() // strace takes its tracee with it
			<-exited
		}
	})

	waitServing(t, "http://"+admin, exited, &logs)
	req, err := http.NewRequest(http.MethodGet, "http://"+admin+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}

	// strace -f runs the server as its child; SIGTERM goes to the server,
	// and strace ends when it does, writing its summary.
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	if err != nil {
		t.Fatalf("find the server under strace: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(children)))
	if err != nil {
		t.Fatalf("strace's children are %q, not the server alone", children)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("the server under strace, stopped with SIGTERM: %v\n%s", err, logs.String())
	}
	stopped = true
	return straceCalls(t, readFile(t, summary))
}

// waitServing polls the admin listener's /readyz until it answers 200.
func waitServing(t *testing.T, adminURL string, exited <-chan error, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(readyWaitMax)
	for {
		resp, err := http.Get(adminURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the server under strace ended before it served: %v\n%s", err, logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server under strace did not serve within %s\n%s", readyWaitMax, logs)
		}
	}
}

// straceCalls reads the system call names of strace -c's table, whose
// last column is the name, between its two rules.
func straceCalls(t *testing.T, summary string) []string {
	t.Helper()
	var calls []string
	rules := 0
	for _, l := range strings.Split(summary, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case strings.HasPrefix(f[0], "---"):
			rules++
		case rules == 1:
			calls = append(calls, f[len(f)-1])
		}
	}
	if len(calls) == 0 {
		t.Fatalf("no system calls in strace's summary:\n%s", summary)
	}
	slices.Sort(calls)
	return slices.Compact(calls)
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
