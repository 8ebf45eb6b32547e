package system_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The faultinject build of addrwatchd (cmd/addrwatchd/faultinject.go) is
// the fault test's alone: it lets the test put a proxy under every
// connection between two nodes (ADDRWATCH_FAULTINJECT_ROUTES). TestMain's
// ordinary binary, which every other test runs, is built without it, and
// so is every binary `make build` makes.

var faultInject builtOnce

// faultInjectBinary is addrwatchd built with -tags faultinject, by the
// first test that asks.
func faultInjectBinary(t *testing.T) string {
	t.Helper()
	return faultInject.get(t, "addrwatchd-faultinject", "-tags", "faultinject", "github.com/addrwatch/addrwatch/cmd/addrwatchd")
}

// TestOrdinaryBuildIgnoresFaultRoutes: only the faultinject build reads
// the route table. With a malformed table in its environment, that build
// refuses to start and names the variable (so it does read it), while the
// ordinary binary starts and serves; and the ordinary binary does not
// even hold the variable's name.
func TestOrdinaryBuildIgnoresFaultRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	t.Parallel()
	malformed := faultRoutesEnv + "=not-a-route"
	cmd := exec.Command(faultInjectBinary(t), "--data", t.TempDir(), "--http", freeAddr(t), "--admin", freeAddr(t), "--raft", freeAddr(t))
	cmd.Env = append(os.Environ(), malformed)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), faultRoutesEnv) {
		t.Fatalf("the faultinject build with %s: err %v, want a refusal naming the variable:\n%s", malformed, err, out)
	}

	s := &server{t: t, Dir: t.TempDir(), AdminToken: "ordinary-build-token", env: []string{malformed}}
	s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
	s.start()
	t.Cleanup(s.stop)
	if strings.Contains(s.logs.String(), "faultinject") {
		t.Errorf("the ordinary binary mentions fault injection:\n%s", s.logs.String())
	}
	binary, err := os.ReadFile(serverBinary)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(binary, []byte(faultRoutesEnv)) {
		t.Errorf("the ordinary binary holds %q", faultRoutesEnv)
	}
}
