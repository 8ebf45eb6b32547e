package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the module's root: go test runs a package's tests in its
// own directory.
const repoRoot = ".."

// requireTool returns the path of a command the test needs. A missing one
// fails the test, never skips it: make test installs it first
// (scripts/test-deps.sh names the Debian package).
func requireTool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: make test installs it (scripts/test-deps.sh; on Debian: apt-get install --no-install-recommends %s)", name, debianPackage)
	}
	return path
}

// run runs a command and returns what it printed, both streams together;
// a command that fails fails the test with that output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// builtServer is the static server the unit tests run or point the
// unit at, built once for every test that needs it.
var builtServer struct {
	once sync.Once
	path string
	out  string
	err  error
}

// serverBinary builds cmd/addrwatchd as a release does (no cgo,
// -trimpath), once, into a directory TestMain removes.
func serverBinary(t *testing.T) string {
	t.Helper()
	b := &builtServer
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "addrwatch-deploy-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "addrwatchd")
		b.out, b.err = runErr(repoRoot, append(os.Environ(), "CGO_ENABLED=0"), "go", "build", "-trimpath", "-o", b.path, "./cmd/addrwatchd")
	})
	if b.err != nil {
		t.Fatalf("go build ./cmd/addrwatchd: %v\n%s", b.err, b.out)
	}
	return b.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtServer.path != "" {
		os.RemoveAll(filepath.Dir(builtServer.path))
	}
	os.Exit(code)
}
