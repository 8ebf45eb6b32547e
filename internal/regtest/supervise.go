package regtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The harness (btcd's integration/rpctest) starts btcd as a plain child
// process and stops it from its TearDown. A test binary that dies
// before that (a panic, go test's -timeout) would leave btcd running
// for good. So the harness is given this test binary as its "btcd": run
// with superviseEnv naming the real btcd, Main starts btcd with the same
// arguments, passes on the harness's interrupt, and kills btcd as soon
// as the test binary that started it is gone.

// superviseEnv names the btcd binary to the supervising copy of the test
// binary. The test process sets it only after its own Main has started,
// so a process that finds it set at start is the supervisor.
const superviseEnv = "ADDRWATCH_REGTEST_BTCD"

// parentPollInterval is how often the supervisor checks that the test
// binary is still there.
const parentPollInterval = 250 * time.Millisecond

// mainCalled records that Main runs this process's tests, or that
// Program made this process a program that starts nodes.
var mainCalled bool

// Main runs the package's tests and then stops the node Shared started,
// if any. Call it from TestMain:
//
//	func TestMain(m *testing.M) { regtest.Main(m) }
//
// In the copy of the test binary that supervises btcd, it supervises
// instead and never runs a test.
func Main(m *testing.M) {
	Supervise()
	os.Exit(Run(m))
}

// Supervise makes this process the supervisor of btcd, and never
// returns, when it is the copy of the test binary that the harness
// started as its btcd. A TestMain that does more than Main calls it
// first, then Run.
func Supervise() {
	if btcd := os.Getenv(superviseEnv); btcd != "" {
		os.Exit(supervise(btcd, os.Args[1:]))
	}
}

// Program is Main for a program that is no test binary (bench's watch
// command): call it first thing in main. Start gives the harness this
// program's own executable as its btcd, so, as in a test binary, the copy
// the harness starts supervises btcd and never returns; in the program
// itself Program only lets Start start nodes. Shared is for tests, so the
// program stops the nodes it started itself.
func Program() {
	Supervise()
	mainCalled = true
}

// Run runs the package's tests, stops the node Shared started, if any,
// and returns the tests' exit code.
func Run(m *testing.M) int {
	mainCalled = true
	code := m.Run()
	stopShared()
	return code
}

// supervise runs btcd with args until it exits, forwarding interrupts to
// it, and kills it when the parent process goes away.
func supervise(btcd string, args []string) int {
	parent := os.Getppid()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	cmd := exec.Command(btcd, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "regtest: starting btcd: %v\n", err)
		return 1
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(parentPollInterval)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err != nil {
				return 1
			}
			return 0
		case sig := <-signals:
			_ = cmd.Process.Signal(sig)
		case <-tick.C:
			if os.Getppid() != parent {
				_ = cmd.Process.Kill()
				<-exited
				removeNodeDir(args)
				return 1
			}
		}
	}
}

// removeNodeDir removes the directory the harness made for the node
// (its --datadir's parent), which the harness would have removed in its
// TearDown. Only a directory under the harness's own base directory
// (os.TempDir()/btcd/rpctest) is removed.
func removeNodeDir(args []string) {
	base := filepath.Join(os.TempDir(), "btcd", "rpctest") + string(filepath.Separator)
	for _, arg := range args {
		dataDir, ok := strings.CutPrefix(arg, "--datadir=")
		if !ok {
			continue
		}
		if nodeDir := filepath.Dir(filepath.Clean(dataDir)); strings.HasPrefix(nodeDir, base) {
			_ = os.RemoveAll(nodeDir)
		}
	}
}
