//go:build unix

package persistence

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// lockChildDir is set in the environment of the second process that
// TestOpenStoresRefusesASecondProcess starts.
const lockChildDir = "ADDRWATCH_TEST_LOCK_CHILD_DIR"

// TestOpenStoresRefusesASecondProcess holds a WAL data dir open and opens
// it again from another process. The second process is refused at once with ErrInUse; once the first
// closes the stores, it opens.
func TestOpenStoresRefusesASecondProcess(t *testing.T) {
	if dir := os.Getenv(lockChildDir); dir != "" {
		s, err := OpenStores(dir, LogWAL, hclog.NewNullLogger())
		if err != nil {
			fmt.Print(err)
			os.Exit(3)
		}
		s.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	second := func() (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenStoresRefusesASecondProcess$")
		cmd.Env = append(os.Environ(), lockChildDir+"="+dir)
		out, err := cmd.Output()
		return string(out), err
	}
	s, err := OpenStores(dir, LogWAL, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	out, err := second()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || out != ErrInUse.Error() {
		s.Close()
		t.Fatalf("a second process on a data dir in use: %v, %q; want exit 3 with %q", err, out, ErrInUse)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := second(); err != nil {
		t.Fatalf("a second process once the first closed the stores: %v, %q", err, out)
	}
	info, err := os.Stat(dir + "/" + LockFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the lock file: %v, %v; want mode 0600", info, err)
	}
}
