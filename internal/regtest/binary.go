package regtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// buildTimeout bounds `go tool -n btcd`: a first build of btcd and the
// modules it needs takes under a minute on a slow machine; later ones
// are answered from the build cache at once.
const buildTimeout = 5 * time.Minute

var btcdPath struct {
	once sync.Once
	path string
	err  error
}

// btcdBinary is the path of the btcd that go.mod's tool directive pins,
// built on first use (`go tool -n btcd` prints the cached binary's path,
// building it when the cache lacks it).
func btcdBinary() (string, error) {
	btcdPath.once.Do(func() {
		btcdPath.path, btcdPath.err = goToolPath("btcd")
	})
	return btcdPath.path, btcdPath.err
}

func goToolPath(tool string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", tool)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s with `go tool -n %s` (go.mod's tool directive; it needs the Go module proxy the first time): %v\n%s",
			tool, tool, err, strings.TrimSpace(stderr.String()))
	}
	path := strings.TrimSpace(stdout.String())
	if info, err := os.Stat(path); err != nil || info.IsDir() {
		return "", fmt.Errorf("`go tool -n %s` named %q, which is no executable", tool, path)
	}
	return path, nil
}

// errNoMain: a package started a node without calling Main from its
// TestMain (or a program without calling Program from its main). The
// node would then be started through a binary that runs the package's
// tests, or the program, instead of supervising btcd.
var errNoMain = errors.New("regtest: the test package's TestMain must call regtest.Main(m), or a program's main regtest.Program(), before a node can start")
