package system_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The faultinject build of addrwatchd (cmd/addrwatchd/faultinject.go) is
// the fault test's alone: it lets the test put a proxy under every
// connection between two nodes (ADDRWATCH_FAULTINJECT_ROUTES). TestMain's
// ordinary binary, which every other test runs, is built without it, and
// so is every binary `make build` makes.

var faultInject struct {
	once   sync.Once
	binary string
	err    error
	out    []byte
}

// faultInjectBinary builds addrwatchd with -tags faultinject, once, next
// to TestMain's binary (removed with it).
func faultInjectBinary(t *testing.T) string {
	t.Helper()
	faultInject.once.Do(func() {
		bin := filepath.Join(filepath.Dir(serverBinary), "addrwatchd-faultinject")
		faultInject.out, faultInject.err = exec.Command("go", "build", "-tags", "faultinject", "-o", bin, "github.com/addrwatch/addrwatch/cmd/addrwatchd").CombinedOutput()
		faultInject.binary = bin
	})
	if faultInject.err != nil {
		t.Fatalf("go build -tags faultinject: %v\n%s", faultInject.err, faultInject.out)
	}
	return faultInject.binary
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
